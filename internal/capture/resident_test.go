//go:build linux

package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func init() {
	v2Helpers["linger-outside"] = lingerOutside
	v2Helpers["hold-resident"] = holdResident
}

// residentDir mounts a BPF file system of the test's own and returns a
// directory for resident sets in it; cleanup unmounts it, freeing every
// set pinned there.
func residentDir(t testing.TB) string {
	t.Helper()
	testenv.RequireRoot(t)
	mnt := t.TempDir()
	if err := unix.Mount("bpf", mnt, "bpf", 0, "mode=0700"); err != nil {
		t.Fatalf("mount a BPF file system: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return filepath.Join(mnt, "vigil")
}

func loadResident(t testing.TB, dir string, ringSize int) ResidentSet {
	t.Helper()
	res, err := LoadResident(dir, ringSize)
	if err != nil {
		t.Fatal(err)
	}
	if res.Already || res.Mounted != "" || !res.Set.Complete {
		t.Fatalf("load: %+v", res)
	}
	return res.Set
}

// filesUnder runs the files helper (N files written then read) in a fresh
// cgroup under cfg and returns the finished capture's result.
func filesUnder(t *testing.T, cfg Config, n int) (*Result, *Capture, string) {
	t.Helper()
	cfg.CgroupPath = testCgroup(t)
	c := openCaptureWith(t, cfg)
	work := t.TempDir()
	if err := helper(t, cfg.CgroupPath, "files", work, "f", strconv.Itoa(n), "2").Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cfg.CgroupPath)
	checkComplete(t, r)
	return r, c, filepath.Join(work, "f")
}

// A resident set records a run exactly as programs loaded for it do, the
// first time it is taken and every time after: counts per kind, what was
// opened, and a sequence starting at 0 (checkComplete).
func TestResidentRecordsAsLoaded(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	const n = 300
	fresh, fc, prefix := filesUnder(t, Config{}, n)
	if fc.Programs().Resident {
		t.Fatal("a capture without Resident took the resident set")
	}
	want := countOpens(fresh, prefix)
	if want[wire.AccessWrite] != n || want[wire.AccessRead] != n {
		t.Fatalf("loaded programs: opens by access %v, want %d of each", want, n)
	}
	for round := range 3 {
		r, c, prefix := filesUnder(t, Config{Resident: ResidentRequire, ResidentDir: dir}, n)
		src := c.Programs()
		if !src.Resident || src.Set != set.Name || src.Fallback != "" || src.StaleRecords != 0 {
			t.Fatalf("round %d: programs %+v, want resident set %s", round, src, set.Name)
		}
		if got := countOpens(r, prefix); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: opens by access %v, loaded programs saw %v", round, got, want)
		}
		// The helper's threads vary in number from run to run; its
		// execs do not.
		if r.Emitted[wire.KindExec] != fresh.Emitted[wire.KindExec] {
			t.Errorf("round %d: %d exec records, loaded programs emitted %d", round, r.Emitted[wire.KindExec], fresh.Emitted[wire.KindExec])
		}
		if len(r.ProgramMisses) != 0 {
			t.Errorf("round %d: program misses %v", round, r.ProgramMisses)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// One capture holds a set at a time; a second one loads its own programs
// (auto) or fails (require), and unload leaves a held set alone.
func TestResidentHeldByOne(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	if again, err := LoadResident(dir, 0); err != nil || !again.Already || again.Set.Name != set.Name {
		t.Fatalf("second load: %+v, %v", again, err)
	}
	sets, err := ListResident(dir)
	if err != nil || len(sets) != 1 || !sets[0].Current || sets[0].Busy || len(sets[0].Programs) != len(probeTable) {
		t.Fatalf("sets before any capture: %+v, %v", sets, err)
	}
	first := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
	if !first.Programs().Resident {
		t.Fatalf("first capture: %+v", first.Programs())
	}
	if sets, _ := ListResident(dir); len(sets) != 1 || !sets[0].Busy {
		t.Fatalf("sets while held: %+v", sets)
	}
	second := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentAuto, ResidentDir: dir})
	if src := second.Programs(); src.Resident || !strings.Contains(src.Fallback, "held by another record") {
		t.Fatalf("second capture while the set is held: %+v", src)
	}
	if _, err := Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir}); !errors.Is(err, ErrNoResident) {
		t.Fatalf("require while held: %v, want ErrNoResident", err)
	}
	if removed, err := UnloadResident(dir); err == nil || len(removed) != 0 || !strings.Contains(err.Error(), set.Name) {
		t.Fatalf("unload while held: removed %v, err %v", removed, err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
	third.Close()
	if removed, err := UnloadResident(dir); err != nil || len(removed) != 1 || removed[0] != set.Name {
		t.Fatalf("unload: removed %v, err %v", removed, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("resident directory left after unload: %v", err)
	}
	// Absent: auto loads without a fallback to report; require fails.
	c := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentAuto, ResidentDir: dir})
	if src := c.Programs(); src.Resident || src.Fallback != "" {
		t.Fatalf("auto without a set: %+v", src)
	}
	if _, err := Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir}); !errors.Is(err, ErrNoResident) || !strings.Contains(err.Error(), "vigil resident load") {
		t.Fatalf("require without a set: %v", err)
	}
}

