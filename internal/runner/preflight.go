package runner

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
)

// Linux capability numbers (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// effectiveCaps returns the calling thread's effective capability set.
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, fmt.Errorf("capget: %w", err)
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

// captureCapsError names the missing privilege for loading eBPF probes:
// CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN.
func captureCapsError() error {
	caps, err := effectiveCaps()
	if err != nil {
		return err
	}
	has := func(c uint) bool { return caps&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	var missing []string
	if !has(capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(capPerfmon) {
		missing = append(missing, "CAP_PERFMON")
	}
	return fmt.Errorf("missing privilege %s (or CAP_SYS_ADMIN) to load eBPF probes; run as root (uid %d)",
		strings.Join(missing, "+"), unix.Geteuid())
}

// sessionParent finds the cgroup v2 directory sessions are created in and
// checks that this process may create them.
func sessionParent() (string, error) {
	dir, err := cgroup.SelfDir()
	if err != nil {
		return "", err
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return "", fmt.Errorf("missing privilege: no write access to cgroup v2 directory %s to create the session cgroup; run as root (uid %d)", dir, unix.Geteuid())
		}
		return "", fmt.Errorf("cgroup v2 directory %s: %w", dir, err)
	}
	return dir, nil
}
