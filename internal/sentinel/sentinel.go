// Package sentinel makes sentinel errors that keep their own identity and
// also match a more general error with errors.Is.
package sentinel

// Error is a sentinel error: errors.Is(err, e) holds only for e itself, and
// errors.Is(e, e.Unwrap()) holds too.
type Error struct {
	msg string
	is  error
}

// New returns a sentinel with the message msg that also matches is.
func New(msg string, is error) *Error { return &Error{msg: msg, is: is} }

// Error returns the message, without the general error's.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the general error e also matches.
func (e *Error) Unwrap() error { return e.is }