// A set is made for one ring size: another size is another set.
func TestResidentPerRingSize(t *testing.T) {
	dir := residentDir(t)
	small := loadResident(t, dir, 1<<20)
	if !strings.HasSuffix(small.Name, "-1MiB") {
		t.Fatalf("set name %s does not carry its ring size", small.Name)
	}
	c := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentAuto, ResidentDir: dir})
	if src := c.Programs(); src.Resident || !strings.Contains(src.Fallback, small.Name+" (this binary's, for another ring size)") ||
		!strings.Contains(src.Fallback, "(vigil resident load --resident-dir "+dir+")") {
		t.Fatalf("a capture with the default ring and only the 1 MiB set there: %+v", src)
	}
	if _, err := Open(Config{CgroupPath: testCgroup(t), RingSize: 2 << 20, Resident: ResidentRequire, ResidentDir: dir}); !errors.Is(err, ErrNoResident) ||
		!strings.Contains(err.Error(), "vigil resident load --ring-size 2MiB --resident-dir "+dir) {
		t.Fatalf("require a 2 MiB set: %v", err)
	}
	if big := setName(DefaultRingSize); strings.Split(big, "-")[0] != strings.Split(small.Name, "-")[0] {
		t.Fatalf("sets %s and %s of one binary differ beyond their ring size", big, small.Name)
	}
	c = openCaptureWith(t, Config{CgroupPath: testCgroup(t), RingSize: 1 << 20, Resident: ResidentRequire, ResidentDir: dir})
	if got := c.objs.events.MaxEntries(); got != 1<<20 {
		t.Fatalf("ring of the 1 MiB set is %d bytes", got)
	}
}

// A program missing from a set is reported as such: an optional one in
// Probes, a required one fails Open.
func TestResidentMissingProgram(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	if err := os.Remove(filepath.Join(set.Dir, pinProg+vigilBPFProgHandleIoUringComplete)); err != nil {
		t.Fatal(err)
	}
	c, err := Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range c.Probes() {
		if p.Name == "tp_btf/io_uring_complete" {
			found = !p.Attached && strings.Contains(p.Error, "not in resident set")
		}
	}
	c.Close()
	if !found {
		t.Fatalf("probes %+v: io_uring_complete not reported missing from the set", c.Probes())
	}
	if err := os.Remove(filepath.Join(set.Dir, pinProg+vigilBPFProgHandleSysExit)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir}); !errors.Is(err, ErrNotAttached) {
		t.Fatalf("set without sys_exit: %v, want ErrNotAttached", err)
	}
}

