//go:build linux

package capture

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// A resident set is the capture programs and the maps user space needs,
// loaded and verified once and pinned in a BPF file system, so that a
// capture can skip what costs most in Open: parsing the object and the
// kernel's BTF, and the verifier. Programs are attached only while a
// capture holds the set, so tasks outside any session pay nothing between
// captures, exactly as without a set.
//
// One capture at a time holds a set: it takes an exclusive flock on the
// set's directory, and a capture that finds it held loads its own
// programs instead. Everything a session sets or counts is reset when a
// capture takes the set (struct vigil_session, the counters, records an
// earlier holder left in the ring); tracked-task entries an earlier
// session left on tasks still alive are told apart by the session's
// generation.
//
// A set is named after the embedded BPF object's hash and the ring size,
// so a vigil built from other programs never uses it. Whoever can write
// the BPF file system can replace a set, as they could replace vigil
// itself or load any program; the set is trusted as the binary is.

// DefaultResidentDir is where resident sets are pinned by default.
const DefaultResidentDir = "/sys/fs/bpf/vigil"

// ResidentMode says whether Open may take a resident set.
type ResidentMode int

const (
	// ResidentOff loads the programs for this capture.
	ResidentOff ResidentMode = iota
	// ResidentAuto takes this binary's resident set when there is one
	// and no other capture holds it; otherwise it loads the programs.
	ResidentAuto
	// ResidentRequire takes the resident set or fails.
	ResidentRequire
)

// ErrNoResident is returned (wrapped) by Open with ResidentRequire when the
// resident set cannot be taken.
var ErrNoResident = errors.New("resident set unavailable")

// errResidentAbsent: there is no set to take, which for ResidentAuto is
// no fallback.
var errResidentAbsent = errors.New("no resident set")

// Pin names inside a set's directory.
const (
	pinEvents   = "map_events"
	pinCounters = "map_counters"
	pinSession  = "map_session"
	pinProg     = "prog_"
	loadingDir  = "loading-" // bpffs refuses names with a dot
)

// ProgramSource says where a capture's programs came from.
type ProgramSource struct {
	// Resident is true when the programs are a resident set's.
	Resident bool
	// Set names the resident set (Resident), or the one asked for.
	Set string
	// Fallback says why a resident set that was there was not used
	// (ResidentAuto); empty when it was used, absent, or not asked for.
	Fallback string
	// StaleRecords counts records an earlier holder of the set left in
	// its ring (it died before reading them); they were discarded before
	// this capture's programs were attached.
	StaleRecords uint64
}

// ResidentSetName names the set this binary's programs make with a ring
// of n bytes (0: the default).
func ResidentSetName(n int) (string, error) {
	size, err := ringSize(n)
	if err != nil {
		return "", err
	}
	return setName(size), nil
}

// setName names the set of this binary for a ring of size bytes: a hash
// of everything else that decides what the pinned programs do
// (loaderIdentity), the same for every ring size, and the ring size.
func setName(size uint32) string {
	return fmt.Sprintf("%s-%s", hex.EncodeToString(loaderIdentity()[:8]), sizeName(size))
}

// isSetName reports whether name is a set's (16 lowercase hex digits, a
// dash, a ring size); anything else in a resident directory is not
// vigil's, and is left alone.
func isSetName(name string) bool {
	hash, size, ok := strings.Cut(name, "-")
	if !ok || len(hash) != 16 || strings.Trim(hash, "0123456789abcdef") != "" {
		return false
	}
	size = strings.TrimSuffix(strings.TrimSuffix(size, "KiB"), "MiB")
	return size != "" && strings.Trim(size, "0123456789") == ""
}

// loaderIdentity is what a set's programs depend on besides the ring
// size: the BPF object, what the loader fills in (the syscall tables, the
// wakeup threshold) and, standing for the loader code itself (the CO-RE
// projection, cilium/ebpf), the Go build ID of the running binary. A vigil
// that differs in any of them never takes the set.
var loaderIdentity = sync.OnceValue(func() []byte {
	return identityOf(_VigilBPFBytes, syscallTable, compatCalls(), wakeupFraction, goBuildID())
})

func identityOf(object []byte, native, compat map[int]sysdesc, wakeup int, buildID string) []byte {
	h := sha256.New()
	h.Write(object)
	// fmt prints maps sorted by key.
	fmt.Fprintf(h, "\x00%v\x00%v\x00%d\x00%s", native, compat, wakeup, buildID)
	return h.Sum(nil)
}

// goBuildID reads the Go build ID of the running binary, or "" when it
// cannot.
func goBuildID() string {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	data, err := sec.Data()
	// A note: name size, description size, type, "Go\x00\x00", the ID.
	if err != nil || len(data) < 16 {
		return ""
	}
	return string(data[16:])
}

// sizeName is the ring size as the set name carries it, e.g. 8MiB.
func sizeName(size uint32) string {
	switch {
	case size >= 1<<20 && size%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", size>>20)
	case size%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", size>>10)
	}
	return strconv.FormatUint(uint64(size), 10)
}

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

// currentSetFor is this binary's set name for the ring size a set name
// carries ("8MiB"), or "" when it is not one.
func currentSetFor(size string) string {
	n, ok := parseSizeName(size)
	if !ok {
		return ""
	}
	return setName(n)
}

// parseSizeName reads a ring size as a set name carries it (sizeName).
func parseSizeName(size string) (uint32, bool) {
	var n uint64
	var err error
	switch {
	case strings.HasSuffix(size, "MiB"):
		n, err = strconv.ParseUint(strings.TrimSuffix(size, "MiB"), 10, 32)
		n <<= 20
	case strings.HasSuffix(size, "KiB"):
		n, err = strconv.ParseUint(strings.TrimSuffix(size, "KiB"), 10, 32)
		n <<= 10
	default:
		n, err = strconv.ParseUint(size, 10, 32)
	}
	if err != nil || n == 0 || n > 1<<30 {
		return 0, false
	}
	return uint32(n), true
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
	_, err = os.Stat(filepath.Join(dir, setName(size)))
	return err == nil
}

// absentError says that this binary has no set for a ring of size bytes in
// dir, how to load one, and which sets are there instead.
func absentError(dir string, size uint32) error {
	load := "vigil resident load"
	if size != DefaultRingSize {
		load += " --ring-size " + sizeName(size)
	}
	if dir != DefaultResidentDir {
		load += " --resident-dir " + dir
	}
	err := fmt.Errorf("%w %s in %s (%s)", errResidentAbsent, setName(size), dir, load)
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
