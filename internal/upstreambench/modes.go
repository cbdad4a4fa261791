//go:build linux

package upstreambench

import (
	"fmt"
	"strings"
)

// Mode is one way of draining the ring that the benchmark may run, and what
// it needs: names from cilium/ebpf's ringbuf package (upstream modes) or
// our module compiling against the side (our modes).
type Mode struct {
	// Name is the mode as it appears in the benchmark (mode=Name); the
	// modes shared with ringbuf's BenchmarkRead keep its names.
	Name string
	// What says what the mode does, for the output.
	What string
	// Needs lists the ringbuf names an upstream mode uses.
	Needs []string
	// Ours marks a mode of our reader, github.com/ebpf-zc/ebpf/ringbuf.
	Ours bool
}

// readIntoNeeds is what the mode every comparison needs uses.
var readIntoNeeds = []string{"NewReader", "Reader.ReadInto", "Reader.SetDeadline", "Reader.Close", "Record.RawSample"}

// leaseNeeds is what both Lease modes use.
var leaseNeeds = []string{"NewRawReader", "RawReader.WithLease", "RawReader.SetDeadline", "RawReader.Close", "Lease.ReadSample", "Lease.Commit"}

// Modes are every mode the benchmark knows, in the order it runs them.
// The first is required: a side without it cannot be compared at all.
var Modes = []Mode{
	{Name: "upstream", What: "cilium/ebpf Reader.ReadInto, a copy per record", Needs: readIntoNeeds},
	{Name: "lease-batch", What: "cilium/ebpf RawReader, Lease.ReadSample, one Commit per drain", Needs: leaseNeeds},
	{Name: "lease-each", What: "cilium/ebpf RawReader, Lease.ReadSample, Commit after every record", Needs: leaseNeeds},
	{Name: "copy", What: "our Reader.ReadInto, a copy per record", Ours: true},
	{Name: "peek", What: "our PeekInto and Consume", Ours: true},
	{Name: "records", What: "our Records iterator", Ours: true},
	{Name: "batch", What: "our Batches iterator, each batch's Samples inlined", Ours: true},
}

// Plan is what one side runs and what it lacks.
type Plan struct {
	Side *Side
	// API is what the side's ringbuf package exports.
	API API
	// Run are the modes the side's benchmark runs, in Modes order.
	Run []Mode
	// Absent maps each mode the side lacks to why.
	Absent map[string]string
}

// NewPlan chooses the modes side can run from its detected api; ours
// says whether our module compiles against side, and oursErr why not.
// It fails if side lacks what the first mode needs, naming the names.
func NewPlan(side *Side, api API, ours bool, oursErr string) (*Plan, error) {
	plan := &Plan{Side: side, API: api, Absent: map[string]string{}}
	for i, mode := range Modes {
		switch missing := api.Missing(mode.Needs); {
		case len(missing) > 0 && i == 0:
			return nil, fmt.Errorf("cilium/ebpf at %s: ringbuf lacks %s, which the %s mode every comparison needs uses",
				side.Label, qualify(missing), mode.Name)
		case len(missing) > 0:
			plan.Absent[mode.Name] = "ringbuf has no " + qualify(missing)
		case mode.Ours && !ours:
			plan.Absent[mode.Name] = "our module does not compile against it: " + oursErr
		default:
			plan.Run = append(plan.Run, mode)
		}
	}
	return plan, nil
}

// Has reports whether the plan runs the named mode.
func (p *Plan) Has(name string) bool {
	for _, mode := range p.Run {
		if mode.Name == name {
			return true
		}
	}
	return false
}

// qualify writes ringbuf names as Go code names them: ringbuf.Reader.ReadInto.
func qualify(names []string) string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = "ringbuf." + name
	}
	return strings.Join(out, ", ")
}
