//go:build linux

package runner

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"vigil/internal/evidence"
)

// hostInfo describes the machine for run.json.
func hostInfo() evidence.Host {
	h := evidence.Host{Arch: runtime.GOARCH, OS: runtime.GOOS}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.Hostname, _ = os.Hostname()
	h.HostClass = h.OS + "-" + h.Arch + "-" + h.Kernel
	return h
}
