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
	mounts, memberships, err := cgroup.ReadSelf()
	if err != nil {
		return &Controller{reason: err.Error()}
	}
	var reasons []string
	for _, try := range []struct {
		mode   Mode
		label  string
		parent func([]cgroup.Mount, map[string]string) (string, error)
	}{{V2, "v2", v2Parent}, {V1, "v1", v1Parent}} {
		dir, err := try.parent(mounts, memberships)
		if err == nil {
			err = writable(dir)
		}
		if err == nil {
			return &Controller{mode: try.mode, parent: dir}
		}
		reasons = append(reasons, try.label+": "+err.Error())
	}
	return &Controller{reason: strings.Join(reasons, "; ")}
}

func v2Parent(mounts []cgroup.Mount, memberships map[string]string) (string, error) {
	dir, err := cgroup.V2Dir(mounts, memberships)
	if err != nil {
		return "", err
	}
	// Children of our own cgroup get the memory controller only if our
	// subtree_control enables it.
	if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil && hasWord(string(ctl), "memory") {
		return dir, nil
	}
	// Otherwise siblings do, when our own cgroup has it (the parent
	// enables it for its children) and is not the root. vigil never
	// changes a cgroup's controller configuration itself.
	m, _ := cgroup.V2Mount(mounts)
	if ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers")); err == nil && hasWord(string(ctl), "memory") && filepath.Clean(dir) != filepath.Clean(m.Point) {
		return filepath.Dir(dir), nil
	}
	return "", fmt.Errorf("memory controller not available to children of %s", dir)
}

func v1Parent(mounts []cgroup.Mount, memberships map[string]string) (string, error) {
	dir, err := cgroup.V1Dir(mounts, memberships, "memory")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.max_usage_in_bytes")); err != nil {
		return "", fmt.Errorf("%s has no memory.max_usage_in_bytes", dir)
	}
	return dir, nil
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
