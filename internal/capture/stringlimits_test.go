//go:build linux

package capture

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

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
		case ev.Kind == wire.KindOpen && string(o.Name.Requested) == exact && o.Ret >= 0:
			gotExact = true
			// root + the name is longer than the capture keeps.
			if o.Name.Truncated || o.File == nil || !o.File.Truncated || !strings.HasSuffix(string(o.File.Path), exact[len(exact)-300:]) {
				t.Errorf("open of a %d-byte name: %+v", len(exact), o)
			}
		case ev.Kind == wire.KindOpen && o.Ret == -int64(unix.ENAMETOOLONG):
			gotLong = true
			if !o.Name.Truncated || len(o.Name.Requested) != 4096 || !strings.HasPrefix(tooLong, string(o.Name.Requested)) {
				t.Errorf("open of a %d-byte name not flagged truncated, or not its first 4096 bytes: truncated=%v len=%d", len(tooLong), o.Name.Truncated, len(o.Name.Requested))
			}
		case ev.Kind == wire.KindExec && ev.Exec.File.Path == "/usr/bin/true":
			gotExec = true
			if !ev.Exec.ArgvTruncated || len(ev.Exec.Argv) != 1 || len(ev.Exec.Argv[0]) != 4096 || ev.Exec.Argc != 1 {
				t.Errorf("argv of 5000 bytes: truncated=%v argc=%d, %d args, first %d bytes", ev.Exec.ArgvTruncated, ev.Exec.Argc, len(ev.Exec.Argv), len(ev.Exec.Argv[0]))
			}
		}
		// The event itself says which parts it lacks, in wire order.
		var want []string
		if ev.Open != nil && ev.Open.File != nil && ev.Open.File.Truncated {
			want = append(want, wire.IncompletePath)
		}
		if ev.Open != nil && ev.Open.Name.Truncated {
			want = append(want, wire.IncompleteName)
		}
		if ev.Exec != nil && ev.Exec.ArgvTruncated {
			want = append(want, wire.IncompleteArgv)
		}
		if !slices.Equal(ev.Incomplete, want) {
			t.Errorf("%s event (seq %d) says it lacks %q, want %q", ev.Kind, ev.Seq, ev.Incomplete, want)
		}
		if len(want) > 0 {
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
