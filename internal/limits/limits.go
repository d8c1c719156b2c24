//go:build linux

package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
	"vigil/internal/wire"
)

// Spec is what to cap; a zero field means no cap.
type Spec struct {
	// MaxPids is the most tasks (processes and threads) the tree may hold
	// at once; a fork or clone past it fails with EAGAIN.
	MaxPids int64
	// MaxMemory is the most memory, in bytes, the tree may use (swap
	// included where the host accounts it); past it the kernel reclaims,
	// then the OOM killer kills inside the tree.
	MaxMemory int64
}

// IsZero reports whether nothing is capped.
func (s Spec) IsZero() bool { return s.MaxPids == 0 && s.MaxMemory == 0 }

// Check refuses values no kernel accepts.
func (s Spec) Check() error {
	if s.MaxPids < 0 {
		return fmt.Errorf("--max-pids %d: must be positive", s.MaxPids)
	}
	if s.MaxMemory < 0 {
		return fmt.Errorf("--max-memory %d: must be positive", s.MaxMemory)
	}
	if s.MaxMemory > 0 && s.MaxMemory < minMemory {
		return fmt.Errorf("--max-memory %d: below %d bytes no program starts", s.MaxMemory, minMemory)
	}
	return nil
}

// minMemory is a floor below which exec itself cannot succeed.
const minMemory = 1 << 20

// Hierarchies a limit can live in (wire.Limit.Hierarchy).
const (
	V2 = "cgroup-v2"
	V1 = "cgroup-v1"
)

// Set is the limits applied to one session. The zero value (and nil)
// applies nothing.
type Set struct {
	limits []*limit
}

type limit struct {
	controller string // "pids" or "memory"
	max        int64
	hierarchy  string
	dir        string // the cgroup the limit is written in
	home       string // v1: vigil's own group, where the forking thread returns
	swap       bool   // memory: swap counted against max
}

// Apply writes spec into the session at sessionDir (cgroup v2), falling
// back per controller to a v1 group named name. On error nothing is left.
func Apply(sessionDir, name string, spec Spec) (*Set, error) {
	s := &Set{}
	for _, c := range []struct {
		controller string
		max        int64
	}{{"pids", spec.MaxPids}, {"memory", spec.MaxMemory}} {
		if c.max == 0 {
			continue
		}
		l, err := apply(sessionDir, name, c.controller, c.max)
		if err != nil {
			s.Remove()
			return nil, err
		}
		s.limits = append(s.limits, l)
	}
	return s, nil
}

func flag(controller string) string {
	if controller == "pids" {
		return "--max-pids"
	}
	return "--max-memory"
}

func apply(sessionDir, name, controller string, max int64) (*limit, error) {
	l := &limit{controller: controller, max: max}
	if hasController(sessionDir, controller) {
		l.hierarchy, l.dir = V2, sessionDir
		return l, l.write()
	}
	home, err := cgroup.OwnV1Dir(controller)
	if err != nil {
		return nil, fmt.Errorf("%s: the %s controller is not enabled for children of %s (its cgroup.subtree_control), and %v; run vigil in a cgroup that delegates it", flag(controller), controller, filepath.Dir(sessionDir), err)
	}
	l.hierarchy, l.home, l.dir = V1, home, filepath.Join(home, name)
	if err := os.Mkdir(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: creating a cgroup v1 %s group: %w", flag(controller), controller, err)
	}
	if err := l.write(); err != nil {
		l.remove()
		return nil, err
	}
	return l, nil
}

// hasController reports whether the cgroup v2 directory dir offers
// controller (its parent enables it for its children).
func hasController(dir, controller string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(data)) {
		if f == controller {
			return true
		}
	}
	return false
}

// write sets the limit. On v1 pids the cap is one higher until the
// forking thread has left (see Enter), as that thread counts while in it.
func (l *limit) write() error {
	var files []string
	v := strconv.FormatInt(l.max, 10)
	switch {
	case l.controller == "pids" && l.hierarchy == V1:
		v = strconv.FormatInt(l.max+1, 10)
		files = []string{"pids.max"}
	case l.controller == "pids":
		files = []string{"pids.max"}
	case l.hierarchy == V2:
		// memory.swap.max 0: the limit is on memory, not memory moved to
		// swap. Hosts without swap accounting lack the file.
		files = []string{"memory.max", "memory.swap.max"}
		l.swap = true
	default:
		// memsw (memory + swap) may not be below the memory limit, so
		// the memory limit goes first.
		files = []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}
		l.swap = true
	}
	for i, f := range files {
		val := v
		if f == "memory.swap.max" {
			val = "0"
		}
		err := os.WriteFile(filepath.Join(l.dir, f), []byte(val), 0)
		if err != nil && i > 0 && errors.Is(err, os.ErrNotExist) {
			l.swap = swapless()
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %d: writing %s/%s: %w", flag(l.controller), l.max, l.dir, f, err)
		}
	}
	return nil
}

