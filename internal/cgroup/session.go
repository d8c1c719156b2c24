//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// NamePrefix starts every session directory name.
const NamePrefix = "vigil-"

// runIDPattern restricts run ids used in directory names, so that a name
// always parses back into (pid, run id) and never escapes its parent.
// Compiled on first use: the counted repetition makes it costly to compile,
// and commands that never touch a cgroup should not pay for it at start-up.
var runIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_.]{1,64}$`)
})

// SessionName returns the directory name of a session owned by pid.
func SessionName(pid int, runID string) string {
	return NamePrefix + strconv.Itoa(pid) + "-" + runID
}

// parseSessionName returns the owning pid of a session directory name, or
// ok=false when name is not a session name.
func parseSessionName(name string) (pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, NamePrefix)
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != '-' || !runIDPattern().MatchString(rest[i+1:]) {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:i])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// Session is one run's cgroup. The zero value is not usable; see Create.
type Session struct {
	dir string
	id  uint64
	fd  *os.File // O_DIRECTORY handle, for clone3(CLONE_INTO_CGROUP)
	tr  *tracker
}

// Create makes the session directory parent/vigil-<own pid>-<runID>. The
// directory must not exist yet.
func Create(parent, runID string) (*Session, error) {
	if !runIDPattern().MatchString(runID) {
		return nil, fmt.Errorf("run id %q: want 1-64 characters of [A-Za-z0-9_.]", runID)
	}
	dir := filepath.Join(parent, SessionName(os.Getpid(), runID))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating session cgroup: %w", err)
	}
	s := &Session{dir: dir}
	fd, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		s.fd = fd
		// The lock marks the session as in use for as long as this
		// process lives (see CleanStale); the kernel drops it when the
		// process dies, however it dies.
		err = unix.Flock(int(fd.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err == nil {
		s.id, err = ID(dir)
	}
	if err == nil {
		s.tr, err = startTracker(dir)
	}
	if err != nil {
		s.Remove(context.Background())
		return nil, fmt.Errorf("opening session cgroup: %w", err)
	}
	return s, nil
}

// Dir is the session's directory in the cgroup v2 file system.
func (s *Session) Dir() string { return s.dir }

// ID is the session's cgroup id (as reported by bpf_get_current_cgroup_id).
func (s *Session) ID() uint64 { return s.id }

// FD is a directory descriptor of the session, for SysProcAttr.CgroupFD.
func (s *Session) FD() int { return int(s.fd.Fd()) }

// Populated reports whether any live task is in the session or below it.
func (s *Session) Populated() (bool, error) {
	ev, err := readEvents(s.dir)
	if err != nil {
		return false, err
	}
	return ev["populated"] == "1", nil
}

// WaitEmpty blocks until no live task is left in the session (or below
// it), the deadline passes (ErrTimeout; zero means no deadline) or ctx ends.
func (s *Session) WaitEmpty(ctx context.Context, deadline time.Time) error {
	return WaitEmpty(ctx, s.dir, deadline)
}

// Procs lists the processes in the session and all of its sub-cgroups.
func (s *Session) Procs() ([]int, error) { return TreeProcs(s.dir) }

// IDs returns the cgroup ids of the session and of every sub-cgroup it
// has had: those there now and those created and removed meanwhile.
func (s *Session) IDs() (map[uint64]bool, error) {
	ids, err := TreeIDs(s.dir)
	if err != nil {
		return nil, err
	}
	if s.tr != nil {
		for id := range s.tr.snapshot() {
			ids[id] = true
		}
	}
	return ids, nil
}

// Remove deletes the session and every sub-cgroup, children first. Live
// tasks are killed first (via cgroup.kill) and waited for, so that a
// failing run never leaves a process or a directory behind. It is safe to
// call more than once.
func (s *Session) Remove(ctx context.Context) error {
	if s.tr != nil {
		s.tr.stop()
		s.tr = nil
	}
	if s.fd != nil {
		s.fd.Close()
		s.fd = nil
	}
	if _, err := os.Stat(s.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if pop, err := s.Populated(); err == nil && pop {
		if _, err := KillAll(ctx, s.dir, KillTimeout); err != nil {
			return err
		}
	}
	return removeTree(s.dir)
}
