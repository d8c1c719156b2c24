//go:build linux

package capture

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openSessionCgroup validates path as a cgroup v2 directory and returns an
// open descriptor of it (for the kernel's cgroup array) and its cgroup id
// (the kernfs inode number, as bpf_get_current_cgroup_id reports it).
func openSessionCgroup(path string) (*os.File, uint64, error) {
	if path == "" || !filepath.IsAbs(path) {
		return nil, 0, fmt.Errorf("capture: %w: cgroup path %q is not absolute", ErrBadConfig, path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, 0, fmt.Errorf("capture: %w: cgroup path %s: %v", ErrBadConfig, path, err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, 0, fmt.Errorf("capture: %w: %s is on filesystem type %#x, not cgroup2", ErrNoCgroupFS, path, st.Type)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("capture: %w: open cgroup %s: %v", ErrBadConfig, path, err)
	}
	var s unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &s); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("capture: stat cgroup %s: %v", path, err)
	}
	return f, s.Ino, nil
}
