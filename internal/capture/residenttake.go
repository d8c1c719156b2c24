//go:build linux

package capture

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// residentPresent reports whether cfg's resident set exists (taking it
// may still fail).
func residentPresent(cfg Config) bool {
	size, err := ringSize(cfg.RingSize)
	if err != nil {
		return false
	}
	dir := cfg.ResidentDir
	if dir == "" {
		dir = DefaultResidentDir
	}
	if _, err := os.Stat(dir); err != nil {
		return false // on most hosts: and the set's name is not worked out
	}
	_, err = os.Stat(filepath.Join(dir, setName(size)))
	return err == nil
}

// absentError says that this binary has no set for a ring of size bytes in
// dir, how to load one, and which sets are there instead.
func absentError(dir string, size uint32) error {
	err := fmt.Errorf("%w %s in %s (%s)", errResidentAbsent, setName(size), dir, loadHint(dir, size))
	if names, _ := setNames(dir); len(names) > 0 {
		own := hex.EncodeToString(loaderIdentity()[:8]) + "-"
		var there []string
		for _, n := range names {
			if strings.HasPrefix(n, own) {
				there = append(there, n+" (this binary's, for another ring size)")
			} else {
				there = append(there, n+" (another vigil build's)")
			}
		}
		err = &thereError{err, strings.Join(there, ", ")}
	}
	return err
}

// loadHint is the command that loads the set a capture of a ring of size
// bytes takes from dir.
func loadHint(dir string, size uint32) string {
	load := "vigil resident load"
	if size != DefaultRingSize {
		load += " --ring-size " + sizeName(size)
	}
	if dir != DefaultResidentDir {
		load += " --resident-dir " + dir
	}
	return load
}

// thereError is an absent set's error when other sets are there: not a
// plain absence, so ResidentAuto says why it did not take one.
type thereError struct {
	absent error
	there  string
}

func (e *thereError) Error() string { return e.absent.Error() + "; there: " + e.there }
func (e *thereError) Unwrap() error { return e.absent }

// residentObjects is a resident set taken by one capture.
type residentObjects struct {
	lock     *os.File
	unlock   sync.Once
	events   *ebpf.Map
	counters *ebpf.Map
	session  *ebpf.Map
	state    sessionState
	programs map[string]*ebpf.Program
}

// release lets the next capture take the set; the objects stay open.
func (r *residentObjects) release() {
	r.unlock.Do(func() {
		if r.lock != nil {
			r.lock.Close() // releases the flock
		}
	})
}

func (r *residentObjects) close() {
	for _, p := range r.programs {
		p.Close()
	}
	for _, m := range []*ebpf.Map{r.events, r.counters, r.session} {
		if m != nil {
			m.Close()
		}
	}
	r.release()
}

// takeResident takes this binary's set for a ring of size bytes in dir.
// The error says why it could not.
func takeResident(dir string, size uint32) (_ *residentObjects, err error) {
	if dir == "" {
		dir = DefaultResidentDir
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// No set anywhere: said without working out this binary's set
		// name (hashing the object and reading the build ID), which
		// every record of a host without sets would pay for.
		return nil, fmt.Errorf("%w in %s (%s)", errResidentAbsent, dir, loadHint(dir, size))
	}
	name := setName(size)
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, absentError(dir, size)
		}
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	lock, busy, err := lockDir(p)
	if err != nil {
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	if busy {
		return nil, fmt.Errorf("resident set %s is held by another record (or being unloaded)", name)
	}
	taken := &residentObjects{lock: lock, programs: map[string]*ebpf.Program{}}
	defer func() {
		if err != nil {
			taken.close()
		}
	}()
	ro := &ebpf.LoadPinOptions{}
	for pin, m := range map[string]**ebpf.Map{pinEvents: &taken.events, pinCounters: &taken.counters, pinSession: &taken.session} {
		if *m, err = ebpf.LoadPinnedMap(filepath.Join(p, pin), ro); err != nil {
			return nil, fmt.Errorf("resident set %s: %s: %w", name, pin, err)
		}
	}
	if taken.state, err = checkMaps(taken.events, taken.counters, taken.session, size); err != nil {
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	for _, pr := range probeTable {
		prog, err := ebpf.LoadPinnedProgram(filepath.Join(p, pinProg+pr.prog), ro)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("resident set %s: program %s: %w", name, pr.prog, err)
		}
		taken.programs[pr.prog] = prog
	}
	if err := awaitUnattached(taken.programs); err != nil {
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	return taken, nil
}

// checkMaps refuses a set whose maps are not what this binary pins (one
// replaced by hand), and maps the session state.
func checkMaps(events, counters, session *ebpf.Map, size uint32) (sessionState, error) {
	if events.Type() != ebpf.RingBuf || events.MaxEntries() != size {
		return sessionState{}, fmt.Errorf("%s is not a ring buffer of %d bytes", pinEvents, size)
	}
	if n := uint32(vigilBPFVigilCounterClassVIGIL_NCLASSES) * uint32(numKinds); counters.Type() != ebpf.PerCPUArray || counters.MaxEntries() != n {
		return sessionState{}, fmt.Errorf("%s is not a per-CPU array of %d counters", pinCounters, n)
	}
	st, err := newSessionState(session)
	if err != nil {
		return sessionState{}, fmt.Errorf("%s: %w", pinSession, err)
	}
	return st, nil
}

// awaitUnattached makes sure no link uses the set's programs: a holder the
// kernel killed releases its flock and its links as it exits, in no
// promised order. It waits up to half a second for such links to go, and
// for any link the kernel is freeing (which cannot be opened to see whose
// it is, and stops the listing) to be gone.
func awaitUnattached(progs map[string]*ebpf.Program) error {
	var ids map[ebpf.ProgramID]string
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		attached, err := linkedTo(progs, &ids)
		switch {
		case errors.Is(err, unix.EAGAIN):
			attached = "(a link being freed)"
		case err != nil:
			return err
		case attached == "":
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return fmt.Errorf("program %s is attached by another process", attached)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// linkedTo is attachedTo; a test replaces it.
var linkedTo = attachedTo

// programIDs maps the kernel's id of each program to its name.
func programIDs(progs map[string]*ebpf.Program) (map[ebpf.ProgramID]string, error) {
	ids := map[ebpf.ProgramID]string{}
	for name, p := range progs {
		info, err := p.Info()
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		id, ok := info.ID()
		if !ok {
			return nil, fmt.Errorf("program %s: the kernel gives no program id", name)
		}
		ids[id] = name
	}
	return ids, nil
}

// attachedTo names a program of progs some link uses, or "". The
// programs' ids are looked up (into *ids) only when the kernel has links at
// all: between captures it usually has none.
func attachedTo(progs map[string]*ebpf.Program, ids *map[ebpf.ProgramID]string) (string, error) {
	var it link.Iterator
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err != nil {
			continue // gone since
		}
		if *ids == nil {
			if *ids, err = programIDs(progs); err != nil {
				return "", err
			}
		}
		if name, ok := (*ids)[info.Program]; ok {
			return name, nil
		}
	}
	if err := it.Err(); err != nil {
		return "", fmt.Errorf("list the kernel's links: %w", err)
	}
	return "", nil
}
