//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTimeout is returned by waits whose deadline passed before the
// condition held.
var ErrTimeout = errors.New("timed out")

// readEvents parses a cgroup.events file ("populated 1\nfrozen 0\n").
func readEvents(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			m[k] = v
		}
	}
	return m, nil
}

// waitEvent blocks until cgroup.events of dir shows key=want, the deadline
// passes (ErrTimeout; a zero deadline means none), or ctx ends. The kernel
// signals every change of cgroup.events as an inotify modify event, so this
// sleeps in the poller, never for a fixed time. The watch is installed
// before the first read, so a change between the two cannot be missed.
func waitEvent(ctx context.Context, dir, key, want string, deadline time.Time) error {
	// Fast path without inotify: closing an inotify instance that had a
	// watch waits for an SRCU grace period (milliseconds), which would
	// otherwise be paid by every run, even one whose session is already
	// empty when its main child exits.
	ev, err := readEvents(dir)
	if err != nil {
		return err
	}
	if ev[key] == want {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("inotify_init1: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	// The close waits for the SRCU grace period (see above); nothing
	// depends on it having happened, so the caller does not wait for it.
	defer func() { go f.Close() }()
	path := filepath.Join(dir, "cgroup.events")
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY); err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	// The deadline is armed before the cancellation hook: the hook may
	// run at once (ctx already done), and arming after it would undo it.
	if !deadline.IsZero() {
		if err := f.SetReadDeadline(deadline); err != nil {
			return fmt.Errorf("inotify deadline: %w", err)
		}
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 4096)
	for {
		ev, err := readEvents(dir)
		if err != nil {
			return err
		}
		if ev[key] == want {
			return nil
		}
		if _, err := f.Read(buf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return ErrTimeout
			}
			return fmt.Errorf("reading inotify events for %s: %w", path, err)
		}
	}
}
