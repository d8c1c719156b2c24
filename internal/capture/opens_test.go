//go:build linux

package capture

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// countOpens counts open events whose path starts with prefix, by access.
func countOpens(r *Result, prefix string) map[string]int {
	out := map[string]int{}
	for _, ev := range r.Events {
		if ev.Kind == wire.KindOpen && strings.HasPrefix(string(ev.Open.Path()), prefix) {
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
	if got[wire.AccessWrite] != n || got[wire.AccessRead] != n || len(got) != 2 {
		t.Errorf("opens under %s by access = %v, want %d write and %d read", prefix, got, n, n)
	}
	// Each file was created once and read once: no two events alike.
	seen := map[string]int{}
	for _, ev := range r.Events {
		if ev.Kind == wire.KindOpen && strings.HasPrefix(string(ev.Open.Path()), prefix) {
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

	var o2 *wire.Open
	conns := map[string]*wire.Net{}
	for _, ev := range r.Events {
		if ev.Kind == wire.KindOpen && string(ev.Open.Path()) == target {
			o2 = ev.Open
		}
		if ev.Kind == wire.KindConnect {
			conns[ev.Net.Family] = ev.Net
		}
	}
	if o2 == nil {
		t.Fatalf("no open event for %s", target)
	}
	if o2.Syscall != "openat2" || o2.Access != wire.AccessWrite || !o2.Create || o2.Truncate || o2.Mode != 0o640 || o2.Ret < 0 || o2.Dirfd != -100 {
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

// Whether an open created its file is the kernel's word, not O_CREAT's:
// of two O_CREAT opens of a new file only the first created it, and an
// O_CREAT open of /dev/null created nothing.
func TestOpenSaysWhetherItCreated(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh")
	if err := helper(t, cg, "creat", fresh, "/dev/null").Run(); err != nil {
		t.Fatal(err)
	}
	if err := helper(t, cg, "tmpfile", dir).Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	checkComplete(t, r)
	var got []string
	tmpfile := false
	for _, ev := range r.Events {
		// O_TMPFILE always makes a new file, though the kernel does not
		// mark it created.
		if o := ev.Open; o != nil && o.Flags&unix.O_TMPFILE == unix.O_TMPFILE && o.Ret >= 0 {
			tmpfile = true
			if o.Created == nil || !*o.Created {
				t.Errorf("O_TMPFILE open: created %v, want true", o.Created)
			}
		}
		if o := ev.Open; o != nil && o.Create && o.File != nil && (string(o.File.Path) == fresh || string(o.File.Path) == "/dev/null") {
			if o.Created == nil {
				t.Fatalf("successful open of %s says nothing of creating it", o.File.Path)
			}
			got = append(got, fmt.Sprintf("%s %v", filepath.Base(string(o.File.Path)), *o.Created))
		}
	}
	want := []string{"fresh true", "null false", "fresh false", "null false"}
	if !slices.Equal(got, want) || !tmpfile {
		t.Fatalf("opens created %q, want %q; O_TMPFILE open seen: %v", got, want, tmpfile)
	}
}

// Threads racing to create one file: each open's created is the kernel's
// answer for that open, so exactly one of them says it created the file.
func TestOpenCreatedUnderARace(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	target := filepath.Join(t.TempDir(), "contested")
	if err := helper(t, cg, "creatrace", target, "8").Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	checkComplete(t, r)
	opens, created := 0, 0
	for _, ev := range r.Events {
		if o := ev.Open; o != nil && o.File != nil && string(o.File.Path) == target {
			opens++
			if o.Created != nil && *o.Created {
				created++
			}
		}
	}
	if opens != 8 || created != 1 {
		t.Fatalf("%d opens of %s recorded, %d of them say they created it; want 8 and 1", opens, target, created)
	}
}
