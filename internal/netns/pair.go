//go:build linux

// Package netns creates a pair of network namespaces joined by a veth link,
// for benchmarks and tests that send real traffic without touching the
// host's network, and runs code inside either namespace.
//
// The namespaces are named, made with iproute2's ip(8) as
// /run/netns/<name>, so they can be inspected while a benchmark runs
// (ip netns exec NAME ...) and removed by name if a process dies before
// it cleans up. NewPair removes namespaces left behind by dead processes.
//
// Addresses come from 198.18.0.0/15, the range RFC 2544 sets aside for
// benchmarking network devices: traffic between them never leaves the
// two namespaces.
package netns

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// namePrefix starts the name of every namespace this package makes,
// followed by the creating process's id, so stale ones can be found.
const namePrefix = "ebpfzc-"

// netnsDir is where ip(8) bind-mounts named namespaces.
const netnsDir = "/run/netns"

// End is one side of a Pair: a namespace and its veth interface.
type End struct {
	// Namespace is the namespace's name under /run/netns.
	Namespace string
	// Interface is the veth interface's name inside the namespace.
	Interface string
	// Index is the interface's index inside the namespace.
	Index int
	// Addr is the interface's IPv4 address.
	Addr netip.Addr
	// MAC is the interface's hardware address.
	MAC net.HardwareAddr
}

// Pair is two namespaces, A and B, joined by a veth link. Traffic from
// A's address to B's goes over the link and nowhere else.
type Pair struct {
	A, B End
}

var pairCount atomic.Uint32

// Available reports why this process cannot make namespaces, or nil if
// it can: it needs ip(8) and CAP_SYS_ADMIN.
func Available() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("netns: ip(8) from iproute2 is not installed: %w", err)
	}
	if unix.Geteuid() != 0 {
		return errors.New("netns: not root: creating namespaces needs CAP_SYS_ADMIN")
	}
	return nil
}

// NewPair creates two namespaces joined by a veth link, with the link up,
// addresses 198.18.<n>.1 (A) and 198.18.<n>.2 (B) on a /30, and permanent
// neighbour entries so no ARP exchange precedes or interrupts the traffic.
// Close removes both namespaces and with them the link.
func NewPair() (*Pair, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	removeStale()
	n := pairCount.Add(1)
	base := fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), n)
	subnet := byte(n % 64 * 4)
	p := &Pair{
		A: End{Namespace: base + "-a", Interface: "veth0", Addr: netip.AddrFrom4([4]byte{198, 18, subnet, 1})},
		B: End{Namespace: base + "-b", Interface: "veth1", Addr: netip.AddrFrom4([4]byte{198, 18, subnet, 2})},
	}
	if err := p.setup(); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