// swapless reports whether the host has no swap in use, in which case a
// memory limit without swap accounting still bounds everything.
func swapless() bool {
	data, err := os.ReadFile("/proc/swaps")
	return err == nil && strings.Count(strings.TrimSpace(string(data)), "\n") == 0
}

// Enter moves the calling OS thread into every v1 group, so that a child
// it forks starts inside them; the caller must hold the thread locked
// (runtime.LockOSThread) from Enter until the returned leave has run, and
// call leave as soon as the child is started. leave restores the v1 pids
// cap and moves the thread home. When leave fails, the thread must not be
// reused: the caller exits its goroutine still locked, which ends it.
func (s *Set) Enter() (leave func() error, err error) {
	tid := []byte(strconv.Itoa(unix.Gettid()))
	var entered []*limit
	leave = func() error {
		var errs []error
		for _, l := range entered {
			if l.controller == "pids" {
				// Lowered before leaving: the tree never holds more than
				// max, at the cost of one fewer fork for a few µs.
				errs = append(errs, writeFile(l.dir, "pids.max", strconv.FormatInt(l.max, 10)))
			}
			errs = append(errs, writeFile(l.home, "tasks", string(tid)))
		}
		return errors.Join(errs...)
	}
	if s == nil {
		return leave, nil
	}
	for _, l := range s.limits {
		if l.hierarchy != V1 {
			continue
		}
		if err := writeFile(l.dir, "tasks", string(tid)); err != nil {
			return nil, errors.Join(err, leave())
		}
		entered = append(entered, l)
	}
	return leave, nil
}

func writeFile(dir, name, value string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0); err != nil {
		return fmt.Errorf("writing %s/%s: %w", dir, name, err)
	}
	return nil
}

// Report reads how each limit fared; call it before Remove and before the
// v2 session is removed. A counter the host does not provide is -1.
func (s *Set) Report() []wire.Limit {
	if s == nil {
		return nil
	}
	out := []wire.Limit{}
	for _, l := range s.limits {
		r := wire.Limit{Controller: l.controller, Max: l.max, Hierarchy: l.hierarchy, Hits: -1, OOMKills: -1, Peak: -1}
		switch {
		case l.controller == "pids":
			// pids.events "max" counts forks refused, in v1 and v2.
			r.Hits = keyed(l.dir, "pids.events", "max")
			r.Peak = single(l.dir, "pids.peak")
		case l.hierarchy == V2:
			swap := l.swap
			r.SwapLimited = &swap
			r.Hits = keyed(l.dir, "memory.events", "max")
			r.OOMKills = keyed(l.dir, "memory.events", "oom_kill")
			r.Peak = single(l.dir, "memory.peak")
		default:
			swap := l.swap
			r.SwapLimited = &swap
			// Hits stays -1: v1's memory.failcnt is not kept by every
			// kernel (6.18 leaves it 0 through an OOM kill), and a 0 that
			// may be false is worse than none.
			r.OOMKills = keyed(l.dir, "memory.oom_control", "oom_kill")
			r.Peak = single(l.dir, "memory.max_usage_in_bytes")
		}
		out = append(out, r)
	}
	return out
}

// single reads a file holding one integer; -1 when it cannot.
func single(dir, name string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return -1
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// keyed reads the value of key from a "key value" per line file; -1 when
// it cannot.
func keyed(dir, name, key string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// Remove deletes the v1 groups. Every task in them is also in the v2
// session, which is emptied first; one still here is killed.
func (s *Set) Remove() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, l := range s.limits {
		if l.hierarchy == V1 {
			errs = append(errs, l.remove())
		}
	}
	s.limits = nil
	return errors.Join(errs...)
}

// remove kills what is left in a v1 group and removes it.
func (l *limit) remove() error {
	return cgroup.RemoveDir(l.dir, func() {
		procs, _ := cgroup.Procs(l.dir)
		for _, pid := range procs {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	})
}

// CleanStale removes the v1 groups left by vigil processes that are gone
// (killed before they could remove them), killing what still runs in
// them, and returns their directories. Hosts without v1 hierarchies have
// none.
func CleanStale() ([]string, error) {
	var removed []string
	var errs []error
	for _, controller := range []string{"pids", "memory"} {
		home, err := cgroup.OwnV1Dir(controller)
		if err != nil {
			continue
		}
		ents, err := os.ReadDir(home)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			pid, ok := cgroup.SessionOwner(e.Name())
			if !e.IsDir() || !ok || pid == os.Getpid() || cgroup.Alive(pid) {
				continue
			}
			l := &limit{controller: controller, dir: filepath.Join(home, e.Name())}
			if err := l.remove(); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, l.dir)
		}
	}
	return removed, errors.Join(errs...)
}
