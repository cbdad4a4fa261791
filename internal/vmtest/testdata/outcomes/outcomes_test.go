// Package outcomes holds the tests that TestVMOutcomes boots to make a
// test VM fail, panic and hang on purpose. It lives under testdata so
// that `go test ./...` never picks it up, and every test refuses to act
// outside a test VM started for that purpose.
package outcomes

import (
	"os"
	"testing"
	"time"
)

// armed says this process is a test binary started by the vminit of a
// VM whose plan asks for the fixtures (VMTEST_OUTCOMES=1): the plan file
// exists only in a test VM's initramfs, and only the init is PID 1 there.
func armed(t *testing.T) {
	t.Helper()
	if os.Getenv("VMTEST_OUTCOMES") != "1" || os.Getppid() != 1 {
		t.Skip("outcome fixture: only acts inside a test VM that asks for it")
	}
	if _, err := os.Stat("/vmtest/plan.json"); err != nil {
		t.Skip("outcome fixture: only acts inside a test VM that asks for it")
	}
}

func TestFail(t *testing.T) {
	armed(t)
	t.Fatal("this test fails on purpose")
}

func TestPanic(t *testing.T) {
	armed(t)
	// "c" crashes the kernel on purpose (Documentation/admin-guide/sysrq.rst);
	// the write through /proc works whatever the sysrq sysctl allows.
	if err := os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0); err != nil {
		t.Fatalf("trigger a crash: %v", err)
	}
	time.Sleep(time.Minute)
	t.Fatal("the kernel did not crash")
}

func TestHang(t *testing.T) {
	armed(t)
	time.Sleep(time.Hour)
}
