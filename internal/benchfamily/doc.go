//go:build linux

// Package benchfamily describes each benchmark family make runs, once:
// its go test commands, how many rounds, its settings (knobs) with their
// defaults, its benchstat tables, its plots and its summary. Everything
// else is derived from the description: benchrun's plan, estimate and
// commands (internal/cmd/benchrun), the summary (internal/cmd/benchsummary),
// the tables and plots, the Makefile's bench-% targets and lint's check of
// their recipes, and docs/results.md's table of targets (a test writes it
// and checks the table of pages).
//
// A family is a file of this package, named for it, holding one
// declaration,
//
//	var _ = register(&Family{Name: "<family>", ...})
//
// and make bench-<family>, bench-<family>-tables and bench-<family>-plots
// run it. Its benchmarks read their knobs by name with [Lookup], or
// [MustInt] and the like, so that a default is written only here.
//
// The knobs are parsed by internal/benchknob, which fails with the
// variable's name on a malformed value; [Family.Check] parses them all
// before a run starts.
package benchfamily
