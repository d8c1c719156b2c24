package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseCPUList parses a kernel-style CPU list ("0", "0-3", "0,2-3") into
// a set, refusing CPUs this process may not run on.
func ParseCPUList(s string) (*unix.CPUSet, error) {
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
			return nil, fmt.Errorf("--cpus %q: want a list like 0-1,3", s)
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err == nil {
		for c := 0; c < 1024; c++ {
			if set.IsSet(c) && !allowed.IsSet(c) {
				return nil, fmt.Errorf("--cpus %q: CPU %d is not available to this process", s, c)
			}
		}
	}
	return &set, nil
}

// startPinned runs start with the calling thread pinned to set, so the
// process it forks inherits the affinity, and restores the thread after.
func startPinned(set *unix.CPUSet, start func() error) error {
	if set == nil {
		return start()
	}
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("reading CPU affinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, set); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("pinning to --cpus: %w", err)
	}
	err := start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// The thread stays pinned: end it with its goroutine instead of
		// returning it to the scheduler (a locked thread is not reused).
		return fmt.Errorf("restoring CPU affinity: %w", rerr)
	}
	runtime.UnlockOSThread()
	return err
}
