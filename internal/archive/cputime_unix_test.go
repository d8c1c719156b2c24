//go:build unix

package archive

import (
	"testing"

	"golang.org/x/sys/unix"
)

// processCPU is this process's user+system CPU time in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
