//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// StaleReport says what CleanStale removed.
type StaleReport struct {
	// Sessions is the number of stale session directories removed.
	Sessions int `json:"sessions"`
	// Killed is the number of processes that were still running in them.
	Killed int `json:"killed"`
	// Names lists the removed session directory names.
	Names []string `json:"names,omitempty"`
}

// CleanStale removes every session directory directly below parent whose
// owning vigil process is gone, killing what still runs in it. A session is
// stale only when both its owner's pid is not alive and nobody holds its
// lock: the pid check covers the moment between a session's mkdir and its
// lock, the lock covers an owner whose pid is not visible here (another pid
// namespace). A reused pid keeps a stale session until that process ends,
// erring toward never touching a session that may be in use.
func CleanStale(ctx context.Context, parent string) (StaleReport, error) {
	var rep StaleReport
	ents, err := os.ReadDir(parent)
	if err != nil {
		return rep, fmt.Errorf("listing %s: %w", parent, err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		pid, ok := parseSessionName(e.Name())
		if !ok || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		lock, err := lockIfUnused(dir)
		if err != nil {
			return rep, fmt.Errorf("stale session %s: %w", e.Name(), err)
		}
		if lock == nil {
			continue
		}
		killed, err := KillAll(ctx, dir, KillTimeout)
		if err == nil {
			err = removeTree(dir)
		}
		lock.Close()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // removed concurrently by another vigil
			}
			return rep, fmt.Errorf("stale session %s: %w", e.Name(), err)
		}
		rep.Sessions++
		rep.Killed += len(killed)
		rep.Names = append(rep.Names, e.Name())
	}
	return rep, nil
}

// alive reports whether a process with this pid exists (EPERM means it
// exists but belongs to someone else).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// lockIfUnused opens dir and takes its lock without waiting. It returns
// nil (and no error) when another process holds the lock or dir is gone.
func lockIfUnused(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}
