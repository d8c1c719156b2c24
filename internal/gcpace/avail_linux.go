package gcpace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"vigil/internal/cgroup"
)

// availableMemory is the host's MemAvailable, or the limit of the cgroup
// the process is in (or of one of its ancestors) when that is lower.
func availableMemory() (uint64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	avail, ok := memAvailable(b)
	if !ok {
		return 0, false
	}
	if dir, err := cgroup.SelfDir(); err == nil {
		if l, ok := lowestLimit(dir, "memory.max"); ok {
			avail = min(avail, l)
		}
	}
	if dir, err := cgroup.OwnV1Dir("memory"); err == nil {
		if l, ok := lowestLimit(dir, "memory.limit_in_bytes"); ok {
			avail = min(avail, l)
		}
	}
	return avail, true
}

// memAvailable reads MemAvailable (in kB) from /proc/meminfo's text.
func memAvailable(meminfo []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemAvailable:" && f[2] == "kB" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			return kb << 10, err == nil && kb < 1<<53
		}
	}
	return 0, false
}

// lowestLimit is the lowest limit in file along dir and its ancestors up
// to the hierarchy's root (the last directory whose parent has no
// cgroup.procs). "max", absent and unreadable files set none.
func lowestLimit(dir, file string) (uint64, bool) {
	var low uint64
	found := false
	for d := dir; ; {
		if l, ok := parseLimit(d, file); ok && (!found || l < low) {
			low, found = l, true
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
	return low, found
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
