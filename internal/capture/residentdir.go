//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ResidentSet describes one set found in a resident directory.
type ResidentSet struct {
	Name string
	Dir  string
	// Current is true when the set was made from this binary's programs.
	Current bool
	// Busy is true when the set's programs are attached now: a capture
	// holds it.
	Busy bool
	// Programs lists the pinned programs.
	Programs []string
	// Complete is true when the set holds the maps a capture needs and
	// every required program; a capture refuses one that is not.
	Complete bool
	// LoadedAt is when the set was pinned.
	LoadedAt time.Time
}

// isBPFFS reports whether dir is on a BPF file system.
func isBPFFS(dir string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false, err
	}
	return uint32(st.Type) == unix.BPF_FS_MAGIC, nil
}

// prepareResidentDir makes dir (a directory on a BPF file system) ready for
// sets. When dir is under /sys/fs/bpf and nothing is mounted there, a BPF
// file system is mounted, as systemd does on most hosts.
func prepareResidentDir(dir string) (mounted string, err error) {
	if on, err := isBPFFS(dir); err == nil && on {
		return "", nil // there already, or a BPF file system's root
	}
	if strings.Contains(filepath.Base(dir), ".") {
		return "", fmt.Errorf("resident directory %s: a BPF file system refuses names with a dot", dir)
	}
	parent := filepath.Dir(dir)
	on, err := isBPFFS(parent)
	if err != nil {
		return "", fmt.Errorf("resident directory %s: %w", dir, err)
	}
	if !on && parent == "/sys/fs/bpf" {
		if err := unix.Mount("bpf", parent, "bpf", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0700"); err != nil {
			return "", fmt.Errorf("mount a BPF file system on %s: %w", parent, err)
		}
		on, mounted = true, parent
	}
	if !on {
		return "", fmt.Errorf("resident directory %s: not on a BPF file system, nor is %s (mount one there: mount -t bpf bpf %s)", dir, parent, parent)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return mounted, fmt.Errorf("resident directory: %w", err)
	}
	return mounted, nil
}

// lockDir opens dir and takes an exclusive flock on it without waiting.
// busy is true when another process holds it. Only captures, loaders and
// unload take it; status looks at links instead, so that it never makes
// a capture fall back.
//
// A directory removed (and perhaps replaced) between the open and the lock
// is fs.ErrNotExist: a lock on it holds nothing.
func lockDir(dir string) (f *os.File, busy bool, err error) {
	f, err = os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", dir, err)
	}
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(dir, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		f.Close()
		return nil, false, fmt.Errorf("lock %s: %w (removed meanwhile)", dir, fs.ErrNotExist)
	}
	return f, false, nil
}

// lockRoot takes dir's exclusive lock, waiting for it: a loader holds it
// while it makes and locks a directory of its own, and removeDeadLoaders
// while it looks for dead loaders', so that it never takes a live
// loader's directory for a dead one's.
func lockRoot(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f, nil
}

// LoadResult is what LoadResident did.
type LoadResult struct {
	Set ResidentSet
	// Already is true when the set was there, complete, and was left
	// as it was.
	Already bool
	// Replaced is true when an incomplete set of that name was there
	// (its directory emptied by hand) and was replaced.
	Replaced bool
	// Mounted names the BPF file system the load mounted, or "".
	Mounted string
}

