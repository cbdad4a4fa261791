package wire

import (
	"sort"
	"strconv"
	"strings"
)

// MarkerPrefix starts every line the guest init prints for the host to
// read. Kernel messages or a test's unterminated last line may share the
// console line, so parsers look for the prefix anywhere in the line.
const MarkerPrefix = "VMTEST-"

// Kinds of marker lines.
const (
	// KindBooted is printed once the init has mounted its file systems,
	// which is the end of the boot for the runner's timing.
	KindBooted = "BOOTED"
	// KindBegin opens the output of one step.
	KindBegin = "BEGIN"
	// KindResult closes the output of one step and carries its exit code.
	KindResult = "RESULT"
	// KindDone is the last marker: every step ran.
	KindDone = "DONE"
	// KindError reports a problem of the init itself.
	KindError = "ERROR"
	// KindNote carries information that is neither a result nor an error,
	// such as an optional file system that could not be mounted.
	KindNote = "NOTE"
)

// Field names used in markers.
const (
	// FieldKernel is the host's name for the kernel (BOOTED).
	FieldKernel = "kernel"
	// FieldRelease is the running kernel's uname -r (BOOTED).
	FieldRelease = "release"
	// FieldPkg is the import path of a step's package (BEGIN, RESULT).
	FieldPkg = "pkg"
	// FieldPhase is a step's Phase (BEGIN, RESULT).
	FieldPhase = "phase"
	// FieldExit is a step's exit code, -1 when it did not exit (RESULT).
	FieldExit = "exit"
	// FieldSeconds is how long a step ran (RESULT).
	FieldSeconds = "seconds"
	// FieldWhy says why a step did not simply exit: "timeout",
	// "signal:NAME" or "start" (RESULT).
	FieldWhy = "why"
	// FieldStatus is "pass" or "fail" (DONE).
	FieldStatus = "status"
	// FieldMsg is free text (ERROR, NOTE).
	FieldMsg = "msg"
)

// Marker is one parsed marker line.
type Marker struct {
	// Kind is one of the Kind constants.
	Kind string
	// Fields holds the name=value pairs after the kind.
	Fields map[string]string
}

// Format renders a marker line (without newline). kv holds field names
// and values in turn; values with spaces or quotes are quoted.
func Format(kind string, kv ...string) string {
	var b strings.Builder
	b.WriteString(MarkerPrefix)
	b.WriteString(kind)
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteByte(' ')
		b.WriteString(kv[i])
		b.WriteByte('=')
		v := kv[i+1]
		if v == "" || strings.ContainsAny(v, " \t\"=") {
			v = strconv.Quote(v)
		}
		b.WriteString(v)
	}
	return b.String()
}

// String renders m the way Format does, fields sorted by name.
func (m Marker) String() string {
	keys := make([]string, 0, len(m.Fields))
	for k := range m.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		kv = append(kv, k, m.Fields[k])
	}
	return Format(m.Kind, kv...)
}

// ParseMarker finds a marker in a console line. It reports false when
// the line holds none, or when the marker is cut short (serial output
// lost at power-off), so a damaged marker is never taken for a result.
func ParseMarker(line string) (Marker, bool) {
	i := strings.Index(line, MarkerPrefix)
	if i < 0 {
		return Marker{}, false
	}
	rest := strings.TrimRight(line[i+len(MarkerPrefix):], "\r\n")
	kind, rest, _ := strings.Cut(rest, " ")
	switch kind {
	case KindBooted, KindBegin, KindResult, KindDone, KindError, KindNote:
	default:
		return Marker{}, false
	}
	m := Marker{Kind: kind, Fields: map[string]string{}}
	for rest = strings.TrimLeft(rest, " "); rest != ""; rest = strings.TrimLeft(rest, " ") {
		k, after, ok := strings.Cut(rest, "=")
		if !ok || k == "" || strings.Contains(k, " ") {
			return Marker{}, false
		}
		var v string
		if strings.HasPrefix(after, `"`) {
			q, err := strconv.QuotedPrefix(after)
			if err != nil {
				return Marker{}, false
			}
			v, _ = strconv.Unquote(q)
			rest = after[len(q):]
		} else {
			v, rest, _ = strings.Cut(after, " ")
		}
		m.Fields[k] = v
	}
	return m, true
}
