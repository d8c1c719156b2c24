//go:build linux

package capture

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/event"
	"vigil/internal/testenv"
)

// countOpens counts open events whose path starts with prefix, by access.
func countOpens(r *Result, prefix string) map[string]int {
	out := map[string]int{}
	for _, ev := range r.Events {
		if ev.Kind == event.KindOpen && strings.HasPrefix(string(ev.Open.Path()), prefix) {
			out[ev.Open.Access]++
		}
	}
	return out
}

func TestManyFilesNotDeduplicated(t *testing.T) {
	testenv.RequireRoot(t)
	const n, conc = 10000, 4
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "f")
	if err := helper(t, cg, "files", dir, "f", fmt.Sprint(n), fmt.Sprint(conc)).Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	checkComplete(t, r)
	got := countOpens(r, prefix)
	if got[event.AccessWrite] != n || got[event.AccessRead] != n || len(got) != 2 {
		t.Errorf("opens under %s by access = %v, want %d write and %d read", prefix, got, n, n)
	}
	// Each file was created once and read once: no two events alike.
	seen := map[string]int{}
	for _, ev := range r.Events {
		if ev.Kind == event.KindOpen && strings.HasPrefix(string(ev.Open.Path()), prefix) {
			seen[string(ev.Open.Path())]++
		}
	}
	for p, k := range seen {
		if k != 2 {
			t.Fatalf("%s opened %d times in the capture, want 2", p, k)
		}
	}
	t.Logf("events=%d emitted=%v", len(r.Events), r.Emitted)
}

func TestTinyRingCountsDrops(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 4096)
	// Paths of about 1,800 bytes: two records fill the ring, so the
	// reader cannot keep up however idle the machine is.
	dir := t.TempDir()
	for i := 0; i < 7; i++ {
		dir = filepath.Join(dir, strings.Repeat(string(rune('a'+i)), 250))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := helper(t, cg, "files", dir, "f", "5000", "4").Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	if r.Drops[event.KindOpen] == 0 || r.RingFull[event.KindOpen] == 0 {
		t.Errorf("drops = %v with a 4 KiB ring under 10,000 opens, want open drops", r.Drops)
	}
	if !r.DrainProven {
		t.Errorf("drain not proven: %s", r.DrainDetail)
	}
	if uint64(len(r.Events)) != totalEmitted(r) || r.Records != totalEmitted(r) {
		t.Errorf("read %d records (%d events), kernel emitted %d", r.Records, len(r.Events), totalEmitted(r))
	}
	opens := countOpens(r, dir)
	seenPlusDropped := uint64(opens[event.AccessRead]+opens[event.AccessWrite]) + r.Drops[event.KindOpen]
	if seenPlusDropped < 10000 {
		t.Errorf("captured %v + dropped %d opens < the 10000 performed", opens, r.Drops[event.KindOpen])
	}
	for _, ev := range r.Events {
		if ev.Kind == event.KindOpen && strings.HasPrefix(string(ev.Open.Path()), dir) && (ev.Open.File == nil || ev.Open.File.Truncated || len(ev.Open.Path()) < len(dir)+7) {
			t.Fatalf("long path mangled: %+v", ev.Open)
		}
	}
	t.Logf("path bytes=%d events=%d drops=%v emitted=%v", len(dir)+7, len(r.Events), r.Drops, r.Emitted)
}

