//go:build linux

package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoV2 is returned when no cgroup2 file system is mounted.
var ErrNoV2 = errors.New("no cgroup v2 file system is mounted (looked for a cgroup2 entry in /proc/self/mounts)")

// FindV2Mount returns the mount point of the cgroup v2 hierarchy: typically
// /sys/fs/cgroup on a pure v2 host, /sys/fs/cgroup/unified on a hybrid one.
func FindV2Mount() (string, error) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/mounts: %w", err)
	}
	return parseV2Mount(data)
}

// parseV2Mount picks the first cgroup2 entry of a mounts table.
func parseV2Mount(data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[2] == "cgroup2" {
			return unescapeMount(f[1]), nil
		}
	}
	return "", ErrNoV2
}

// unescapeMount undoes the octal escaping of spaces, tabs, newlines and
// backslashes that the kernel applies to mount points.
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

// SelfPath returns the calling process's cgroup v2 path relative to the v2
// mount (e.g. "/" or "/user.slice/session-1.scope"), from the "0::" line of
// /proc/self/cgroup.
func SelfPath() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("reading /proc/self/cgroup: %w", err)
	}
	return parseSelfPath(data)
}

func parseSelfPath(data []byte) (string, error) {
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			// A path suffixed " (deleted)" means our own cgroup was removed
			// under us; a session cannot be created below it.
			if strings.HasSuffix(rest, " (deleted)") {
				return "", fmt.Errorf("own cgroup v2 %q has been deleted", rest)
			}
			return rest, nil
		}
	}
	return "", errors.New("/proc/self/cgroup has no cgroup v2 (0::) entry")
}

// SelfDir returns the directory of the calling process's own v2 cgroup:
// the parent under which sessions are created.
func SelfDir() (string, error) {
	mnt, err := FindV2Mount()
	if err != nil {
		return "", err
	}
	rel, err := SelfPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(mnt, filepath.FromSlash(rel)), nil
}

func isOctal(o string) bool {
	return len(o) == 3 && o[0] >= '0' && o[0] <= '3' &&
		o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7'
}
