//go:build linux

package benchfamily

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite docs/results.md's generated table of the families")

const (
	resultsDoc    = "../../docs/results.md"
	tableStart    = "<!-- The families: generated from internal/benchfamily by go test ./internal/benchfamily -run TestResultsDoc -update -->"
	tableEnd      = "<!-- End of the families. -->"
	referenceCPUs = "1,2" // RINGS_PRODUCERS on the reference host, 2 vCPUs
)

// familiesTable is docs/results.md's table of the families: each target,
// what it measures, its rounds, and the results and time benchrun plans
// at the defaults on the reference host (2 vCPUs, the libbpf peer built).
func familiesTable(t *testing.T) string {
	t.Helper()
	clearKnobs(t)
	t.Setenv("RINGS_PRODUCERS", referenceCPUs)
	var b strings.Builder
	fmt.Fprintln(&b, "| command | what | rounds | results | minutes |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- |")
	for _, f := range All() {
		// SetTargetValues sets what make sets: clearKnobs has registered
		// every knob with t.Setenv, so the test's end restores them.
		if err := f.SetTargetValues(); err != nil {
			t.Fatal(err)
		}
		rounds, err := f.RoundsNow()
		if err != nil {
			t.Fatal(err)
		}
		pl, err := f.Plan(true, rounds)
		if err != nil {
			t.Fatal(err)
		}
		count := "`COUNT`"
		if f.RoundsEnv != "" {
			count = "`" + f.RoundsEnv + "`"
		}
		roundsText := fmt.Sprintf("%d (%s", rounds, count)
		if f.FullRounds > 0 && f.FullRounds != f.Rounds {
			roundsText += fmt.Sprintf("; %d with `FULL=1`", f.FullRounds)
		}
		roundsText += ")"
		minutes := max(1, int((pl.Cost+30*time.Second)/time.Minute))
		fmt.Fprintf(&b, "| `make %s` | %s ([%s](%s)) | %s | %d | about %d |\n",
			f.Target(), f.What, f.Page, f.Page, roundsText, pl.Results, minutes)
	}
	return b.String()
}

// TestResultsDoc checks docs/results.md against the descriptions: its
// table of the families is the one familiesTable makes (-update writes
// it), and its table of pages links each family's page in a row that
// names the family's target.
func TestResultsDoc(t *testing.T) {
	needCheckout(t)
	data, err := os.ReadFile(resultsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	before, rest, ok := strings.Cut(doc, tableStart+"\n")
	if !ok {
		t.Fatalf("%s has no line %q", resultsDoc, tableStart)
	}
	table, after, ok := strings.Cut(rest, tableEnd)
	if !ok {
		t.Fatalf("%s has no line %q", resultsDoc, tableEnd)
	}
	want := familiesTable(t)
	if *update {
		if err := os.WriteFile(resultsDoc, []byte(before+tableStart+"\n"+want+tableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if table != want {
		t.Errorf("%s's table of the families is out of date (go test ./internal/benchfamily -run TestResultsDoc -update):\n%s\nwant:\n%s", resultsDoc, table, want)
	}
	for _, f := range All() {
		found := false
		for line := range strings.Lines(before) {
			if strings.HasPrefix(line, "| [") && strings.Contains(line, "]("+f.Page+")") {
				found = true
				if !strings.Contains(line, "`make "+f.Target()) {
					t.Errorf("%s: the row of %s does not name make %s: %s", resultsDoc, f.Page, f.Target(), line)
				}
			}
		}
		if !found {
			t.Errorf("%s: no row of the pages table links %s", resultsDoc, f.Page)
		}
	}
}
