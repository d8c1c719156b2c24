// Package memcg gives each benchmark sample its own memory cgroup so the
// whole process tree's peak memory can be read afterwards, and so the tree can
// be killed as a unit. It uses cgroup v2 (memory.peak) when the memory
// controller is available there, otherwise the cgroup v1 memory hierarchy
// (memory.max_usage_in_bytes) found on hybrid hosts.
//
// A v1 cgroup cannot be entered at clone time, so on v1 the caller's first
// child writes its own pid into Dir/cgroup.procs before it starts the real
// command: nothing the command does runs outside the cgroup. On v2 the child
// can be created directly inside the cgroup (Prepare: clone3
// CLONE_INTO_CGROUP).
package memcg

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Mode is the kind of memory cgroup in use.
type Mode int

const (
	// None: no usable memory cgroup; peaks are unavailable.
	None Mode = iota
	// V1: the cgroup v1 memory hierarchy.
	V1
	// V2: the unified hierarchy with the memory controller enabled.
	V2
)

func (m Mode) String() string {
	switch m {
	case V1:
		return "cgroup-v1"
	case V2:
		return "cgroup-v2"
	}
	return "none"
}

// Sources recorded as a sample's tree_peak_source.
const (
	SourceV2          = "cgroup-v2:memory.peak"
	SourceV1          = "cgroup-v1:memory.max_usage_in_bytes"
	SourceUnavailable = "unavailable"
)

// NamePrefix starts the name of every cgroup this package creates, so
// leftovers are recognizable.
const NamePrefix = "vigil-sample-"

// Controller creates per-sample cgroups under the caller's own memory cgroup.
type Controller struct {
	mode   Mode
	parent string // directory new groups are created in
	reason string // why mode is None
}

// Mode reports which hierarchy is used.
func (c *Controller) Mode() Mode { return c.mode }

// Parent is the directory sample cgroups are created in ("" for None).
func (c *Controller) Parent() string { return c.parent }

// Reason explains why no memory cgroup is available ("" otherwise).
func (c *Controller) Reason() string { return c.reason }

// Source is the tree_peak_source a sample records.
func (c *Controller) Source() string {
	switch c.mode {
	case V1:
		return SourceV1
	case V2:
		return SourceV2
	}
	return SourceUnavailable
}

// Detect finds a usable memory cgroup for the current process. It never
// fails: when nothing is usable the Controller has mode None and a Reason.
func Detect() *Controller {
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		return &Controller{reason: err.Error()}
	}
	memberships, err := readMemberships("/proc/self/cgroup")
	if err != nil {
		return &Controller{reason: err.Error()}
	}
	var reasons []string
	if dir, err := v2Parent(mounts, memberships); err == nil {
		if err = writable(dir); err == nil {
			return &Controller{mode: V2, parent: dir}
		}
		reasons = append(reasons, "v2: "+err.Error())
	} else {
		reasons = append(reasons, "v2: "+err.Error())
	}
	if dir, err := v1Parent(mounts, memberships); err == nil {
		if err = writable(dir); err == nil {
			return &Controller{mode: V1, parent: dir}
		}
		reasons = append(reasons, "v1: "+err.Error())
	} else {
		reasons = append(reasons, "v1: "+err.Error())
	}
	return &Controller{reason: strings.Join(reasons, "; ")}
}

type mount struct {
	root, point, fstype string
	super               []string
}

// readMounts parses the cgroup entries of a mountinfo file.
func readMounts(path string) ([]mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER"
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 {
			continue
		}
		if rf[0] != "cgroup" && rf[0] != "cgroup2" {
			continue
		}
		out = append(out, mount{root: lf[3], point: unescape(lf[4]), fstype: rf[0], super: strings.Split(rf[2], ",")})
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for space and friends).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readMemberships maps a hierarchy's controller list ("" for v2) to the
// process's path in it.
func readMemberships(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		out[parts[1]] = parts[2]
	}
	return out, nil
}

func join(m mount, cgPath string) string {
	rel := cgPath
	if m.root != "/" {
		rel = strings.TrimPrefix(cgPath, m.root)
	}
	return filepath.Join(m.point, rel)
}

func v2Parent(mounts []mount, memberships map[string]string) (string, error) {
	cgPath, ok := memberships[""]
	if !ok {
		return "", errors.New("process is not in a cgroup v2 hierarchy")
	}
	for _, m := range mounts {
		if m.fstype != "cgroup2" {
			continue
		}
		dir := join(m, cgPath)
		// Children of our own cgroup get the memory controller only if our
		// subtree_control enables it.
		if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil && hasWord(string(ctl), "memory") {
			return dir, nil
		}
		// Otherwise siblings do, when our own cgroup has it (the parent
		// enables it for its children). vigil never changes a cgroup's
		// controller configuration itself.
		if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil && hasWord(string(ctl), "memory") && filepath.Clean(dir) != filepath.Clean(m.point) {
			return filepath.Dir(dir), nil
		}
		return "", fmt.Errorf("memory controller not available to children of %s", dir)
	}
	return "", errors.New("no cgroup2 mount")
}

func v1Parent(mounts []mount, memberships map[string]string) (string, error) {
	var cgPath string
	found := false
	for ctls, p := range memberships {
		if hasWord(strings.ReplaceAll(ctls, ",", " "), "memory") {
			cgPath, found = p, true
		}
	}
	if !found {
		return "", errors.New("process is not in a v1 memory hierarchy")
	}
	for _, m := range mounts {
		if m.fstype != "cgroup" || !hasWord(strings.Join(m.super, " "), "memory") {
			continue
		}
		dir := join(m, cgPath)
		if _, err := os.Stat(filepath.Join(dir, "memory.max_usage_in_bytes")); err != nil {
			return "", fmt.Errorf("%s has no memory.max_usage_in_bytes", dir)
		}
		return dir, nil
	}
	return "", errors.New("no v1 memory mount")
}

// writable reports whether cgroups can be created in dir (typically only
// as root, or in a delegated subtree).
func writable(dir string) error {
	if err := unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS); err != nil {
		return fmt.Errorf("cannot create cgroups in %s: %v", dir, err)
	}
	return nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
