//go:build unix

package hostinfo

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"vigil/internal/wire"
)

// Local describes this machine: kernel release, architecture, OS, host
// class ("os-arch-kernel") and host name. A figure the host does not give
// is left empty.
func Local() wire.Host {
	h := wire.Host{Arch: runtime.GOARCH, OS: runtime.GOOS}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.Hostname, _ = os.Hostname()
	h.HostClass = h.OS + "-" + h.Arch + "-" + h.Kernel
	return h
}
