//go:build linux

package memcg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"vigil/internal/cgroup"
)

var seq atomic.Uint64

// Group is one per-sample memory cgroup.
type Group struct {
	Dir  string
	mode Mode
	fd   *os.File // v2: the directory, for CLONE_INTO_CGROUP
}

// New creates a fresh, empty cgroup named NamePrefix+<pid>-<n>.
func (c *Controller) New() (*Group, error) {
	if c.mode == None {
		return nil, fmt.Errorf("no memory cgroup available: %s", c.reason)
	}
	name := fmt.Sprintf("%s%d-%d", NamePrefix, os.Getpid(), seq.Add(1))
	dir := filepath.Join(c.parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create memory cgroup: %w", err)
	}
	g := &Group{Dir: dir, mode: c.mode}
	if c.mode == V2 {
		f, err := os.Open(dir)
		if err != nil {
			_ = os.Remove(dir)
			return nil, fmt.Errorf("open memory cgroup: %w", err)
		}
		g.fd = f
	}
	return g, nil
}

// Mode is the hierarchy the group lives in.
func (g *Group) Mode() Mode { return g.mode }

// Prepare arranges, on v2, for cmd to be created inside the group by the
// kernel at clone time. On v1 it does nothing and returns false: the child
// has to join by writing its pid into Dir/cgroup.procs itself.
func (g *Group) Prepare(cmd *exec.Cmd) bool {
	if g.mode != V2 {
		return false
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(g.fd.Fd())
	return true
}

// Peak returns the group's peak memory in bytes (v2 memory.peak, v1
// memory.max_usage_in_bytes). Both include page cache charged to the tree.
func (g *Group) Peak() (int64, error) {
	file := "memory.max_usage_in_bytes"
	if g.mode == V2 {
		file = "memory.peak"
	}
	data, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return -1, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return -1, fmt.Errorf("%s/%s: %w", g.Dir, file, err)
	}
	return v, nil
}

// Procs lists the processes in the group and any cgroup below it (a
// workload such as vigil record may create its own there).
func (g *Group) Procs() ([]int, error) { return cgroup.TreeProcs(g.Dir) }

// WaitEmpty waits until the group has no processes or timeout passes, and
// reports whether it emptied. Exiting descendants leave the group within
// moments of their parent; this only waits for that, it is not a delay.
func (g *Group) WaitEmpty(timeout time.Duration) bool {
	return cgroup.WaitEmpty(context.Background(), g.Dir, time.Now().Add(timeout)) == nil
}

// Kill kills every process in the group until it is empty (cgroup.KillAll),
// and returns the distinct processes it killed.
func (g *Group) Kill() ([]int, error) {
	return cgroup.KillAll(context.Background(), g.Dir, cgroup.KillTimeout)
}

// Remove deletes the group. It must be empty; a group whose last process
// is still being torn down is retried briefly.
func (g *Group) Remove() error {
	if g.fd != nil {
		_ = g.fd.Close()
		g.fd = nil
	}
	if err := cgroup.RemoveDir(g.Dir, nil); err != nil {
		return fmt.Errorf("remove memory cgroup: %w", err)
	}
	return nil
}
