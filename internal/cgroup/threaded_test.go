//go:build linux

package cgroup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestThreadedSubCgroup: a workload may turn a sub-cgroup of its session
// threaded; that cgroup's cgroup.procs cannot be read (EOPNOTSUPP) and its
// processes are listed by the session, the threaded domain. Listing,
// killing and removing the session still work, and count each process once.
func TestThreadedSubCgroup(t *testing.T) {
	s := newSession(t)
	sub := filepath.Join(s.Dir(), "threads")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "cgroup.type"), []byte("threaded"), 0); err != nil {
		t.Fatal(err)
	}
	p := startIn(t, s.FD())
	if err := os.WriteFile(filepath.Join(sub, "cgroup.threads"), []byte(strconv.Itoa(p.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	procs, err := s.Procs()
	if err != nil || !slices.Equal(procs, []int{p.Process.Pid}) {
		t.Fatalf("Procs = %v, %v; want [%d]", procs, err, p.Process.Pid)
	}
	if n, err := s.Kill(context.Background()); err != nil || n != 1 {
		t.Fatalf("Kill: %d, %v; want 1", n, err)
	}
	waitExited(t, p)
	if err := s.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("session left behind")
	}
}
