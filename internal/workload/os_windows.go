//go:build windows

package workload

import (
	"math"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// lockExclusive blocks until f holds an exclusive lock (released on close).
func lockExclusive(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, math.MaxUint32, math.MaxUint32, &ol)
}

// monoStart anchors monoNS. Kernel events, whose clock SDK events share
// on Linux, are never recorded here, so a process-local monotonic clock
// keeps what matters: the order and spacing of one run's events.
var monoStart = time.Now()

func monoNS() uint64 { return uint64(time.Since(monoStart)) }
