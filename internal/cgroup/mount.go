//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoV2 is returned when no cgroup2 file system is mounted.
var ErrNoV2 = errors.New("no cgroup v2 file system is mounted (looked for a cgroup2 entry in /proc/self/mountinfo)")

// FindV2Mount returns the mount point of the cgroup v2 hierarchy: typically
// /sys/fs/cgroup on a pure v2 host, /sys/fs/cgroup/unified on a hybrid one.
func FindV2Mount() (string, error) {
	mounts, err := ReadMounts("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	m, err := V2Mount(mounts)
	return m.Point, err
}

// V2Mount picks the cgroup2 entry of a mount table (the first, should the
// hierarchy be mounted more than once).
func V2Mount(mounts []Mount) (Mount, error) {
	for _, m := range mounts {
		if m.FSType == "cgroup2" {
			return m, nil
		}
	}
	return Mount{}, ErrNoV2
}

// SelfDir returns the directory of the calling process's own v2 cgroup:
// the parent under which sessions are created.
func SelfDir() (string, error) {
	mounts, members, err := ReadSelf()
	if err != nil {
		return "", err
	}
	return V2Dir(mounts, members)
}

// ReadSelf returns the calling process's mount table (its cgroup entries)
// and cgroup memberships.
func ReadSelf() ([]Mount, map[string]string, error) {
	mounts, err := ReadMounts("/proc/self/mountinfo")
	if err != nil {
		return nil, nil, err
	}
	members, err := ReadMemberships("/proc/self/cgroup")
	if err != nil {
		return nil, nil, err
	}
	return mounts, members, nil
}

// V2Dir is the directory of the cgroup v2 membership ("0::" line of
// /proc/PID/cgroup) below the v2 mount.
func V2Dir(mounts []Mount, members map[string]string) (string, error) {
	cgPath, ok := members[""]
	if !ok {
		return "", errors.New("the process is in no cgroup v2 (no 0:: entry in /proc/self/cgroup)")
	}
	// A path suffixed " (deleted)" means the process's cgroup was removed
	// under it; nothing can be created below it.
	if strings.HasSuffix(cgPath, " (deleted)") {
		return "", fmt.Errorf("own cgroup v2 %q has been deleted", cgPath)
	}
	m, err := V2Mount(mounts)
	if err != nil {
		return "", err
	}
	return m.Dir(cgPath), nil
}

// unescapeMount undoes the octal escaping of spaces, tabs, newlines and
// backslashes that the kernel applies to mountinfo fields.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(o string) bool {
	return len(o) == 3 && o[0] >= '0' && o[0] <= '3' &&
		o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7'
}
