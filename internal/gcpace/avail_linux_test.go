package gcpace

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestAvailableFromMeminfo(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"MemTotal:       24683620 kB\nMemFree:        20000000 kB\nMemAvailable:   23116520 kB\n", 23116520 << 10, true},
		{"MemTotal: 1 kB\n", 0, false},
		{"MemAvailable: x kB\n", 0, false},
	} {
		got, ok := availableFrom([]byte(c.in), "", "")
		if got != c.want || ok != c.ok {
			t.Errorf("availableFrom(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// cgroupTree makes outside/root/a/b, each level of the hierarchy with a
// cgroup.procs (outside, above the root, has none), and returns a writer
// of files into them.
func cgroupTree(t *testing.T) (outside, root, a, b string, write func(dir, name, text string)) {
	outside = t.TempDir()
	root = filepath.Join(outside, "root")
	a = filepath.Join(root, "a")
	b = filepath.Join(a, "b")
	write = func(dir, name, text string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{root, a, b} {
		write(d, "cgroup.procs", "")
	}
	return outside, root, a, b, write
}

func TestAvailableFrom(t *testing.T) {
	const gib = 1 << 30
	meminfo := []byte("MemAvailable:   8388608 kB\n") // 8 GiB
	outside, root, a, b, write := cgroupTree(t)
	check := func(what string, v2, v1 string, want uint64) {
		t.Helper()
		got, ok := availableFrom(meminfo, v2, v1)
		if !ok || got != want {
			t.Errorf("%s: available = %d, %v; want %d", what, got, ok, want)
		}
	}
	check("no cgroups", "", "", 8*gib)
	write(outside, "memory.max", "1\n") // above the hierarchy's root: never read
	write(b, "memory.max", "max\n")
	check("no limit in the hierarchy", b, "", 8*gib)
	write(a, "memory.max", "4294967296\n")
	write(a, "memory.current", "1073741824\n")
	check("the parent's limit less its usage", b, "", 3*gib)
	write(root, "memory.max", "2147483648\n")
	write(root, "memory.current", "2147483648\n")
	check("a full root", b, "", 0)
	write(root, "memory.current", "3221225472\n") // usage above the limit
	check("usage above the limit", b, "", 0)
	write(root, "memory.max", "max\n")
	write(a, "memory.limit_in_bytes", "9223372036854771712\n") // v1's "no limit"
	check("v1 without a limit", b, b, 3*gib)
	write(a, "memory.limit_in_bytes", "2147483648\n")
	write(a, "memory.usage_in_bytes", "536870912\n")
	check("v1 lower than v2", b, b, 3*gib/2)
	if _, ok := availableFrom([]byte("MemTotal: 1 kB\n"), b, b); ok {
		t.Error("available memory without MemAvailable")
	}
}

func TestOneShotLimit(t *testing.T) {
	for _, c := range []struct {
		avail uint64
		want  int64
		ok    bool
	}{
		{8 << 30, 6 << 30, true},
		{512 << 20, 384 << 20, true},
		{minOneShotLimit/3*4 + 4, minOneShotLimit + 2, true},  // just above the floor
		{minOneShotLimit / 3 * 4, minOneShotLimit - 1, false}, // just below it
		{0, 0, false},
		{1 << 63, 1 << 62, true},
	} {
		got, ok := oneShotLimit(c.avail)
		if got != c.want || ok != c.ok {
			t.Errorf("oneShotLimit(%d) = %d, %v; want %d, %v", c.avail, got, ok, c.want, c.ok)
		}
	}
}

// gcPercent reads the collector's pacing without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestOneShot(t *testing.T) {
	origPercent := debug.SetGCPercent(100)
	origLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(origPercent)
		debug.SetMemoryLimit(origLimit)
	})
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run("with "+env, func(t *testing.T) {
			t.Setenv(env, "150")
			OneShot()
			if p := gcPercent(); p != 100 {
				t.Errorf("GC percent = %d, want it left at 100", p)
			}
			if l := debug.SetMemoryLimit(-1); l != origLimit {
				t.Errorf("memory limit = %d, want it left at %d", l, origLimit)
			}
		})
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	OneShot()
	limit := debug.SetMemoryLimit(-1)
	switch p := gcPercent(); {
	case p == -1:
		// Three quarters of what was available a moment ago, which
		// changes: bounded by the floor and by all of the host's memory.
		total := memTotal(t)
		if limit < minOneShotLimit || uint64(limit) > total {
			t.Errorf("memory limit after OneShot = %d, want between %d and the host's %d", limit, minOneShotLimit, total)
		}
	case p == 100:
		// Too little available: nothing set.
		if limit != origLimit {
			t.Errorf("OneShot set a memory limit (%d) without turning pacing off", limit)
		}
	default:
		t.Errorf("GC percent after OneShot = %d, want -1 (off) or 100 (left alone)", p)
	}
}

// memTotal is the host's MemTotal in bytes.
func memTotal(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}
