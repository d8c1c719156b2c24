//go:build linux

package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/cgroup"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// forkBomb forks children that sleep until 400 forks were tried, counting
// the forks the kernel refused.
const forkBomb = `import os, time
n = refused = 0
for i in range(400):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print(n, refused)`

// A fork bomb and a memory hog under --max-pids and --max-memory: the caps
// hold, bite inside the tree only, are recorded with how often they bit,
// and nothing of them is left.
func TestE2ELimits(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "/usr/bin/python3")
	dir := t.TempDir()

	t.Run("fork bomb", func(t *testing.T) {
		arc := filepath.Join(dir, "bomb.tar.gz")
		r := runVigil(t, dir, "record", "--archive", arc, "--grace", "0", "--max-pids", "24", "--", "python3", "-c", forkBomb)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var forked, refused int
		if _, err := fmt.Sscan(r.stdout, &forked, &refused); err != nil {
			t.Fatalf("workload output %q: %v", r.stdout, err)
		}
		// python itself is one of the 24 tasks.
		if forked != 23 || refused != 400-23 {
			t.Errorf("forked %d, refused %d; want 23 and 377 under --max-pids 24", forked, refused)
		}
		b := verifyAndRead(t, arc)
		if len(b.Run.Limits) != 1 {
			t.Fatalf("run.json limits %+v; want the pids cap", b.Run.Limits)
		}
		l := b.Run.Limits[0]
		if l.Controller != "pids" || l.Max != 24 || l.Hits != int64(refused) || l.Peak > 24 || l.Peak < 24 {
			t.Errorf("limit %+v; want pids max 24 with %d hits and peak 24", l, refused)
		}
		forks := 0
		for _, e := range b.Kernel {
			if e.Kind == wire.KindFork && string(e.Comm) == "python3" {
				forks++
			}
		}
		if forks != forked {
			t.Errorf("%d fork events by python3 in the archive; the workload forked %d", forks, forked)
		}
		if b.Health.CgroupCorrelation.StragglersKilled != forked {
			t.Errorf("%d stragglers killed; want the %d sleeping children", b.Health.CgroupCorrelation.StragglersKilled, forked)
		}
		assertNoLimitGroups(t)
	})

	t.Run("memory hog", func(t *testing.T) {
		arc := filepath.Join(dir, "hog.tar.gz")
		const max = 64 << 20
		r := runVigil(t, dir, "record", "--archive", arc, "--max-memory", "64MiB", "--",
			"python3", "-c", "b = []\nwhile True: b.append(bytearray(1 << 20))")
		if r.code != 137 {
			t.Fatalf("exit %d, want 137 (the OOM killer's SIGKILL): %s", r.code, r.stderr)
		}
		b := verifyAndRead(t, arc)
		if len(b.Run.Limits) != 1 {
			t.Fatalf("run.json limits %+v; want the memory cap", b.Run.Limits)
		}
		l := b.Run.Limits[0]
		if l.Controller != "memory" || l.Max != max || l.OOMKills != 1 || l.Peak > max || l.Peak < max/2 ||
			l.SwapLimited == nil || !*l.SwapLimited {
			t.Errorf("limit %+v; want memory max %d, one OOM kill, peak at most the cap, swap limited", l, max)
		}
		if b.Run.Signal != 9 || b.Health.KernelLayer.Status != "complete" {
			t.Errorf("signal %d, kernel_layer %s; want 9 and complete", b.Run.Signal, b.Health.KernelLayer.Status)
		}
		if !strings.Contains(r.stderr, "memory cap") {
			t.Errorf("vigil did not say the memory cap bit: %s", r.stderr)
		}
		assertNoLimitGroups(t)
	})

	t.Run("an unprivileged fork bomb cannot leave its cap", func(t *testing.T) {
		// The workload first tries to move itself into vigil's own pids
		// group (out of the cap), then forks. Run as nobody, the move is
		// refused and the cap holds. (A root workload can move itself
		// anywhere: --user is what makes a cap binding.)
		home, err := cgroup.OwnV1Dir("pids")
		if err != nil {
			t.Fatalf("this host has a v1 pids hierarchy (the test relies on it): %v", err)
		}
		arc := filepath.Join(dir, "escape.tar.gz")
		script := `echo $$ > "$1/cgroup.procs" 2>/dev/null && echo escaped; exec python3 -c "$0"`
		r := runVigil(t, dir, "record", "--archive", arc, "--grace", "0", "--user", "65534", "--max-pids", "24", "--",
			"sh", "-c", script, forkBomb, home)
		if r.code != 0 || strings.Contains(r.stdout, "escaped") {
			t.Fatalf("exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
		}
		var forked, refused int
		if _, err := fmt.Sscan(r.stdout, &forked, &refused); err != nil || forked != 23 {
			t.Errorf("workload output %q (%v); want 23 forks under the cap", r.stdout, err)
		}
		if l := verifyAndRead(t, arc).Run.Limits; len(l) != 1 || l[0].Hits != int64(refused) {
			t.Errorf("limits %+v; want %d refusals", l, refused)
		}
	})

	t.Run("a cap of nothing is refused", func(t *testing.T) {
		arc := filepath.Join(dir, "bad.tar.gz")
		for _, args := range [][]string{{"--max-pids", "-1"}, {"--max-memory", "1KiB"}, {"--max-memory", "lots"}} {
			r := runVigil(t, dir, append(append([]string{"record", "--archive", arc}, args...), "--", "true")...)
			if r.code != 125 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, args[0]) {
				t.Errorf("%v: exit %d, stderr %q; want 125 and one line naming the flag", args, r.code, r.stderr)
			}
			if _, err := os.Stat(arc); !os.IsNotExist(err) {
				t.Errorf("%v left %s", args, arc)
			}
		}
	})

	t.Run("stale groups of a killed vigil are removed", func(t *testing.T) {
		home, err := cgroup.OwnV1Dir("pids")
		if err != nil {
			t.Fatalf("this host has a v1 pids hierarchy (the test relies on it): %v", err)
		}
		deadPID := exitedPID(t)
		stale := filepath.Join(home, cgroup.SessionName(deadPID, "stale"))
		if err := os.Mkdir(stale, 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(stale)
		r := runVigil(t, dir, "record", "--archive", filepath.Join(dir, "after.tar.gz"), "--", "true")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) || !strings.Contains(r.stderr, stale) {
			t.Errorf("stale group %s still there (%v) or not reported: %s", stale, err, r.stderr)
		}
	})
}

// assertNoLimitGroups fails when a vigil group is left in a v1 hierarchy.
func assertNoLimitGroups(t *testing.T) {
	t.Helper()
	for _, c := range []string{"pids", "memory"} {
		home, err := cgroup.OwnV1Dir(c)
		if err != nil {
			continue
		}
		ents, _ := os.ReadDir(home)
		for _, e := range ents {
			if pid, ok := cgroup.SessionOwner(e.Name()); ok && pid != os.Getpid() && !cgroup.Alive(pid) {
				t.Errorf("left behind: %s", filepath.Join(home, e.Name()))
			}
		}
	}
}