// LoadResident loads and verifies the programs for a ring of n bytes (0:
// the default) and pins them as this binary's set in dir
// (DefaultResidentDir when empty).
func LoadResident(dir string, n int) (res LoadResult, err error) {
	size, err := ringSize(n)
	if err != nil {
		return res, err
	}
	if dir == "" {
		dir = DefaultResidentDir
	}
	if err := capsError(); err != nil {
		return res, err
	}
	if res.Mounted, err = prepareResidentDir(dir); err != nil {
		return res, fmt.Errorf("capture: %w", err)
	}
	removeDeadLoaders(dir)
	name := setName(size)
	final := filepath.Join(dir, name)
	if _, err := os.Stat(final); err == nil {
		s, err := describeSet(dir, name)
		if err != nil || s.Complete {
			res.Set, res.Already = s, true
			return res, err
		}
		// Incomplete: replaced, unless a record or another loader
		// holds it.
		lock, busy, err := lockDir(final)
		switch {
		case busy:
			return res, fmt.Errorf("capture: resident set %s is incomplete and held by a record or another loader; try again once it is free", name)
		case errors.Is(err, fs.ErrNotExist):
			// Gone meanwhile: load it.
		case err != nil:
			return res, fmt.Errorf("capture: resident set %s: %w", name, err)
		default:
			err = removePins(final)
			lock.Close()
			if err != nil {
				return res, fmt.Errorf("capture: replace incomplete resident set %s: %w", name, err)
			}
			res.Replaced = true
		}
	}

	// Pinned in a directory of its own, renamed into place once complete:
	// a set is whole or absent, however the loader ends. The loader
	// holds the directory's lock while it works: a directory whose lock
	// can be taken is a dead loader's (removeDeadLoaders).
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-%s", loadingDir, os.Getpid(), name))
	root, err := lockRoot(dir)
	if err != nil {
		return res, fmt.Errorf("capture: resident directory: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		root.Close()
		return res, fmt.Errorf("capture: resident set: %w", err)
	}
	lock, busy, err := lockDir(tmp)
	root.Close()
	if err != nil || busy {
		os.RemoveAll(tmp)
		if busy {
			err = errors.New("held by another process")
		}
		return res, fmt.Errorf("capture: resident set: %s: %v", tmp, err)
	}
	defer lock.Close()
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	coll, missing, err := load(size, 0)
	if err != nil {
		return res, err
	}
	defer coll.Close()
	pins := map[string]interface{ Pin(string) error }{
		pinEvents:   coll.Maps[vigilBPFMapEvents],
		pinCounters: coll.Maps[vigilBPFMapCounters],
		pinSession:  coll.Maps[bssSection],
	}
	for _, p := range probeTable {
		if _, ok := missing[p.prog]; ok {
			continue
		}
		pins[pinProg+p.prog] = coll.Programs[p.prog]
	}
	for name, obj := range pins {
		if err := obj.Pin(filepath.Join(tmp, name)); err != nil {
			return res, fmt.Errorf("capture: pin %s: %w", name, err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr == nil {
			// Another loader finished first; its set is the same.
			os.RemoveAll(tmp)
			res.Set, err = describeSet(dir, name)
			res.Already = true
			return res, err
		}
		return res, fmt.Errorf("capture: resident set: %w", err)
	}
	res.Set, err = describeSet(dir, name)
	return res, err
}

// removeDeadLoaders removes the directories of loaders that died before
// their set was complete: a live loader holds its directory's lock.
func removeDeadLoaders(dir string) {
	root, err := lockRoot(dir)
	if err != nil {
		return
	}
	defer root.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), loadingDir) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if lock, busy, err := lockDir(p); err == nil && !busy {
			removePins(p)
			lock.Close()
		}
	}
}

