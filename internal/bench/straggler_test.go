//go:build linux

package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"vigil/internal/memcg"
	"vigil/internal/testenv"
)

// zombiesOf lists the zombie children of pid.
func zombiesOf(t *testing.T, pid int) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ")".
		rest := data[bytes.LastIndexByte(data, ')')+2:]
		fields := strings.Fields(string(rest))
		if len(fields) > 1 && fields[0] == "Z" && fields[1] == strconv.Itoa(pid) {
			out = append(out, f)
		}
	}
	return out
}

// A straggler that forks during the grace period and exits on its own
// leaves no zombie behind: the harness, their subreaper, reaps every
// ended child after each sample, not only those listed when the wait began.
func TestStragglersLeaveNoZombies(t *testing.T) {
	testenv.RequireRoot(t)
	c := memcg.Detect()
	if c == nil {
		t.Fatal("no memory cgroup controller: the straggler path under test needs one")
	}
	e := &Executor{Memcg: c, StopGrace: time.Second, StragglerGrace: 2 * time.Second}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	// The command exits at once; its background child forks a grandchild
	// 100 ms later and exits; the grandchild exits 100 ms after that.
	script := `(sleep 0.1; (sleep 0.1) & exit 0) & exit 0`
	m, err := e.Run(context.Background(), []string{"/bin/sh", "-c", script}, nil, t.TempDir(), devnull, devnull)
	if err != nil || m.ExitCode != 0 {
		t.Fatalf("run: %+v %v", m, err)
	}
	if m.Stragglers != 0 {
		t.Fatalf("%d stragglers killed; they were to exit within the grace period", m.Stragglers)
	}
	if z := zombiesOf(t, os.Getpid()); len(z) > 0 {
		t.Fatalf("zombies left under the harness: %v", z)
	}
}
