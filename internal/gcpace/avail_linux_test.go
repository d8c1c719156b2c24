package gcpace

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestMemAvailable(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"MemTotal:       24683620 kB\nMemFree:        20000000 kB\nMemAvailable:   23116520 kB\n", 23116520 << 10, true},
		{"MemTotal: 1 kB\n", 0, false},
		{"MemAvailable: 12 MB\n", 0, false},
		{"MemAvailable: x kB\n", 0, false},
	} {
		got, ok := memAvailable([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("memAvailable(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestLowestLimit(t *testing.T) {
	outside := t.TempDir() // no cgroup.procs: not part of the hierarchy
	root := filepath.Join(outside, "root")
	leaf := filepath.Join(root, "a", "b")
	write := func(dir, name, text string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{root, filepath.Join(root, "a"), leaf} {
		write(d, "cgroup.procs", "")
	}
	write(outside, "memory.max", "1\n") // above the root: never read
	write(leaf, "memory.max", "max\n")
	write(filepath.Join(root, "a"), "memory.max", "1073741824\n")
	if got, ok := lowestLimit(leaf, "memory.max"); !ok || got != 1<<30 {
		t.Errorf("lowestLimit = %d, %v; want %d from the parent", got, ok, 1<<30)
	}
	write(root, "memory.max", "536870912\n")
	if got, ok := lowestLimit(leaf, "memory.max"); !ok || got != 512<<20 {
		t.Errorf("lowestLimit = %d, %v; want %d from the root", got, ok, 512<<20)
	}
	write(root, "memory.limit_in_bytes", "9223372036854771712\n") // v1's "no limit"
	if _, ok := lowestLimit(leaf, "memory.limit_in_bytes"); ok {
		t.Errorf("v1's no-limit value was taken for a limit")
	}
}

func TestOneShot(t *testing.T) {
	origPercent := debug.SetGCPercent(100)
	origLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(origPercent)
		debug.SetMemoryLimit(origLimit)
	})

	t.Setenv("GOGC", "150")
	OneShot()
	if p := gcPercent(); p != 100 {
		t.Errorf("with GOGC in the environment, GC percent = %d, want it left at 100", p)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	avail, ok := availableMemory()
	if !ok {
		t.Fatal("available memory unreadable on this Linux host")
	}
	OneShot()
	if p := gcPercent(); p != -1 {
		t.Errorf("GC percent after OneShot = %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != int64(avail/2) {
		t.Errorf("memory limit after OneShot = %d, want half of %d available", l, avail)
	}
}
