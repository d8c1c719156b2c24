//go:build unix

package workload

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockExclusive blocks until f holds an exclusive lock (released on close).
func lockExclusive(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX)
}

// monoNS is CLOCK_MONOTONIC in nanoseconds, the clock bpf_ktime_get_ns
// reads, so SDK events and kernel events share a time axis.
func monoNS() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}
