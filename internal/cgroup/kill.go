//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
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

// pollInterval is how often a v1 cgroup, which has no cgroup.events to
// wait on, is looked at again.
const pollInterval = 2 * time.Millisecond

// Kill freezes the session, counts the processes left in it and its
// sub-cgroups, kills them all via cgroup.kill and waits until the session is
// empty. It returns how many processes were killed.
func (s *Session) Kill(ctx context.Context) (int, error) {
	pids, err := KillAll(ctx, s.dir, KillTimeout)
	return len(pids), err
}

// KillAll kills every process in the cgroup dir and its sub-cgroups, waits
// up to timeout until none is left, and returns the distinct pids killed.
// On v2 the cgroup is frozen, counted and killed as a unit (cgroup.kill);
// a v1 cgroup (or a v2 kernel without cgroup.kill) gets SIGKILL for each
// listed process, pass after pass, so a process forked meanwhile is
// caught by the next one.
func KillAll(ctx context.Context, dir string, timeout time.Duration) ([]int, error) {
	freeze := filepath.Join(dir, "cgroup.freeze")
	if err := os.WriteFile(freeze, []byte("1"), 0); err == nil {
		// Either outcome is fine here; see freezeTimeout.
		_ = waitEvent(ctx, dir, "frozen", "1", time.Now().Add(freezeTimeout))
	}
	pids, err := TreeProcs(dir)
	if err != nil {
		return nil, fmt.Errorf("listing processes of %s: %w", dir, err)
	}
	seen := map[int]bool{}
	for _, p := range pids {
		seen[p] = true
	}
	deadline := time.Now().Add(timeout)
	// Looked up first: cgroupfs refuses to create a missing file with
	// EACCES, not ENOENT.
	kill := filepath.Join(dir, "cgroup.kill")
	if _, err := os.Stat(kill); err == nil {
		if err := os.WriteFile(kill, []byte("1"), 0); err != nil {
			return nil, fmt.Errorf("killing processes of %s: %w", dir, err)
		}
		err = WaitEmpty(ctx, dir, deadline)
		if errors.Is(err, ErrTimeout) {
			left, _ := TreeProcs(dir)
			return pids, fmt.Errorf("%d process(es) in %s survived cgroup.kill for %s: %v", len(left), dir, timeout, left)
		}
		return pids, err
	}
	for {
		left, err := TreeProcs(dir)
		if err != nil {
			return keys(seen), fmt.Errorf("listing processes of %s: %w", dir, err)
		}
		if len(left) == 0 {
			return keys(seen), nil
		}
		if time.Now().After(deadline) {
			return keys(seen), fmt.Errorf("%d process(es) in %s survived SIGKILL for %s: %v", len(left), dir, timeout, left)
		}
		for _, p := range left {
			seen[p] = true
		}
		if err := killListed(dir, left); err != nil {
			return keys(seen), err
		}
		if err := sleep(ctx, time.Millisecond); err != nil {
			return keys(seen), err
		}
	}
}

// killListed sends SIGKILL to each of pids, listed in dir a moment ago,
// that is still in dir: each is pinned with a pidfd first and the cgroup
// listed again, so a pid that exited and was reused by a process elsewhere
// in between is never signalled. (Without pidfds, before Linux 5.3, the
// pid is signalled directly.)
func killListed(dir string, pids []int) error {
	fds := make(map[int]int, len(pids))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, p := range pids {
		fd, err := unix.PidfdOpen(p, 0)
		switch {
		case err == nil:
			fds[p] = fd
		case errors.Is(err, unix.ENOSYS):
			_ = unix.Kill(p, unix.SIGKILL)
		}
		// ESRCH: gone already.
	}
	if len(fds) == 0 {
		return nil
	}
	again, err := TreeProcs(dir)
	if err != nil {
		return fmt.Errorf("listing processes of %s: %w", dir, err)
	}
	for _, p := range again {
		if fd, ok := fds[p]; ok {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
	}
	return nil
}

// WaitEmpty blocks until no live process is left in the cgroup dir or
// below it, the deadline passes (ErrTimeout; zero means no deadline) or ctx
// ends. A v2 cgroup is waited on through cgroup.events; a v1 one, which
// has none, is polled.
func WaitEmpty(ctx context.Context, dir string, deadline time.Time) error {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.events")); err == nil {
		return waitEvent(ctx, dir, "populated", "0", deadline)
	}
	for {
		pids, err := TreeProcs(dir)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return ErrTimeout
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// keys lists the pids of m in order.
func keys(m map[int]bool) []int {
	return slices.Sorted(maps.Keys(m))
}