// A set whose programs someone attached without holding it (a holder the
// kernel is still tearing down, or another tool) is not taken: its
// programs would run for that link too.
func TestResidentAttachedElsewhereNotTaken(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	prog, err := ebpf.LoadPinnedProgram(filepath.Join(set.Dir, pinProg+vigilBPFProgHandleExit), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	l, err := link.AttachTracing(link.TracingOptions{Program: prog})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
	if !errors.Is(err, ErrNoResident) || !strings.Contains(err.Error(), "handle_exit is attached by another process") {
		t.Fatalf("set attached elsewhere: %v", err)
	}
	// Nobody holds the lock, but the programs run: status says busy.
	if sets, err := ListResident(dir); err != nil || len(sets) != 1 || !sets[0].Busy {
		t.Fatalf("list while attached elsewhere: %+v, %v", sets, err)
	}
	l.Close()
	c := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
	if !c.Programs().Resident {
		t.Fatal("set not taken once the other link was gone")
	}
}

// What a set's programs do depends on more than the object: the syscall
// tables the loader fills in, the wakeup threshold and the loader itself
// (the binary's build ID). A change in any of them is another set.
func TestResidentIdentity(t *testing.T) {
	if goBuildID() == "" {
		t.Fatal("no Go build ID read from /proc/self/exe")
	}
	base := identityOf([]byte("obj"), syscallTable, compatCalls(), 8, "id")
	other := map[int]sysdesc{}
	for k, v := range syscallTable {
		other[k] = v
	}
	for k := range other {
		delete(other, k)
		break
	}
	for name, id := range map[string][]byte{
		"object":        identityOf([]byte("obj2"), syscallTable, compatCalls(), 8, "id"),
		"syscall table": identityOf([]byte("obj"), other, compatCalls(), 8, "id"),
		"compat table":  identityOf([]byte("obj"), syscallTable, map[int]sysdesc{1: {}}, 8, "id"),
		"wakeup":        identityOf([]byte("obj"), syscallTable, compatCalls(), 4, "id"),
		"build ID":      identityOf([]byte("obj"), syscallTable, compatCalls(), 8, "id2"),
	} {
		if bytes.Equal(id, base) {
			t.Errorf("a different %s gives the same set", name)
		}
	}
	if !bytes.Equal(base, identityOf([]byte("obj"), syscallTable, compatCalls(), 8, "id")) {
		t.Error("the same inputs give another set")
	}
	if !bytes.Equal(loaderIdentity(), identityOf(_VigilBPFBytes, syscallTable, compatCalls(), wakeupFraction, goBuildID())) {
		t.Error("a set's name is not made of every input identityOf takes")
	}
}

func TestIsSetName(t *testing.T) {
	for name, want := range map[string]bool{
		"a880b74affec5b4e-8MiB": true, "a880b74affec5b4e-1024KiB": true, "a880b74affec5b4e-4096": true,
		"a880b74affec5b4e-": false, "a880b74affec5b4e": false, "A880b74affec5b4e-8MiB": false,
		"a880b74affec5b4-8MiB": false, "a880b74affec5b4e-8GiB": false, "tc": false, "loading-1-a880b74affec5b4e-8MiB": false,
	} {
		if isSetName(name) != want {
			t.Errorf("isSetName(%q) = %v", name, !want)
		}
	}
}

// Unload removes sets and nothing else a resident directory holds (here
// another tool's pins), and list shows sets only. A dead loader's
// half-made set goes; a live loader's stays.
func TestResidentUnloadLeavesOthersAlone(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	foreign := filepath.Join(dir, "tc", "globals")
	if err := os.MkdirAll(foreign, 0o700); err != nil {
		t.Fatal(err)
	}
	// A map has one pin at a time (pinning it again moves it): one each.
	pinMap := func(at string) {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.Pin(at); err != nil {
			t.Fatal(err)
		}
	}
	pinMap(filepath.Join(foreign, "x"))
	dead := filepath.Join(dir, loadingDir+"1-"+set.Name)
	live := filepath.Join(dir, loadingDir+"2-"+set.Name)
	for _, d := range []string{dead, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		pinMap(filepath.Join(d, pinEvents))
	}
	lock, _, err := lockDir(live)
	if err != nil || lock == nil {
		t.Fatalf("lock %s: %v", live, err)
	}
	sets, err := ListResident(dir)
	if err != nil || len(sets) != 1 || sets[0].Name != set.Name {
		t.Fatalf("list: %+v, %v", sets, err)
	}
	removed, err := UnloadResident(dir)
	if err != nil || len(removed) != 1 || removed[0] != set.Name {
		t.Fatalf("unload: %v, %v", removed, err)
	}
	for p, want := range map[string]bool{filepath.Join(foreign, "x"): true, dead: false, live: true, set.Dir: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: there %v after unload, want %v", p, err == nil, want)
		}
	}
	lock.Close()
	if _, err := UnloadResident(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); err == nil {
		t.Error("a dead loader's directory stayed")
	}
	// A directory on another file system holds no set, whatever it
	// holds: unload removes nothing of it, list lists nothing.
	plain := t.TempDir()
	lookalike := filepath.Join(plain, "0123456789abcdef-8MiB")
	for _, p := range []string{lookalike, filepath.Join(plain, loadingDir+"1-x")} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "map_important"), []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if sets, err := ListResident(plain); err != nil || len(sets) != 0 {
		t.Fatalf("list of a plain directory: %+v, %v", sets, err)
	}
	if removed, err := UnloadResident(plain); err != nil || len(removed) != 0 {
		t.Fatalf("unload of a plain directory: %v, %v", removed, err)
	}
	for _, p := range []string{filepath.Join(lookalike, "map_important"), filepath.Join(plain, loadingDir+"1-x", "map_important")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("unload of a plain directory removed %s", p)
		}
	}
}

