//go:build linux

// Package affinity pins processes to CPUs: a thread for the fork of one
// child (the child inherits the mask), or every thread of the calling
// process. It parses the kernel's CPU-list syntax ("0-1,3").
package affinity

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Parse parses a CPU list for flag (named in errors), refusing CPUs this
// process may not run on.
func Parse(flag, s string) (*unix.CPUSet, error) {
	var set unix.CPUSet
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1024 {
			return nil, fmt.Errorf("%s %q: want a list like 0-1,3", flag, s)
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err == nil {
		for c := 0; c < 1024; c++ {
			if set.IsSet(c) && !allowed.IsSet(c) {
				return nil, fmt.Errorf("%s %q: CPU %d is not available to this process", flag, s, c)
			}
		}
	}
	return &set, nil
}

// Current is the calling thread's CPU mask.
func Current() (*unix.CPUSet, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading CPU affinity: %w", err)
	}
	return &set, nil
}

// PinThread pins the calling OS thread to set and returns a function that
// restores its mask. The caller must hold the thread locked
// (runtime.LockOSThread) until restore has run; if restore fails the
// thread must not be reused (exit its goroutine still locked). A nil set
// changes nothing.
func PinThread(set *unix.CPUSet) (restore func() error, err error) {
	if set == nil {
		return func() error { return nil }, nil
	}
	old, err := Current()
	if err != nil {
		return nil, err
	}
	if err := unix.SchedSetaffinity(0, set); err != nil {
		return nil, fmt.Errorf("pinning to CPUs: %w", err)
	}
	return func() error {
		if err := unix.SchedSetaffinity(0, old); err != nil {
			return fmt.Errorf("restoring CPU affinity: %w", err)
		}
		return nil
	}, nil
}

// StartPinned runs start on a thread pinned to set, so the process it
// forks inherits the mask; the thread is restored after.
func StartPinned(set *unix.CPUSet, start func() error) error {
	if set == nil {
		return start()
	}
	runtime.LockOSThread()
	restore, err := PinThread(set)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	err = start()
	if rerr := restore(); rerr != nil {
		return rerr // the thread stays locked and ends with its goroutine
	}
	runtime.UnlockOSThread()
	return err
}

// PinProcess pins every thread of the calling process to set. Threads
// made later inherit the mask of the thread that makes them.
func PinProcess(set *unix.CPUSet) error {
	// Twice: a thread created while the first pass ran may have copied
	// an unpinned mask.
	for range 2 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("listing own threads: %w", err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pinning thread %d: %w", tid, err)
			}
		}
	}
	return nil
}
