package capture

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tracefsCandidates are where the syscall tracepoint loader looks for
// tracefs, in its order.
var tracefsCandidates = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

const tracefsMountPoint = "/sys/kernel/tracing"

// ensureTracefs makes tracefs reachable for syscall tracepoint IDs. If it is
// already mounted at a standard place nothing happens; otherwise it is
// mounted at /sys/kernel/tracing and left mounted (other tools may start
// relying on it; a tracefs this package did not mount is never touched).
// It reports whether it mounted tracefs.
func ensureTracefs() (mounted bool, err error) {
	for _, p := range tracefsCandidates {
		if isTracefs(p) {
			return false, nil
		}
	}
	if err := os.MkdirAll(tracefsMountPoint, 0o700); err != nil {
		return false, fmt.Errorf("capture: %w: cannot create %s: %v", ErrNoTracefs, tracefsMountPoint, err)
	}
	if err := unix.Mount("tracefs", tracefsMountPoint, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		if err == unix.EBUSY && isTracefs(tracefsMountPoint) {
			return false, nil // mounted concurrently by someone else
		}
		return false, fmt.Errorf("capture: %w: mount tracefs at %s: %v (mount it manually: mount -t tracefs tracefs %s)", ErrNoTracefs, tracefsMountPoint, err, tracefsMountPoint)
	}
	return true, nil
}

func isTracefs(p string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return false
	}
	return st.Type == unix.TRACEFS_MAGIC
}
