package ringmodel

// The benchmark results Project reads: BenchmarkRings rows named
// layout=.../producers=N/size=.../flags=..., each reporting UnitPerEvent.
const (
	// Benchmark is the name of the benchmark Project reads.
	Benchmark = "Rings"
	// UnitPerEvent is the producer's ns per event.
	UnitPerEvent = "ns/event"
	// UnitRate is the events all producers place together per second
	// of their CPU time, in millions: producers / UnitPerEvent.
	UnitRate = "Mevents/s"
	// ProjectionSuffix marks a projected series: layout=shared becomes
	// layout=shared-projection, so plots and tables never mix the two.
	ProjectionSuffix = "-projection"
)