// removePins unpins what a set's directory (or a loader's) holds and
// removes it. Anything there that a set does not hold is left, and so is
// the directory then.
func removePins(p string) error {
	ents, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !(strings.HasPrefix(n, "map_") || strings.HasPrefix(n, pinProg)) {
			return fmt.Errorf("%s holds %s, which is not a resident set's; left as it is", p, n)
		}
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(p, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(p)
}

// describeSet reads what dir/name holds.
func describeSet(dir, name string) (ResidentSet, error) {
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if err != nil {
		return ResidentSet{}, err
	}
	s := ResidentSet{Name: name, Dir: p, LoadedAt: fi.ModTime()}
	if _, size, ok := strings.Cut(name, "-"); ok {
		s.Current = s.Name == currentSetFor(size)
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return ResidentSet{}, err
	}
	progs := map[string]*ebpf.Program{}
	defer func() {
		for _, prog := range progs {
			prog.Close()
		}
	}()
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), pinProg)
		if !ok {
			continue
		}
		s.Programs = append(s.Programs, name)
		if prog, err := ebpf.LoadPinnedProgram(filepath.Join(p, e.Name()), nil); err == nil {
			progs[name] = prog
		}
	}
	slices.Sort(s.Programs)
	s.Complete = setMapsOK(p, name)
	for _, pr := range probeTable {
		s.Complete = s.Complete && (!pr.required || progs[pr.prog] != nil)
	}
	var ids map[ebpf.ProgramID]string
	attached, err := linkedTo(progs, &ids)
	for i := 0; i < 20 && errors.Is(err, unix.EAGAIN); i++ {
		time.Sleep(5 * time.Millisecond) // a link being freed: it goes soon
		attached, err = linkedTo(progs, &ids)
	}
	s.Busy = err == nil && attached != ""
	return s, nil
}

// setMapsOK reports whether the set at p has the maps a capture takes, as
// takeResident checks them.
func setMapsOK(p, name string) bool {
	_, sizeText, _ := strings.Cut(name, "-")
	size, ok := parseSizeName(sizeText)
	if !ok {
		return false
	}
	var maps [3]*ebpf.Map
	defer func() {
		for _, m := range maps {
			if m != nil {
				m.Close()
			}
		}
	}()
	for i, pin := range []string{pinEvents, pinCounters, pinSession} {
		m, err := ebpf.LoadPinnedMap(filepath.Join(p, pin), nil)
		if err != nil {
			return false
		}
		maps[i] = m
	}
	_, err := checkMaps(maps[0], maps[1], maps[2], size)
	return err == nil
}

// ListResident lists the sets in dir (DefaultResidentDir when empty). A
// directory that does not exist holds none.
func ListResident(dir string) ([]ResidentSet, error) {
	if dir == "" {
		dir = DefaultResidentDir
	}
	names, err := setNames(dir)
	if err != nil {
		return nil, err
	}
	var out []ResidentSet
	for _, name := range names {
		s, err := describeSet(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // unloaded meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("capture: resident set %s: %w", name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// setNames lists the sets in dir; a directory that does not exist, or is
// not on a BPF file system, holds none.
func setNames(dir string) ([]string, error) {
	if on, err := isBPFFS(dir); err != nil || !on {
		return nil, nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("capture: resident directory: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && isSetName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// UnloadResident unpins every set in dir (DefaultResidentDir when empty)
// and removes dir once empty. What is there besides sets is left alone. A
// set a capture holds is left, and named in the error: unload it again
// once the capture ends. Its programs stay until no capture holds them.
func UnloadResident(dir string) (removed []string, err error) {
	if dir == "" {
		dir = DefaultResidentDir
	}
	if on, err := isBPFFS(dir); err != nil || !on {
		return nil, nil // no set can be there
	}
	names, err := setNames(dir)
	if err != nil {
		return nil, err
	}
	removeDeadLoaders(dir)
	var busy []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		f, isBusy, err := lockDir(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // unloaded meanwhile
		}
		if err != nil {
			return removed, fmt.Errorf("capture: resident set %s: %w", name, err)
		}
		if isBusy {
			busy = append(busy, name)
			continue
		}
		err = removePins(p)
		f.Close()
		if err != nil {
			return removed, fmt.Errorf("capture: unpin %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	if len(busy) > 0 {
		return removed, fmt.Errorf("capture: resident set %s is held by a running capture; unload again once it ends", strings.Join(busy, ", "))
	}
	// The directory load made; never one on another file system.
	if on, _ := isBPFFS(dir); on {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EBUSY) {
			return removed, fmt.Errorf("capture: resident directory: %w", err)
		}
	}
	return removed, nil
}