func (p *Pair) setup() error {
	a, b := &p.A, &p.B
	for _, e := range []*End{a, b} {
		if err := ip("netns", "add", e.Namespace); err != nil {
			return err
		}
		// No IPv6: router and neighbour solicitations would be packets
		// nobody sent on purpose, seen by whatever watches the link.
		if err := e.Do(disableIPv6); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"-n", a.Namespace, "link", "add", a.Interface, "type", "veth", "peer", "name", b.Interface, "netns", b.Namespace},
		{"-n", a.Namespace, "addr", "add", a.Addr.String() + "/30", "dev", a.Interface},
		{"-n", b.Namespace, "addr", "add", b.Addr.String() + "/30", "dev", b.Interface},
		{"-n", a.Namespace, "link", "set", "lo", "up"},
		{"-n", b.Namespace, "link", "set", "lo", "up"},
		{"-n", a.Namespace, "link", "set", a.Interface, "up"},
		{"-n", b.Namespace, "link", "set", b.Interface, "up"},
	}
	for _, args := range steps {
		if err := ip(args...); err != nil {
			return err
		}
	}
	for _, e := range []*End{a, b} {
		if err := e.Do(e.lookup); err != nil {
			return err
		}
	}
	neigh := [][]string{
		{"-n", a.Namespace, "neigh", "replace", b.Addr.String(), "lladdr", b.MAC.String(), "dev", a.Interface, "nud", "permanent"},
		{"-n", b.Namespace, "neigh", "replace", a.Addr.String(), "lladdr", a.MAC.String(), "dev", b.Interface, "nud", "permanent"},
	}
	for _, args := range neigh {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// disableIPv6 turns IPv6 off for interfaces created later in the calling
// thread's namespace (/proc/sys/net belongs to the namespace of whoever
// opens it).
func disableIPv6() error {
	for _, conf := range []string{"all", "default"} {
		path := "/proc/sys/net/ipv6/conf/" + conf + "/disable_ipv6"
		if err := os.WriteFile(path, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("netns: %w", err)
		}
	}
	return nil
}

// lookup fills in the interface's index and MAC; it runs inside the
// namespace.
func (e *End) lookup() error {
	ifc, err := net.InterfaceByName(e.Interface)
	if err != nil {
		return fmt.Errorf("netns: %s in %s: %w", e.Interface, e.Namespace, err)
	}
	e.Index, e.MAC = ifc.Index, ifc.HardwareAddr
	return nil
}

// Close removes both namespaces, which destroys the veth link. It is safe
// to call on a partly built Pair and more than once.
func (p *Pair) Close() error {
	var errs []error
	for _, name := range []string{p.A.Namespace, p.B.Namespace} {
		if exists(name) {
			errs = append(errs, ip("netns", "del", name))
		}
	}
	return errors.Join(errs...)
}

// LinkStats are an interface's packet and drop counters.
type LinkStats struct {
	RxPackets, RxDropped, TxPackets, TxDropped uint64
}

// Stats reads the interface's counters (ip -s link, in the namespace).
func (e *End) Stats() (LinkStats, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("ip", "-n", e.Namespace, "-j", "-s", "link", "show", "dev", e.Interface)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return LinkStats{}, fmt.Errorf("netns: stats of %s: %w: %s", e.Interface, err, strings.TrimSpace(stderr.String()))
	}
	var links []struct {
		Stats struct {
			Rx struct{ Packets, Dropped uint64 }
			Tx struct{ Packets, Dropped uint64 }
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return LinkStats{}, fmt.Errorf("netns: stats of %s: unexpected output %q: %v", e.Interface, out, err)
	}
	st := links[0].Stats
	return LinkStats{RxPackets: st.Rx.Packets, RxDropped: st.Rx.Dropped, TxPackets: st.Tx.Packets, TxDropped: st.Tx.Dropped}, nil
}

// Exists reports whether the namespace is still there.
func (e *End) Exists() bool { return exists(e.Namespace) }

func exists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}

// Enter moves the calling goroutine's thread into the namespace, locking
// the goroutine to it for good: the thread must never serve another
// goroutine, which would then run in the wrong namespace, so the caller
// must not call runtime.UnlockOSThread; the runtime ends the thread when
// the goroutine exits.
func (e *End) Enter() error {
	runtime.LockOSThread()
	f, err := os.Open(filepath.Join(netnsDir, e.Namespace))
	if err != nil {
		return fmt.Errorf("netns: open %s: %w", e.Namespace, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("netns: setns %s: %w", e.Namespace, err)
	}
	return nil
}

// Do runs fn on a new thread inside the namespace and waits for it. The
// thread is thrown away afterwards. Sockets, links and interface indexes
// fn makes or looks up belong to the namespace.
func (e *End) Do(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		// No UnlockOSThread: the thread dies with the goroutine.
		if err := e.Enter(); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

// ip runs ip(8) with args.
func ip(args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("ip", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netns: ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Owned lists the namespaces this process made and has not removed yet,
// so tests can check that nothing is left behind.
func Owned() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	prefix := fmt.Sprintf("%s%d-", namePrefix, os.Getpid())
	var names []string
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), prefix) {
			names = append(names, ent.Name())
		}
	}
	return names, nil
}

// removeStale deletes namespaces this package made in processes that no
// longer run, so an interrupted benchmark does not leave them behind.
func removeStale() {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return
	}
	for _, ent := range entries {
		rest, ok := strings.CutPrefix(ent.Name(), namePrefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if unix.Kill(pid, 0) == nil || errors.Is(unix.Kill(pid, 0), unix.EPERM) {
			continue // still running
		}
		ip("netns", "del", ent.Name())
	}
}