func TestIsolation(t *testing.T) {
	testenv.RequireRoot(t)
	const n = 500
	cgA, cgB := testCgroup(t), testCgroup(t)
	capA, capB := openCapture(t, cgA, 0), openCapture(t, cgB, 0)
	dir := t.TempDir()
	cmds := map[string]interface{ Run() error }{
		"a":       helper(t, cgA, "files", dir, "a", fmt.Sprint(n), "2"),
		"b":       helper(t, cgB, "files", dir, "b", fmt.Sprint(n), "2"),
		"outside": helper(t, "", "files", dir, "outside", fmt.Sprint(n), "2"),
	}
	errs := make(chan error, len(cmds))
	for _, cmd := range cmds {
		go func() { errs <- cmd.Run() }()
	}
	for range cmds {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rA, rB := finish(t, capA, cgA), finish(t, capB, cgB)
	for name, tc := range map[string]struct {
		r          *Result
		own, other string
		cgID       uint64
	}{
		"A": {rA, "a", "b", capA.SessionCgroupID()},
		"B": {rB, "b", "a", capB.SessionCgroupID()},
	} {
		checkComplete(t, tc.r)
		own := countOpens(tc.r, filepath.Join(dir, tc.own))
		if own[event.AccessWrite] != n || own[event.AccessRead] != n {
			t.Errorf("capture %s: own opens %v, want %d+%d", name, own, n, n)
		}
		for _, foreign := range []string{tc.other, "outside"} {
			if got := countOpens(tc.r, filepath.Join(dir, foreign)); len(got) != 0 {
				t.Errorf("capture %s saw %v opens of %q files", name, got, foreign)
			}
		}
		for _, ev := range tc.r.Events {
			if ev.CgroupID != tc.cgID {
				t.Errorf("capture %s: event from cgroup %d", name, ev.CgroupID)
				break
			}
		}
	}
}

func TestOpenat2AndConnect(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	// A port that was just free: nothing listens on it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	target := filepath.Join(dir, "via-openat2")
	sock := filepath.Join(dir, "missing.sock")
	if err := helper(t, cg, "openat2", target).Run(); err != nil {
		t.Fatal(err)
	}
	if err := helper(t, cg, "connect", fmt.Sprint(port), sock).Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	checkComplete(t, r)

	var o2 *event.Open
	conns := map[string]*event.Net{}
	for _, ev := range r.Events {
		if ev.Kind == event.KindOpen && string(ev.Open.Path()) == target {
			o2 = ev.Open
		}
		if ev.Kind == event.KindConnect {
			conns[ev.Net.Family] = ev.Net
		}
	}
	if o2 == nil {
		t.Fatalf("no open event for %s", target)
	}
	if o2.Syscall != "openat2" || o2.Access != event.AccessWrite || !o2.Create || o2.Truncate || o2.Mode != 0o640 || o2.Ret < 0 || o2.Dirfd != -100 {
		t.Errorf("openat2 event = %+v", *o2)
	}
	const econnrefused, enoent = -111, -2
	// A refused connect has no peer in the socket: the address is the
	// caller's, and says so.
	if v4 := conns["inet"]; v4 == nil || v4.Addr != "127.0.0.1" || int(v4.Port) != port || v4.Ret != econnrefused || v4.AddrFrom != "caller" {
		t.Errorf("inet connect = %+v, want 127.0.0.1:%d refused", v4, port)
	}
	if v6 := conns["inet6"]; v6 == nil || v6.Addr != "::1" || int(v6.Port) != port || v6.Ret != econnrefused {
		t.Errorf("inet6 connect = %+v, want [::1]:%d refused", v6, port)
	}
	if u := conns["unix"]; u == nil || string(u.Addr) != sock || u.Ret != enoent {
		t.Errorf("unix connect = %+v, want %s ENOENT", u, sock)
	}
}

// mkdirDeep creates, below root, a relative path of exactly n bytes made of
// 250-byte directory names and a final file, and returns it. The absolute
// path would exceed PATH_MAX, so each level is created relative to the
// previous one.
func mkdirDeep(t *testing.T, root string, n int) string {
	t.Helper()
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for i := 0; n-len(strings.Join(parts, "/")) > 251; i++ {
		name := strings.Repeat(string(rune('a'+i)), 250)
		parts = append(parts, name)
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	defer unix.Close(fd)
	file := strings.Repeat("f", n-len(strings.Join(parts, "/"))-1)
	// A script, so that the path can also be executed.
	f, err := unix.Openat(fd, file, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = unix.Write(f, []byte("#!/bin/true\n"))
	unix.Close(f)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(append(parts, file), "/")
	if len(p) != n {
		t.Fatalf("built a path of %d bytes, want %d", len(p), n)
	}
	return p
}

// TestStringLimits: a name of exactly PATH_MAX-1 bytes (the longest the
// kernel accepts) is recorded whole; a longer name, a resolved path past
// the capture's 4096 bytes and an argument list past its 4096 bytes are
// clipped, flagged where they are and counted as read faults, never passed
// off as whole.
func TestStringLimits(t *testing.T) {
	testenv.RequireRoot(t)
	root := t.TempDir()
	exact := mkdirDeep(t, root, 4095)
	tooLong := exact + "/x"
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	for _, p := range []string{exact, tooLong} {
		cmd := command(t, cg, "/bin/cat", p)
		cmd.Dir = root
		cmd.Stderr = nil
		cmd.Run() // the second fails with ENAMETOOLONG
	}
	cmd := command(t, cg, "/bin/true")
	cmd.Args[0] = strings.Repeat("v", 5000)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	var gotExact, gotLong, gotExec bool
	var cut uint64
	for _, ev := range r.Events {
		o := ev.Open
		switch {
		case ev.Kind == event.KindOpen && string(o.Name.Requested) == exact && o.Ret >= 0:
			gotExact = true
			// root + the name is longer than the capture keeps.
			if o.Name.Truncated || o.File == nil || !o.File.Truncated || !strings.HasSuffix(string(o.File.Path), exact[len(exact)-300:]) {
				t.Errorf("open of a %d-byte name: %+v", len(exact), o)
			}
		case ev.Kind == event.KindOpen && o.Ret == -int64(unix.ENAMETOOLONG):
			gotLong = true
			if !o.Name.Truncated || len(o.Name.Requested) != 4096 || !strings.HasPrefix(tooLong, string(o.Name.Requested)) {
				t.Errorf("open of a %d-byte name not flagged truncated, or not its first 4096 bytes: truncated=%v len=%d", len(tooLong), o.Name.Truncated, len(o.Name.Requested))
			}
		case ev.Kind == event.KindExec && ev.Exec.File.Path == "/usr/bin/true":
			gotExec = true
			if !ev.Exec.ArgvTruncated || len(ev.Exec.Argv) != 1 || len(ev.Exec.Argv[0]) != 4096 || ev.Exec.Argc != 1 {
				t.Errorf("argv of 5000 bytes: truncated=%v argc=%d, %d args, first %d bytes", ev.Exec.ArgvTruncated, ev.Exec.Argc, len(ev.Exec.Argv), len(ev.Exec.Argv[0]))
			}
		}
		if ev.Open != nil && (ev.Open.Name.Truncated || ev.Open.File != nil && ev.Open.File.Truncated) || ev.Exec != nil && ev.Exec.ArgvTruncated {
			cut++
		}
	}
	if !gotExact || !gotLong || !gotExec {
		t.Fatalf("events missing: exact name %v, long name %v, exec %v", gotExact, gotLong, gotExec)
	}
	if r.ReadFaults != cut || cut < 3 {
		t.Errorf("read faults %d, events with a clipped part %d (want >= 3: the long resolved path, the long name, the long argv)", r.ReadFaults, cut)
	}
}
