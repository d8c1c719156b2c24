//go:build linux

package runner

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
)

// sessionParent finds the cgroup v2 directory sessions are created in and
// checks that this process may create them.
func sessionParent() (string, error) {
	dir, err := cgroup.SelfDir()
	if err != nil {
		return "", err
	}
	// AT_EACCESS: the effective ids and capabilities decide, as they will
	// for mkdir (plain access(2) ignores a non-root user's capabilities).
	if err := unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK, unix.AT_EACCESS); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return "", fmt.Errorf("missing privilege: no write access to cgroup v2 directory %s to create the session cgroup (uid %d); run as root, grant CAP_DAC_OVERRIDE or delegate the cgroup", dir, unix.Geteuid())
		}
		return "", fmt.Errorf("cgroup v2 directory %s: %w", dir, err)
	}
	return dir, nil
}
