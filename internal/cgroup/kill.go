//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KillTimeout bounds how long a kill waits for killed tasks to be gone.
// SIGKILL cannot be blocked, so only a task stuck in uninterruptible sleep
// can take this long; that is reported as an error, not ignored.
const KillTimeout = 10 * time.Second

// freezeTimeout bounds the wait for a freeze to take effect before the
// stragglers are counted. Freezing makes the count exact (nothing forks
// between counting and killing); if it does not settle in time the kill
// still happens and the count is the one taken at that moment.
const freezeTimeout = time.Second

// Kill freezes the session, counts the processes left in it and its
// sub-cgroups, kills them all via cgroup.kill and waits until the session is
// empty. It returns how many processes were killed.
func (s *Session) Kill(ctx context.Context) (int, error) {
	return killTree(ctx, s.dir, KillTimeout)
}

func killTree(ctx context.Context, dir string, timeout time.Duration) (int, error) {
	freeze := filepath.Join(dir, "cgroup.freeze")
	if err := os.WriteFile(freeze, []byte("1"), 0); err == nil {
		// Either outcome is fine here; see freezeTimeout.
		_ = waitEvent(ctx, dir, "frozen", "1", time.Now().Add(freezeTimeout))
	}
	pids, err := TreeProcs(dir)
	if err != nil {
		return 0, fmt.Errorf("listing processes of %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return 0, fmt.Errorf("killing processes of %s: %w", dir, err)
	}
	err = waitEvent(ctx, dir, "populated", "0", time.Now().Add(timeout))
	if errors.Is(err, ErrTimeout) {
		left, _ := TreeProcs(dir)
		return len(pids), fmt.Errorf("%d process(es) in %s survived cgroup.kill for %s: %v", len(left), dir, timeout, left)
	}
	if err != nil {
		return len(pids), err
	}
	return len(pids), nil
}
