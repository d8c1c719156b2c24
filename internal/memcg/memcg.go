//go:build linux

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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
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
	mounts, err := cgroup.ReadMounts("/proc/self/mountinfo")
	if err != nil {
		return &Controller{reason: err.Error()}
	}
	memberships, err := cgroup.ReadMemberships("/proc/self/cgroup")
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

func v2Parent(mounts []cgroup.Mount, memberships map[string]string) (string, error) {
	cgPath, ok := memberships[""]
	if !ok {
		return "", errors.New("process is not in a cgroup v2 hierarchy")
	}
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		dir := m.Dir(cgPath)
		// Children of our own cgroup get the memory controller only if our
		// subtree_control enables it.
		if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil && hasWord(string(ctl), "memory") {
			return dir, nil
		}
		// Otherwise siblings do, when our own cgroup has it (the parent
		// enables it for its children). vigil never changes a cgroup's
		// controller configuration itself.
		if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil && hasWord(string(ctl), "memory") && filepath.Clean(dir) != filepath.Clean(m.Point) {
			return filepath.Dir(dir), nil
		}
		return "", fmt.Errorf("memory controller not available to children of %s", dir)
	}
	return "", errors.New("no cgroup2 mount")
}

func v1Parent(mounts []cgroup.Mount, memberships map[string]string) (string, error) {
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
		if !m.Has("memory") {
			continue
		}
		dir := m.Dir(cgPath)
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
