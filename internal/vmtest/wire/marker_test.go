package wire

import (
	"maps"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		kind string
		kv   []string
		want string
	}{
		{KindDone, []string{FieldStatus, "pass"}, "VMTEST-DONE status=pass"},
		{KindResult, []string{FieldPkg, "example.com/p", FieldPhase, "test", FieldExit, "0"}, "VMTEST-RESULT pkg=example.com/p phase=test exit=0"},
		{KindError, []string{FieldMsg, `mount bpf: "no" device`}, `VMTEST-ERROR msg="mount bpf: \"no\" device"`},
		{KindBooted, []string{FieldKernel, ""}, `VMTEST-BOOTED kernel=""`},
	} {
		if got := Format(tt.kind, tt.kv...); got != tt.want {
			t.Errorf("Format(%s, %q) = %q, want %q", tt.kind, tt.kv, got, tt.want)
		}
	}
}

func TestParseMarker(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		ok         bool
		kind       string
		fields     map[string]string
	}{
		{"plain", "VMTEST-RESULT pkg=a/b phase=bench exit=2 seconds=1.5", true, KindResult,
			map[string]string{"pkg": "a/b", "phase": "bench", "exit": "2", "seconds": "1.5"}},
		{"after other output", "ok  \tsomething[   12.3] VMTEST-DONE status=fail\r", true, KindDone,
			map[string]string{"status": "fail"}},
		{"quoted", `VMTEST-NOTE msg="mount tracefs on /sys/kernel/tracing: no such device"`, true, KindNote,
			map[string]string{"msg": "mount tracefs on /sys/kernel/tracing: no such device"}},
		{"no fields", "VMTEST-DONE", true, KindDone, map[string]string{}},
		{"no marker", "--- PASS: TestX (0.00s)", false, "", nil},
		{"unknown kind", "VMTEST-BOGUS a=b", false, "", nil},
		{"cut in a quote", `VMTEST-ERROR msg="mount bp`, false, "", nil},
		{"cut in a name", "VMTEST-RESULT pkg=a exi", false, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := ParseMarker(tt.line)
			if ok != tt.ok {
				t.Fatalf("ParseMarker(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			}
			if !ok {
				return
			}
			if m.Kind != tt.kind || !maps.Equal(m.Fields, tt.fields) {
				t.Errorf("ParseMarker(%q) = %s %v, want %s %v", tt.line, m.Kind, m.Fields, tt.kind, tt.fields)
			}
		})
	}
}

func TestMarkerRoundTrip(t *testing.T) {
	m := Marker{Kind: KindResult, Fields: map[string]string{
		FieldPkg: "github.com/x/y", FieldExit: "-1", FieldWhy: "signal:segmentation fault", FieldMsg: `a "b" = c`,
	}}
	got, ok := ParseMarker(m.String())
	if !ok || got.Kind != m.Kind || !maps.Equal(got.Fields, m.Fields) {
		t.Errorf("round trip of %q gave %v %v", m.String(), got, ok)
	}
}

func TestQEMUStatus(t *testing.T) {
	for _, tt := range []struct {
		v    byte
		want int
	}{
		{ExitPass, 33},
		{ExitFail, 35},
		{ExitInitError, 37},
		{0, 1},
	} {
		if got := QEMUStatus(tt.v); got != tt.want {
			t.Errorf("QEMUStatus(%#x) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