// A set emptied by hand is listed as incomplete, and load replaces it.
func TestResidentIncompleteReplaced(t *testing.T) {
	dir := residentDir(t)
	set := loadResident(t, dir, 0)
	if err := os.Remove(filepath.Join(set.Dir, pinSession)); err != nil {
		t.Fatal(err)
	}
	if sets, err := ListResident(dir); err != nil || len(sets) != 1 || sets[0].Complete {
		t.Fatalf("list: %+v, %v", sets, err)
	}
	res, err := LoadResident(dir, 0)
	if err != nil || res.Already || !res.Replaced || !res.Set.Complete {
		t.Fatalf("load over an incomplete set: %+v, %v", res, err)
	}
	openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
}

// A set whose maps were replaced (the session map not memory-mapped, the
// counters of another size) is refused, and the capture loads its own
// programs: no panic, the reason said; status calls it incomplete.
func TestResidentBadMapsRefused(t *testing.T) {
	for pin, spec := range map[string]*ebpf.MapSpec{
		pinSession:  {Type: ebpf.Array, KeySize: 4, ValueSize: 32, MaxEntries: 1},
		pinCounters: {Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 3},
	} {
		dir := residentDir(t)
		set := loadResident(t, dir, 0)
		if err := os.Remove(filepath.Join(set.Dir, pin)); err != nil {
			t.Fatal(err)
		}
		m, err := ebpf.NewMap(spec)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.Pin(filepath.Join(set.Dir, pin)); err != nil {
			t.Fatal(err)
		}
		if sets, err := ListResident(dir); err != nil || len(sets) != 1 || sets[0].Complete {
			t.Fatalf("%s replaced: list %+v, %v", pin, sets, err)
		}
		c := openCaptureWith(t, Config{CgroupPath: testCgroup(t), Resident: ResidentAuto, ResidentDir: dir})
		if src := c.Programs(); src.Resident || !strings.Contains(src.Fallback, pin) {
			t.Fatalf("%s replaced: programs %+v, want loaded with a fallback naming it", pin, src)
		}
	}
}

