//go:build linux

package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSession is a directory shaped like a cgroup v2 session whose parent
// enables controllers: writes land in plain files.
func fakeSession(t *testing.T, controllers string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["cgroup.controllers"] = controllers
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestApplyV2(t *testing.T) {
	dir := fakeSession(t, "cpu memory pids\n", map[string]string{
		"pids.max": "max", "memory.max": "max", "memory.swap.max": "max",
		"pids.events":   "max 7\n",
		"pids.peak":     "12\n",
		"memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n",
		"memory.peak":   "1048576\n",
	})
	s, err := Apply(dir, "unused", Spec{MaxPids: 12, MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "pids.max") + " " + read(t, dir, "memory.max") + " " + read(t, dir, "memory.swap.max"); got != "12 1048576 0" {
		t.Errorf("pids.max, memory.max, memory.swap.max = %s", got)
	}
	// v2 groups are the session itself: nothing to enter, nothing to remove.
	leave, err := s.Enter()
	if err != nil || leave() != nil {
		t.Errorf("Enter on v2: %v", err)
	}
	rep := s.Report()
	if len(rep) != 2 {
		t.Fatalf("report %+v", rep)
	}
	p, m := rep[0], rep[1]
	if p.Controller != "pids" || p.Hierarchy != V2 || p.Max != 12 || p.Hits != 7 || p.Peak != 12 || p.OOMKills != -1 || p.SwapLimited != nil {
		t.Errorf("pids %+v", p)
	}
	if m.Controller != "memory" || m.Max != 1<<20 || m.Hits != 3 || m.OOMKills != 1 || m.Peak != 1<<20 || m.SwapLimited == nil || !*m.SwapLimited {
		t.Errorf("memory %+v", m)
	}
	if err := s.Remove(); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Remove touched the session: %v", err)
	}
}

// A counter the kernel does not provide reads as -1, never 0.
func TestReportUnavailable(t *testing.T) {
	dir := fakeSession(t, "pids", map[string]string{"pids.max": "max"})
	s, err := Apply(dir, "unused", Spec{MaxPids: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Report()[0]; r.Hits != -1 || r.Peak != -1 {
		t.Errorf("report %+v; want -1 for the missing pids.events and pids.peak", r)
	}
}

func TestSpecCheck(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		bad  string
	}{
		{Spec{}, ""},
		{Spec{MaxPids: 1, MaxMemory: 1 << 20}, ""},
		{Spec{MaxPids: -1}, "--max-pids"},
		{Spec{MaxMemory: -5}, "--max-memory"},
		{Spec{MaxMemory: 4096}, "--max-memory"},
	} {
		err := c.spec.Check()
		if (err != nil) != (c.bad != "") || (err != nil && !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("%+v: %v; want an error naming %q", c.spec, err, c.bad)
		}
	}
	if !(Spec{}).IsZero() || (Spec{MaxPids: 1}).IsZero() {
		t.Error("IsZero")
	}
}

func TestNilSet(t *testing.T) {
	var s *Set
	leave, err := s.Enter()
	if err != nil || leave() != nil || s.Report() != nil || s.Remove() != nil {
		t.Error("a nil Set must apply nothing")
	}
}
