//go:build linux

package capture

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

func setName(size uint32) string {
	h := sha256.New()
	h.Write(_VigilBPFBytes)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], size)
	h.Write(b[:])
	return fmt.Sprintf("%s-%s", hex.EncodeToString(h.Sum(nil)[:8]), sizeName(size))
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
	// Busy is true when a capture (or a loader) holds the set now.
	Busy bool
	// Programs lists the pinned programs.
	Programs []string
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
func prepareResidentDir(dir string) error {
	parent := filepath.Dir(dir)
	on, err := isBPFFS(parent)
	if err != nil {
		return fmt.Errorf("resident directory %s: %w", dir, err)
	}
	if !on && parent == "/sys/fs/bpf" {
		if err := unix.Mount("bpf", parent, "bpf", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0700"); err != nil {
			return fmt.Errorf("mount a BPF file system on %s: %w", parent, err)
		}
		on = true
	}
	if !on {
		return fmt.Errorf("resident directory %s: %s is not on a BPF file system (mount -t bpf bpf DIR)", dir, parent)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("resident directory: %w", err)
	}
	return nil
}

// lockDir opens dir and takes an exclusive flock on it without waiting.
// busy is true when another process holds it.
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
	return f, false, nil
}

// LoadResident loads and verifies the programs for a ring of n bytes (0:
// the default) and pins them as this binary's set in dir
// (DefaultResidentDir when empty). It returns the set, and whether it was
// there already (and so left as it was).
func LoadResident(dir string, n int) (set ResidentSet, already bool, err error) {
	size, err := ringSize(n)
	if err != nil {
		return ResidentSet{}, false, err
	}
	if dir == "" {
		dir = DefaultResidentDir
	}
	if err := capsError(); err != nil {
		return ResidentSet{}, false, err
	}
	if err := prepareResidentDir(dir); err != nil {
		return ResidentSet{}, false, fmt.Errorf("capture: %w", err)
	}
	removeDeadLoaders(dir)
	name := setName(size)
	final := filepath.Join(dir, name)
	if _, err := os.Stat(final); err == nil {
		s, err := describeSet(dir, name)
		return s, true, err
	}

	// Pinned in a directory of its own, renamed into place once complete:
	// a set is whole or absent, however the loader ends.
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d-%s", loadingDir, os.Getpid(), name))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return ResidentSet{}, false, fmt.Errorf("capture: resident set: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	coll, missing, err := load(size, 0)
	if err != nil {
		return ResidentSet{}, false, err
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
			return ResidentSet{}, false, fmt.Errorf("capture: pin %s: %w", name, err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr == nil {
			// Another loader finished first; its set is the same.
			os.RemoveAll(tmp)
			s, err := describeSet(dir, name)
			return s, true, err
		}
		return ResidentSet{}, false, fmt.Errorf("capture: resident set: %w", err)
	}
	s, err := describeSet(dir, name)
	return s, false, err
}

// removeDeadLoaders removes the directories of loaders that died before
// their set was complete.
func removeDeadLoaders(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), loadingDir)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if unix.Kill(pid, 0) == unix.ESRCH {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
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
	for _, e := range ents {
		if prog, ok := strings.CutPrefix(e.Name(), pinProg); ok {
			s.Programs = append(s.Programs, prog)
		}
	}
	slices.Sort(s.Programs)
	f, busy, err := lockDir(p)
	if err == nil && f != nil {
		f.Close()
	}
	s.Busy = busy
	return s, nil
}

// currentSetFor is this binary's set name for the ring size a set name
// carries ("8MiB"), or "" when it is not one.
func currentSetFor(size string) string {
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
		return ""
	}
	return setName(uint32(n))
}

// ListResident lists the sets in dir (DefaultResidentDir when empty). A
// directory that does not exist holds none.
func ListResident(dir string) ([]ResidentSet, error) {
	if dir == "" {
		dir = DefaultResidentDir
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("capture: resident directory: %w", err)
	}
	var out []ResidentSet
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), loadingDir) {
			continue
		}
		s, err := describeSet(dir, e.Name())
		if err != nil {
			return nil, fmt.Errorf("capture: resident set %s: %w", e.Name(), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// UnloadResident unpins every set in dir (DefaultResidentDir when empty)
// and removes dir. A set a capture holds is left, and named in the error;
// its programs are freed once unpinned and no capture holds them.
func UnloadResident(dir string) (removed []string, err error) {
	if dir == "" {
		dir = DefaultResidentDir
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("capture: resident directory: %w", err)
	}
	removeDeadLoaders(dir)
	var busy []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), loadingDir) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, isBusy, err := lockDir(p)
		if err != nil {
			return removed, fmt.Errorf("capture: resident set %s: %w", e.Name(), err)
		}
		if isBusy {
			busy = append(busy, e.Name())
			continue
		}
		err = os.RemoveAll(p)
		f.Close()
		if err != nil {
			return removed, fmt.Errorf("capture: unpin %s: %w", e.Name(), err)
		}
		removed = append(removed, e.Name())
	}
	if len(busy) > 0 {
		return removed, fmt.Errorf("capture: resident set %s is held by a running capture; unload it once that ends", strings.Join(busy, ", "))
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTEMPTY) {
		return removed, fmt.Errorf("capture: resident directory: %w", err)
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

// residentObjects is a resident set taken by one capture.
type residentObjects struct {
	lock     *os.File
	events   *ebpf.Map
	counters *ebpf.Map
	session  *ebpf.Map
	programs map[string]*ebpf.Program
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
	if r.lock != nil {
		r.lock.Close() // releases the flock
	}
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
			return nil, fmt.Errorf("%w %s in %s (vigil resident load)", errResidentAbsent, name, dir)
		}
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	lock, busy, err := lockDir(p)
	if err != nil {
		return nil, fmt.Errorf("resident set %s: %w", name, err)
	}
	if busy {
		return nil, fmt.Errorf("resident set %s is held by another capture", name)
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
	if taken.events.MaxEntries() != size {
		return nil, fmt.Errorf("resident set %s: ring is %d bytes, not %d", name, taken.events.MaxEntries(), size)
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

// awaitUnattached makes sure no link uses the set's programs: a holder the
// kernel killed releases its flock and its links as it exits, in no
// promised order. It waits up to 100 ms for such links to go.
func awaitUnattached(progs map[string]*ebpf.Program) error {
	var ids map[ebpf.ProgramID]string
	deadline := time.Now().Add(100 * time.Millisecond)
	for {
		attached, err := attachedTo(progs, &ids)
		if err != nil {
			return err
		}
		if attached == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("program %s is attached by another process", attached)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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