// A BPF file system mounted at the resident directory itself serves; a
// name with a dot, which such a file system refuses, is said so.
func TestResidentDirectories(t *testing.T) {
	mnt := filepath.Dir(residentDir(t))
	res, err := LoadResident(mnt, 1<<20)
	if err != nil || !res.Set.Complete || filepath.Dir(res.Set.Dir) != mnt {
		t.Fatalf("load at a mount root: %+v, %v", res, err)
	}
	if _, err := LoadResident(filepath.Join(mnt, "sets.d"), 0); err == nil || !strings.Contains(err.Error(), "refuses names with a dot") {
		t.Fatalf("load into a name with a dot: %v", err)
	}
	if removed, err := UnloadResident(mnt); err != nil || len(removed) != 1 {
		t.Fatalf("unload at a mount root: %v, %v", removed, err)
	}
}

// A finished capture lets the next one take the set while its caller
// still writes its archive (before Close).
func TestResidentReleasedAtFinish(t *testing.T) {
	dir := residentDir(t)
	loadResident(t, dir, 0)
	cg := testCgroup(t)
	first := openCaptureWith(t, Config{CgroupPath: cg, Resident: ResidentRequire, ResidentDir: dir})
	finish(t, first, cg)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := Open(Config{CgroupPath: testCgroup(t), Resident: ResidentRequire, ResidentDir: dir})
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("set not released after Finish: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A link the kernel is freeing cannot be opened, and stops the listing of
// links (EAGAIN): taking a set waits for it to go (it was seen failing a
// take while other tests detached links), and says so if it never does.
func TestAwaitUnattachedLinkBeingFreed(t *testing.T) {
	defer func(f func(map[string]*ebpf.Program, *map[ebpf.ProgramID]string) (string, error)) { linkedTo = f }(linkedTo)
	calls := 0
	linkedTo = func(map[string]*ebpf.Program, *map[ebpf.ProgramID]string) (string, error) {
		calls++
		if calls < 3 {
			return "", fmt.Errorf("list the kernel's links: get link fd from ID 7: %w", unix.EAGAIN)
		}
		return "", nil
	}
	if err := awaitUnattached(nil); err != nil || calls != 3 {
		t.Fatalf("after two listings stopped by a link being freed: %v (%d listings)", err, calls)
	}
	linkedTo = func(map[string]*ebpf.Program, *map[ebpf.ProgramID]string) (string, error) {
		return "", fmt.Errorf("list the kernel's links: %w", unix.EAGAIN)
	}
	if err := awaitUnattached(nil); !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("a link never freed: %v", err)
	}
}

// Hostile: a task of an earlier session, still alive and busy outside any
// session, is not the next session's, though the same programs serve it
// and its tracked entry lives on.
func TestResidentEarlierSessionTaskNotCaptured(t *testing.T) {
	dir := residentDir(t)
	loadResident(t, dir, 0)
	first := testCgroup(t)
	outside := testCgroup(t)
	c := openCaptureWith(t, Config{CgroupPath: first, Resident: ResidentRequire, ResidentDir: dir})
	marker := filepath.Join(t.TempDir(), "lingerer")
	cmd := helper(t, first, "linger-outside", outside, marker)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "outside\n" {
		t.Fatalf("helper said %q", line)
	}
	r := finish(t, c, first)
	if r.LiveTasks < 1 {
		t.Fatalf("first session: live tasks %d, want the lingerer", r.LiveTasks)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	before := fileSize(t, marker)
	r2, c2, prefix := filesUnder(t, Config{Resident: ResidentRequire, ResidentDir: dir}, 50)
	if !c2.Programs().Resident {
		t.Fatal("second session did not take the set")
	}
	// The lingerer must have been busy during the second session.
	deadline := time.Now().Add(5 * time.Second)
	for fileSize(t, marker) < before+10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if after := fileSize(t, marker); after < before+10 {
		t.Fatalf("the lingerer appended %d bytes meanwhile; it must be running for this test to mean anything", after-before)
	}
	if got := countOpens(r2, prefix); got[wire.AccessWrite] != 50 {
		t.Fatalf("second session: opens %v, want its own 50 writes", got)
	}
	for _, e := range r2.Events {
		if e.PID == uint32(cmd.Process.Pid) {
			t.Fatalf("second session recorded the first session's task: %+v", e)
		}
	}
	if r2.LiveTasks != 0 {
		t.Errorf("second session: live tasks %d, want 0 (the lingerer is not its own)", r2.LiveTasks)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Hostile: a holder killed with records still in the ring leaves them
// there; the next capture discards and counts them before it attaches, and
// none of them reaches its layer.
func TestResidentStaleRecordsDiscarded(t *testing.T) {
	dir := residentDir(t)
	loadResident(t, dir, 0)
	cg := testCgroup(t)
	work := t.TempDir()
	holder := helper(t, "", "hold-resident", dir, cg, work)
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		holder.Process.Kill()
		holder.Wait()
		t.Fatalf("holder said %q", line)
	}
	holder.Process.Signal(unix.SIGKILL)
	holder.Wait()

	r, c, _ := filesUnder(t, Config{Resident: ResidentRequire, ResidentDir: dir}, 20)
	src := c.Programs()
	if !src.Resident || src.StaleRecords == 0 {
		t.Fatalf("after a killed holder: programs %+v, want the set with stale records discarded", src)
	}
	for _, e := range r.Events {
		if e.Kind == wire.KindOpen && strings.HasPrefix(string(e.Open.Path()), work) {
			t.Fatalf("the killed holder's record reached the next capture: %+v", e)
		}
	}
	t.Logf("stale records discarded: %d", src.StaleRecords)
}

// The session state must be where sessionState reads it: at offset 0 of
// .bss, with the generated layout's size, sharing its bytes with nothing.
func TestSessionIsAloneInBSS(t *testing.T) {
	spec, err := embeddedSpec.get()
	if err != nil {
		t.Fatal(err)
	}
	v := spec.Variables["session"]
	if v == nil || v.SectionName != bssSection || v.Offset != 0 || uintptr(v.Size()) != unsafe.Sizeof(sessionLayout) {
		t.Fatalf("session variable %+v", v)
	}
	for name, o := range spec.Variables {
		if o.SectionName == bssSection && name != "session" && uintptr(o.Offset) < unsafe.Sizeof(sessionLayout) {
			t.Errorf("variable %s overlaps session in %s at offset %d", name, bssSection, o.Offset)
		}
	}
}

// lingerOutside OUTSIDE MARKER: moves to cgroup OUTSIDE, says so, then
// opens MARKER and appends a byte to it every millisecond until killed.
func lingerOutside(args []string) error {
	if err := moveOutside(args[0], args[1]); err != nil {
		return err
	}
	for {
		f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		f.Write([]byte{'.'})
		f.Close()
		time.Sleep(time.Millisecond)
	}
}

// holdResident DIR CGROUP WORK: takes the resident set in DIR for a capture
// of CGROUP, stops reading its ring, runs a workload writing files in WORK
// inside CGROUP, says "held" and waits to be killed: the workload's
// records stay in the ring.
func holdResident(args []string) error {
	c, err := Open(Config{CgroupPath: args[1], Resident: ResidentRequire, ResidentDir: args[0]})
	if err != nil {
		return err
	}
	if err := c.rd.Close(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cg, err := os.Open(args[1])
	if err != nil {
		return err
	}
	cmd := exec.Command(self, args[2], "f", "2000", "2")
	cmd.Env = append(os.Environ(), testenv.HelperEnv("files"))
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(cg.Fd())}
	if err := cmd.Run(); err != nil {
		return err
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
	return nil
}
