package gcpace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"vigil/internal/cgroup"
	"vigil/internal/interference"
)

// availableMemory is the host's MemAvailable, or, when lower, what the
// process's cgroup or one of its ancestors still has below its limit.
func availableMemory() (uint64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	v2, err := cgroup.SelfDir()
	if err != nil {
		v2 = ""
	}
	v1, err := cgroup.OwnV1Dir("memory")
	if err != nil {
		v1 = ""
	}
	return availableFrom(b, v2, v1)
}

// availableFrom is availableMemory from /proc/meminfo's text and the
// process's v2 and v1 memory cgroup directories ("" when none).
func availableFrom(meminfo []byte, v2, v1 string) (uint64, bool) {
	n, ok := interference.ParseMeminfo(string(meminfo))["MemAvailable"]
	if !ok || n < 0 {
		return 0, false
	}
	avail := uint64(n)
	if v2 != "" {
		if room, ok := leastRoom(v2, "memory.max", "memory.current"); ok {
			avail = min(avail, room)
		}
	}
	if v1 != "" {
		if room, ok := leastRoom(v1, "memory.limit_in_bytes", "memory.usage_in_bytes"); ok {
			avail = min(avail, room)
		}
	}
	return avail, true
}

// leastRoom is the least room (limit minus usage, from the files named)
// along dir and its ancestors up to the hierarchy's root (the last
// directory whose parent has no cgroup.procs). A level whose limit is
// "max", absent or unreadable sets none.
func leastRoom(dir, limitFile, usageFile string) (uint64, bool) {
	var least uint64
	found := false
	for d := dir; ; {
		if l, ok := parseLimit(d, limitFile); ok {
			used, _ := parseLimit(d, usageFile)
			room := l - min(used, l)
			if !found || room < least {
				least, found = room, true
			}
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		if _, err := os.Stat(filepath.Join(up, "cgroup.procs")); err != nil {
			break
		}
		d = up
	}
	return least, found
}

func parseLimit(dir, file string) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	// v1 writes "no limit" as a huge page-rounded number.
	return v, err == nil && v < 1<<62
}
