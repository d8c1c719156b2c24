//go:build linux

package capture

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// runHelperIn runs a helper mode in a fresh test cgroup under a capture
// and returns its output and the finished capture.
func runHelperIn(t *testing.T, mode string, args ...string) (string, *Result, *Capture) {
	t.Helper()
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	// Through a sink, as a recording takes them: in seq order, from
	// blocks reused once the sink returns (the structs are copied; what
	// they point to is never written again).
	var got []wire.Kernel
	c := openCaptureWith(t, Config{CgroupPath: cg, Sink: func(ev []wire.Kernel) { got = append(got, ev...) }})
	cmd := helper(t, cg, mode, args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("helper %s: %v: %s", mode, err, stderr)
	}
	r := finish(t, c, cg)
	if r.Events != nil {
		t.Fatalf("Finish returned %d events although the sink took them", len(r.Events))
	}
	r.Events = got
	checkComplete(t, r)
	return string(out), r, c
}

func eventsOf(r *Result, kind wire.Kind) []wire.Kernel {
	var out []wire.Kernel
	for _, e := range r.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// A thread rewrites the name while the open blocks on a FIFO: the archive
// must name the FIFO that was opened, never the decoy written into the
// caller's memory afterwards.
func TestTOCTOUOpenRecordsTheOpenedFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	out, r, _ := runHelperIn(t, "toctou-open", fifo, "/etc/hostname")
	f := strings.Fields(out)
	if len(f) != 3 || f[2] != fifo {
		t.Fatalf("helper output %q: the workload did not open the FIFO", out)
	}
	tid, _ := strconv.Atoi(f[0])
	fd, _ := strconv.Atoi(f[1])
	var found bool
	for _, e := range eventsOf(r, wire.KindOpen) {
		if e.TID != uint32(tid) {
			continue
		}
		if o := e.Open; o.File != nil && o.File.Path == "/etc/hostname" {
			t.Errorf("the archive says the workload opened /etc/hostname: %+v", o)
		}
		if o := e.Open; o.Ret == int64(fd) {
			found = true
			if o.File == nil || string(o.File.Path) != fifo {
				t.Errorf("open returning fd %d recorded as %+v, want the FIFO %s", fd, o.File, fifo)
			}
			// The name read back from the caller's memory is the decoy:
			// it is kept, labelled as what the caller's buffer held.
			t.Logf("requested (caller's memory after the call): %q; file (kernel): %q", o.Name.Requested, o.File.Path)
		}
	}
	if !found {
		t.Fatalf("no open event for fd %d of tid %d", fd, tid)
	}
}

// Many opens through a buffer another thread flips between two names:
// every recorded file must be the one the kernel really opened.
func TestRacingNameNeverMisrecorded(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "file-a"), filepath.Join(dir, "file-b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20000
	out, r, _ := runHelperIn(t, "race-open", a, b, strconv.Itoa(n))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tid, _ := strconv.Atoi(lines[0])
	truth := lines[1:]
	var got []string
	requestedDiffers := 0
	for _, e := range eventsOf(r, wire.KindOpen) {
		if e.TID != uint32(tid) || e.Open.File == nil || !strings.HasPrefix(string(e.Open.File.Path), dir) {
			continue
		}
		got = append(got, string(e.Open.File.Path))
		if string(e.Open.Name.Requested) != string(e.Open.File.Path) {
			requestedDiffers++
		}
	}
	if len(got) != len(truth) || len(truth) != n {
		t.Fatalf("%d opens recorded, %d performed (want %d)", len(got), len(truth), n)
	}
	wrong := 0
	for i := range truth {
		if got[i] != truth[i] {
			wrong++
		}
	}
	if wrong != 0 {
		t.Fatalf("%d of %d opens recorded with a file other than the one opened", wrong, n)
	}
	// The race is real: the caller's buffer often no longer held the
	// name the kernel used by the time the call returned.
	t.Logf("%d of %d opens: the caller's buffer named the other file at return (kept as requested, not as the file)", requestedDiffers, n)
}

// Connects through a sockaddr another thread rewrites: every recorded
// destination must be the peer the kernel connected to.
func TestRacingSockaddrNeverMisrecorded(t *testing.T) {
	const n = 2000
	out, r, _ := runHelperIn(t, "race-connect", strconv.Itoa(n))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tid, _ := strconv.Atoi(lines[0])
	truth := lines[1:]
	var got []string
	interrupted := 0
	for _, e := range eventsOf(r, wire.KindConnect) {
		if e.TID != uint32(tid) {
			continue
		}
		// A signal (the Go runtime's preemption) can interrupt a connect;
		// the kernel runs it again and that run is recorded too.
		if wire.Interrupted(e.Net.Ret) {
			if e.Net.AddrFrom != "caller" {
				t.Fatalf("interrupted connect recorded as %+v, want its address labelled as the caller's", e.Net)
			}
			interrupted++
			continue
		}
		if e.Net.AddrFrom != "socket" || e.Net.Ret != 0 || e.Net.Addr != "127.0.0.1" {
			t.Fatalf("connect recorded as %+v, want the socket's peer", e.Net)
		}
		got = append(got, strconv.Itoa(int(e.Net.Port)))
	}
	if len(got) != n || len(truth) != n {
		t.Fatalf("%d connects recorded, %d performed, want %d", len(got), len(truth), n)
	}
	for i := range truth {
		if got[i] != truth[i] {
			t.Fatalf("connect %d recorded to port %s, the kernel connected to %s", i, got[i], truth[i])
		}
	}
	t.Logf("%d connects interrupted and restarted", interrupted)
}

// open(2) and creat(2), which musl's fopen and creat use on x86_64.
func TestLegacyOpenAndCreat(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Fatalf("open(2) and creat(2) exist only on amd64 of the supported architectures; this test is for amd64 hosts (GOARCH %s)", runtime.GOARCH)
	}
	dir := t.TempDir()
	_, r, _ := runHelperIn(t, "legacy-open", dir)
	want := map[string]string{filepath.Join(dir, "via-open"): "open", filepath.Join(dir, "via-creat"): "creat"}
	for _, e := range eventsOf(r, wire.KindOpen) {
		if e.Open.File == nil {
			continue
		}
		if sc, ok := want[string(e.Open.File.Path)]; ok && e.Open.Syscall == sc && e.Open.Create && e.Open.Access == wire.AccessWrite {
			delete(want, string(e.Open.File.Path))
		}
	}
	if len(want) > 0 {
		t.Fatalf("not captured: %v", want)
	}
}

// io_uring's IORING_OP_CONNECT, inline and on an io-wq worker: each is
// recorded with the result the workload got. The address is not (see
// evidence.Unrecorded, which counts them as connects it cannot show).
func TestIOUringConnectRecorded(t *testing.T) {
	const n = 20
	out, r, _ := runHelperIn(t, "iouring-connect", strconv.Itoa(n))
	truth := map[uint64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ud, port, _ := strings.Cut(line, " ")
		u, err := strconv.ParseUint(ud, 10, 64)
		if err != nil {
			t.Fatalf("helper output %q", out)
		}
		truth[u] = port
	}
	if len(truth) != n+1 {
		t.Fatalf("helper made %d connects, want %d: %q", len(truth), n+1, out)
	}
	seen := 0
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		want, ok := truth[u.UserData]
		if u.Op != "connect" || !ok {
			continue
		}
		seen++
		if wantRes := map[bool]int64{true: -int64(unix.ECONNREFUSED), false: 0}[want == "refused"]; u.Res != wantRes || u.File != nil || u.Name != nil {
			t.Errorf("io_uring connect %d recorded as %+v, want res %d and nothing more", u.UserData, *u, wantRes)
		}
	}
	if seen != n+1 {
		t.Fatalf("%d io_uring connects recorded, want %d", seen, n+1)
	}
}

// io_uring's file-tree requests record their names from the kernel's own
// copy: the unlinkat whose buffer the caller rewrote after submitting it
// records the name the kernel used ("c"), not the buffer's ("sym"). A
// relative name is recorded as given, without a directory.
func TestIOUringFileOpNames(t *testing.T) {
	dir := t.TempDir()
	out, r, _ := runHelperIn(t, "iouring-fileops", dir)
	res := map[uint64]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ud uint64
		var v int64
		if _, err := fmt.Sscan(line, &ud, &v); err != nil {
			t.Fatalf("helper output %q", out)
		}
		res[ud] = v
	}
	path := func(n *wire.Name) string {
		if n == nil {
			return "<none>"
		}
		return string(n.Path())
	}
	want := map[uint64]struct {
		op, name, newName, target string
		res                       int64
	}{
		3000: {"mkdirat", "sub", "<none>", "", 0},
		3001: {"renameat", "a", "sub/b", "", 0},
		3002: {"linkat", "sub/b", "c", "", 0},
		3003: {"symlinkat", "<none>", "sym", "link-target", 0},
		3004: {"unlinkat", "c", "<none>", "", 0},
		3005: {"unlinkat", "sub/b", "<none>", "", 0},
		3006: {"unlinkat", "missing", "<none>", "", -int64(unix.ENOENT)},
		3007: {"unlinkat", dir + "/sub", "<none>", "", 0},
		3008: {"renameat", dir + "/sym", dir + "/sym2", "", 0},
	}
	seen := 0
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		w, ok := want[u.UserData]
		if !ok {
			continue
		}
		seen++
		target := ""
		if u.Target != nil {
			target = string(*u.Target)
		}
		if u.File != nil || u.Access != "" || u.Created != nil {
			t.Errorf("request %d (%s) recorded with an opened file: %+v", u.UserData, u.Op, *u)
		}
		if u.Op != w.op || u.Res != w.res || res[u.UserData] != w.res || path(u.Name) != w.name || path(u.NewName) != w.newName || target != w.target {
			t.Errorf("request %d recorded as %s res %d name %s new_name %s target %q; want %s res %d (helper saw %d) %s %s %q",
				u.UserData, u.Op, u.Res, path(u.Name), path(u.NewName), target, w.op, w.res, res[u.UserData], w.name, w.newName, w.target)
		}
		for _, n := range []*wire.Name{u.Name, u.NewName} {
			if n != nil && n.Dir != nil {
				t.Errorf("request %d: name %q recorded with a directory %+v", u.UserData, n.Requested, *n.Dir)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of %d io_uring file-tree requests recorded", seen, len(want))
	}
}

// The result of an io_uring completion is the kernel's, not the CQE slot's
// the workload can rewrite: with another thread writing the descriptor of
// /dev/null into every slot, every open is still recorded as the file it
// opened.
func TestIOUringForgedCQENeverMisrecorded(t *testing.T) {
	const n = 3000
	target := filepath.Join(t.TempDir(), "real")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, r, _ := runHelperIn(t, "iouring-cqe-forge", target, strconv.Itoa(n))
	got := map[string]int{}
	for _, e := range eventsOf(r, wire.KindIOUring) {
		if u := e.IOUring; u.Op == "openat" && u.UserData >= 5000 && u.UserData < 5000+n {
			p := "<no file>"
			if u.File != nil {
				p = string(u.File.Path)
			}
			got[p]++
		}
	}
	if got[target] != n || len(got) != 1 {
		t.Fatalf("%d io_uring opens of %s recorded as %v", n, target, got)
	}
}

// A request the run submitted and never reaped, completed by the kernel
// while it tears the ring down (in a kworker, not a task of the run):
// the unlink happened, and the record either shows it or counts it as
// untraced; it never passes silently.
func TestIOUringUnreapedCounted(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, r, _ := runHelperIn(t, "iouring-unreaped", victim)
	// The ring is torn down after the task exits: wait for the unlink.
	for i := 0; ; i++ {
		if _, err := os.Stat(victim); os.IsNotExist(err) {
			break
		}
		if i == 200 {
			t.Fatalf("%s still exists: the request did not run", victim)
		}
		time.Sleep(10 * time.Millisecond)
	}
	recorded := 0
	for _, e := range eventsOf(r, wire.KindIOUring) {
		if u := e.IOUring; u.UserData == 6000 && u.Name != nil && string(u.Name.Requested) == victim {
			recorded++
		}
	}
	if recorded == 0 && r.IOUringUntraced == 0 {
		t.Fatalf("the unlink of %s is neither recorded nor counted (io_uring untraced 0)", victim)
	}
	t.Logf("recorded %d, untraced %d", recorded, r.IOUringUntraced)
}

// A completion queued past a full CQ ring leaves its request's entry;
// requests that then fail before submission at the same address must not
// take it: no event says the unlink that happened failed, and the record
// counts the unseen completion.
func TestIOUringOverflowNotTakenByPrepFailure(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, r, _ := runHelperIn(t, "iouring-overflow-reuse", victim)
	failed := 0
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		if u.UserData != 7000 {
			continue
		}
		if u.Name != nil && string(u.Name.Requested) == victim && u.Res < 0 {
			t.Errorf("the unlink of %s, which happened, is recorded as failed (res %d)", victim, u.Res)
		}
		if u.Res < 0 {
			failed++
		}
	}
	if failed == 0 {
		seen := map[string]int{}
		for _, e := range eventsOf(r, wire.KindIOUring) {
			seen[fmt.Sprintf("%s/%d/%d", e.IOUring.Op, e.IOUring.UserData, e.IOUring.Res)]++
		}
		t.Fatalf("no failing unlinkat recorded: the workload did not run as meant (io_uring events %v, untraced %d)", seen, r.IOUringUntraced)
	}
	if r.IOUringUntraced == 0 {
		t.Fatal("the overflowed completion is not counted as untraced")
	}
	t.Logf("%d failing unlinkats recorded, untraced %d", failed, r.IOUringUntraced)
}

// On a ring whose completions wait for the task, the task can replace the
// descriptor an io_uring open made before the completion is posted: the
// record must not name the replacement as the file opened (it names none,
// and the open is counted as unseen).
func TestIOUringDeferredOpenNotMisrecorded(t *testing.T) {
	dir := t.TempDir()
	secret, decoy := filepath.Join(dir, "secret"), filepath.Join(dir, "decoy")
	for _, p := range []string{secret, decoy} {
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, r, _ := runHelperIn(t, "iouring-deferred-swap", secret, decoy)
	if st, err := os.Stat(secret); err != nil || st.Size() != 0 {
		t.Fatalf("%s was not truncated: the workload did not run as meant (%v)", secret, err)
	}
	seen := 0
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		if u.UserData != 8000 {
			continue
		}
		seen++
		if u.File != nil {
			t.Errorf("the deferred io_uring open of %s is recorded as opening %s, read from a descriptor the task could replace", secret, u.File.Path)
		}
		if u.Res < 0 || u.Direct || u.Created != nil {
			// Without a file, a completed open that is not direct is one
			// the record cannot show (evidence.Unrecorded).
			t.Errorf("the deferred io_uring open recorded as %+v, want a completed open without a file", *u)
		}
	}
	if seen != 1 {
		t.Fatalf("%d completions of the open recorded, want 1", seen)
	}
}

// io_uring's IORING_OP_OPENAT, inline and on an io-wq worker.
func TestIOUringOpen(t *testing.T) {
	target := filepath.Join(t.TempDir(), "ring-target")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, r, _ := runHelperIn(t, "iouring-open", target)
	if strings.Count(out, target) != 2 {
		t.Fatalf("helper did not open the target twice: %q", out)
	}
	var opens, byWorker int
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		if u.Op == "openat" && u.Res >= 0 && u.File != nil && string(u.File.Path) == target && u.Access == wire.AccessRead {
			opens++
			if e.IOWorker {
				byWorker++
			}
			if u.Created == nil || *u.Created {
				t.Errorf("an io_uring open of an existing file says created %s", fmtCreated(map[uint64]*bool{u.UserData: u.Created}))
			}
		}
	}
	if opens != 2 || byWorker != 1 {
		t.Fatalf("io_uring opens of %s recorded: %d (by a worker: %d), want 2 (1)", target, opens, byWorker)
	}
	// The worker was reported as a task of the run.
	var workerFork bool
	for _, e := range eventsOf(r, wire.KindFork) {
		workerFork = workerFork || e.Fork.IOWorker
	}
	if !workerFork {
		t.Error("no fork event for the io_uring worker")
	}
}

// An io_uring open says whether it created its file, from the kernel: of
// two O_CREAT opens of a new name the first created it and the second
// found it; an O_TMPFILE file is always new (TestIOUringOpenCreates in
// evidence derives files_created from it).
func TestIOUringOpenCreated(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "ring-new")
	out, r, _ := runHelperIn(t, "iouring-open", target, "create")
	if strings.Count(out, target) != 2 {
		t.Fatalf("helper did not open the target twice: %q", out)
	}
	created := map[uint64]*bool{}
	for _, e := range eventsOf(r, wire.KindIOUring) {
		if u := e.IOUring; u.Op == "openat" && u.File != nil && string(u.File.Path) == target {
			created[u.UserData] = u.Created
		}
	}
	if len(created) != 2 || created[100] == nil || !*created[100] || created[101] == nil || *created[101] {
		t.Fatalf("io_uring O_CREAT opens of a new file (user_data: created): %v, want 100 true, 101 false", fmtCreated(created))
	}

	_, r, _ = runHelperIn(t, "iouring-open", dir, "tmpfile")
	var tmp int
	for _, e := range eventsOf(r, wire.KindIOUring) {
		if u := e.IOUring; u.Op == "openat" && u.Res >= 0 && u.File != nil {
			tmp++
			if u.Created == nil || !*u.Created {
				t.Errorf("an io_uring O_TMPFILE open of %s says created %s", u.File.Path, fmtCreated(map[uint64]*bool{u.UserData: u.Created}))
			}
		}
	}
	if tmp != 2 {
		t.Fatalf("%d io_uring O_TMPFILE opens recorded, want 2", tmp)
	}
}

// An io_uring open into the ring's fixed-file table returns 0, not a
// descriptor: the event says direct and names no file, where it used to
// name whatever the task's descriptor 0 was.
func TestIOUringOpenDirect(t *testing.T) {
	target := filepath.Join(t.TempDir(), "ring-direct")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, r, _ := runHelperIn(t, "iouring-open", target, "direct")
	if out != "0\n0\n" {
		t.Fatalf("helper output %q, want two results of 0", out)
	}
	var direct int
	for _, e := range eventsOf(r, wire.KindIOUring) {
		u := e.IOUring
		if u.Op != "openat" {
			continue
		}
		if u.File != nil || u.Created != nil || !u.Direct || u.Res != 0 {
			t.Errorf("direct io_uring open recorded as %+v (file %v)", u, u.File)
			continue
		}
		direct++
	}
	if direct != 2 {
		t.Fatalf("%d direct io_uring opens recorded, want 2", direct)
	}
}

// Completions that may not pass io_uring_complete are counted: a request
// with IOSQE_CQE_SKIP_SUCCESS (counted at submission) and the completions
// past a full CQ ring. Of the ten NOPs, the eight that fit the CQ ring are
// seen as events; the two that overflow, and the skip-success NOP, are
// counted instead.
func TestIOUringUntracedCounted(t *testing.T) {
	out, r, _ := runHelperIn(t, "iouring-untraced")
	if strings.TrimSpace(out) != "8" {
		t.Fatalf("helper output %q, want a CQ ring of 8", out)
	}
	var nops int
	for _, e := range eventsOf(r, wire.KindIOUring) {
		if e.IOUring.Op == "nop" {
			nops++
		}
	}
	if r.IOUringUntraced != 3 || nops != 8 {
		t.Fatalf("io_uring untraced %d, nop completions seen %d; want 3 and 8", r.IOUringUntraced, nops)
	}
}

func fmtCreated(m map[uint64]*bool) string {
	var parts []string
	for k, v := range m {
		s := "absent"
		if v != nil {
			s = strconv.FormatBool(*v)
		}
		parts = append(parts, fmt.Sprintf("%d: %s", k, s))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// open_by_handle_at opens a file without naming it: the event is an open
// whose file the kernel resolved, with no name; a handle that names
// nothing is a failed open with its errno.
func TestOpenByHandle(t *testing.T) {
	target := filepath.Join(t.TempDir(), "by-handle")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, r, _ := runHelperIn(t, "open-by-handle", target)
	var mount, errno int
	var opened string
	if _, err := fmt.Sscanf(out, "%d %s\n%d", &mount, &opened, &errno); err != nil || opened != target {
		t.Fatalf("helper output %q (%v)", out, err)
	}
	var ok, failed int
	for _, e := range eventsOf(r, wire.KindOpen) {
		o := e.Open
		if o.Syscall != "open_by_handle_at" {
			continue
		}
		if o.Dirfd != int32(mount) || o.Access != wire.AccessRead || o.Name.Requested != "" || !o.Name.Missing {
			t.Errorf("open_by_handle_at recorded as %+v", o)
		}
		switch {
		case o.Ret >= 0 && o.File != nil && string(o.File.Path) == target:
			ok++
		case o.Ret == -int64(errno) && o.File == nil:
			failed++
		default:
			t.Errorf("open_by_handle_at: ret %d, file %v", o.Ret, o.File)
		}
	}
	if ok != 1 || failed != 1 {
		t.Fatalf("open_by_handle_at recorded %d times opening %s and %d times failing with errno %d, want 1 and 1", ok, target, failed, errno)
	}
}

// UDP sendto/sendmsg with a destination (v4 and v6) and TCP Fast Open.
func TestSendWithDestination(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, r, _ := runHelperIn(t, "send", strconv.Itoa(port))
	want := map[string]bool{
		"sendto inet 127.0.0.1 " + strconv.Itoa(port+1) + " dgram":  false,
		"sendmsg inet 127.0.0.1 " + strconv.Itoa(port+2) + " dgram": false,
		"sendto inet6 ::1 " + strconv.Itoa(port+3) + " dgram":       false,
		"sendto inet 127.0.0.1 " + strconv.Itoa(port) + " stream":   false,
	}
	for _, e := range eventsOf(r, wire.KindSend) {
		n := e.Net
		k := strings.Join([]string{n.Syscall, n.Family, string(n.Addr), strconv.Itoa(int(n.Port)), n.SockType}, " ")
		if _, ok := want[k]; ok {
			want[k] = true
		} else {
			t.Errorf("send event without the destination of any send made: %s", k)
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("send not captured: %s", k)
		}
	}
}

// Every file-tree change, with its resolved directory and result.
func TestFileMutations(t *testing.T) {
	dir := t.TempDir()
	_, r, _ := runHelperIn(t, "mutate", dir)
	type op struct {
		kind wire.Kind
		path string
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	want := map[op]bool{
		{wire.KindMkdir, j("d")}: false, {wire.KindChmod, j("f")}: false, {wire.KindChown, j("f")}: false,
		{wire.KindLink, j("f")}: false, {wire.KindSymlink, j("soft")}: false, {wire.KindRename, j("f")}: false,
		{wire.KindTruncate, j("d/g")}: false, {wire.KindMknod, j("fifo")}: false, {wire.KindUnlink, j("hard")}: false,
		{wire.KindUnlink, j("soft")}: false, {wire.KindUnlink, j("d/g")}: false, {wire.KindRmdir, j("d")}: false,
	}
	var renameTo, linkTo, symTarget string
	var fdChmod, fdChown, fdTrunc, refused bool
	for _, e := range r.Events {
		f := e.FileOp
		if f == nil {
			continue
		}
		if f.Ret == -int64(unix.ENOENT) && e.Kind == wire.KindUnlink && string(f.ObjectPath()) == j("never-there") {
			refused = true
			continue
		}
		if f.Ret != 0 {
			t.Errorf("%s %s failed: %d", e.Kind, f.ObjectPath(), f.Ret)
		}
		p := string(f.ObjectPath())
		if e.Kind == wire.KindSymlink && f.NewName != nil {
			p = string(f.NewName.Path())
			if f.Target != nil {
				symTarget = string(*f.Target)
			}
		}
		want[op{e.Kind, p}] = true
		switch {
		case e.Kind == wire.KindRename && f.NewName != nil:
			renameTo = string(f.NewName.Path())
		case e.Kind == wire.KindLink && f.NewName != nil:
			linkTo = string(f.NewName.Path())
		case e.Kind == wire.KindChmod && f.File != nil && string(f.File.Path) == j("d/g"):
			fdChmod = f.Mode != nil && *f.Mode == 0o640
		case e.Kind == wire.KindChown && f.File != nil && string(f.File.Path) == j("d/g"):
			fdChown = f.UID != nil && *f.UID == 0
		case e.Kind == wire.KindTruncate && f.File != nil && string(f.File.Path) == j("d/g"):
			fdTrunc = f.Length != nil && *f.Length == 1
		case e.Kind == wire.KindChmod && p == j("f"):
			if f.Mode == nil || *f.Mode != 0o600 {
				t.Errorf("chmod mode %v, want 0600", f.Mode)
			}
		}
	}
	for o, seen := range want {
		if !seen {
			t.Errorf("not captured: %s %s", o.kind, o.path)
		}
	}
	if renameTo != j("d/g") || linkTo != j("hard") || symTarget != "f" {
		t.Errorf("rename to %q, link to %q, symlink target %q", renameTo, linkTo, symTarget)
	}
	if !fdChmod || !fdChown || !fdTrunc {
		t.Errorf("descriptor-based calls: fchmod %v, fchown %v, ftruncate %v", fdChmod, fdChown, fdTrunc)
	}
	if !refused {
		t.Error("the refused unlink (ENOENT) is not an event")
	}
}

// Failed execve attempts are events, with errno and the name tried.
func TestFailedExec(t *testing.T) {
	dir := t.TempDir()
	_, r, _ := runHelperIn(t, "exec-fail", dir)
	want := map[string]int64{filepath.Join(dir, "missing"): -int64(unix.ENOENT), filepath.Join(dir, "not-executable"): -int64(unix.EACCES)}
	for _, e := range eventsOf(r, wire.KindExecFailed) {
		x := e.ExecFailed
		if errno, ok := want[string(x.Name.Path())]; ok && errno == x.Ret && x.Syscall == "execve" {
			delete(want, string(x.Name.Path()))
		}
	}
	if len(want) > 0 {
		t.Fatalf("failed execs not captured: %v", want)
	}
}

// Relative names carry the directory the kernel resolved them against.
func TestRelativeNamesResolved(t *testing.T) {
	dir := t.TempDir()
	_, r, _ := runHelperIn(t, "relative", dir)
	sub := filepath.Join(dir, "sub")
	var dirfd, cwd, failed bool
	for _, e := range eventsOf(r, wire.KindOpen) {
		o := e.Open
		switch {
		case o.Name.Requested == "by-dirfd" && o.File != nil:
			dirfd = string(o.File.Path) == filepath.Join(sub, "by-dirfd") && o.Syscall == "openat" && o.Dirfd >= 0
		case o.Name.Requested == "by-cwd" && o.File != nil:
			cwd = string(o.File.Path) == filepath.Join(sub, "by-cwd")
		case o.Name.Requested == "no-such":
			failed = o.Ret == -int64(unix.ENOENT) && o.File == nil && o.Name.Dir != nil && string(o.Name.Dir.Path) == sub &&
				string(o.Name.Path()) == filepath.Join(sub, "no-such")
		}
	}
	if !dirfd || !cwd || !failed {
		t.Fatalf("relative opens resolved: through a dirfd %v, after chdir %v, failed with its directory %v", dirfd, cwd, failed)
	}
}

// A program run from a memfd is named as such.
func TestMemfdExecNamed(t *testing.T) {
	_, r, _ := runHelperIn(t, "memfd-exec")
	for _, e := range eventsOf(r, wire.KindExec) {
		x := e.Exec
		if x.Via == "fd" && x.File.Detached && string(x.File.Path) == "memfd:payload" && strings.HasPrefix(string(x.Filename), "/dev/fd/") {
			return
		}
	}
	t.Fatalf("no exec from the memfd recorded: %v", eventsOf(r, wire.KindExec))
}

// A task that leaves the session cgroup and comes back is captured while
// outside, and both moves are events.
func TestCgroupRoundTripCaptured(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	outside := testCgroup(t)
	c := openCapture(t, cg, 0)
	marker := filepath.Join(t.TempDir(), "written-outside")
	if err := helper(t, cg, "cgroup-trip", cg, outside, marker).Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	checkComplete(t, r)
	var out, back, wrote bool
	var outsideID uint64
	for _, e := range r.Events {
		switch {
		case e.Kind == wire.KindCgroupMigrate && e.Migrate.WasTracked && e.Migrate.DefaultHierarchy && !e.Migrate.IntoSession:
			out, outsideID = true, e.Migrate.DstCgroupID
		case e.Kind == wire.KindCgroupMigrate && e.Migrate.WasTracked && e.Migrate.IntoSession:
			back = out
		case e.Kind == wire.KindOpen && e.Open.File != nil && string(e.Open.File.Path) == marker:
			wrote = out && !back && e.CgroupID == outsideID && e.Open.Create
		}
	}
	if !out || !back || !wrote {
		t.Fatalf("round trip: moved out %v, came back %v, write while outside captured %v", out, back, wrote)
	}
}

// A task of the run still alive outside the session when the capture
// closes is counted, and what it does later is not silently lost.
func TestLiveTaskOutsideIsCounted(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	outside := testCgroup(t)
	c := openCapture(t, cg, 0)
	marker := filepath.Join(t.TempDir(), "m")
	cmd := helper(t, cg, "sleep-outside", outside, marker)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, _ := stdout.Read(buf); !bytes.HasPrefix(buf[:n], []byte("outside")) {
		t.Fatalf("helper said %q", buf[:n])
	}
	// The session cgroup is empty now, though the task lives.
	r := finish(t, c, cg)
	cmd.Process.Kill()
	cmd.Wait()
	if r.LiveTasks < 1 {
		t.Errorf("live tasks at close = %d, want >= 1", r.LiveTasks)
	}
	var wrote bool
	for _, e := range eventsOf(r, wire.KindOpen) {
		wrote = wrote || e.Open.File != nil && string(e.Open.File.Path) == marker
	}
	if !wrote {
		t.Error("the open made outside the session was not captured")
	}
}

// Two names that differ only in a non-UTF-8 byte stay two names.
func TestNonUTF8NamesDistinct(t *testing.T) {
	dir := t.TempDir()
	_, r, _ := runHelperIn(t, "nonutf8", dir)
	seen := map[wire.Bytes]bool{}
	for _, e := range eventsOf(r, wire.KindOpen) {
		if e.Open.File != nil && strings.HasPrefix(string(e.Open.File.Path), dir) {
			seen[e.Open.File.Path] = true
		}
	}
	a, b := wire.Bytes(filepath.Join(dir, "name-\xff")), wire.Bytes(filepath.Join(dir, "name-\xfe"))
	if !seen[a] || !seen[b] {
		t.Fatalf("names seen: %v", seen)
	}
}

// bind and listen record the local address from the socket.
func TestBindAndListen(t *testing.T) {
	out, r, _ := runHelperIn(t, "bind-listen")
	port, _ := strconv.Atoi(strings.TrimSpace(out))
	var bind, listen bool
	for _, e := range r.Events {
		if e.Net == nil || e.Net.Addr != "127.0.0.1" || int(e.Net.Port) != port || e.Net.AddrFrom != "socket" || e.Net.Ret != 0 {
			continue
		}
		bind = bind || e.Kind == wire.KindBind
		listen = listen || e.Kind == wire.KindListen
	}
	if !bind || !listen {
		t.Fatalf("port %d: bind %v, listen %v", port, bind, listen)
	}
}

// An open through a symlink records the file it reached.
func TestSymlinkResolved(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	_, r, _ := runHelperIn(t, "open-nofollow", link)
	for _, e := range eventsOf(r, wire.KindOpen) {
		if string(e.Open.Name.Requested) == link {
			if e.Open.File == nil || string(e.Open.File.Path) != target {
				t.Fatalf("open of %s recorded the file as %+v, want %s", link, e.Open.File, target)
			}
			return
		}
	}
	t.Fatal("no open of the link recorded")
}

// execve from a thread that is not the leader keeps the task balance: the
// kernel hands the leader's id to the thread.
func TestExecFromThread(t *testing.T) {
	_, r, _ := runHelperIn(t, testenv.ExecFromThread)
	for _, e := range eventsOf(r, wire.KindExec) {
		if e.Exec.File.Path == "/usr/bin/true" && e.Exec.OldTID != 0 && e.Exec.OldTID != e.TID {
			return
		}
	}
	t.Fatalf("no exec from a non-leader thread recorded with its old tid: %v", eventsOf(r, wire.KindExec))
}

// 32-bit syscalls (int 0x80 from a 64-bit program) are not decoded, but
// each one of a covered class is counted under its kind, never lost.
func TestCompatSyscallsCounted(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Fatalf("int 0x80 is an x86 instruction; this test is for amd64 hosts (GOARCH %s)", runtime.GOARCH)
	}
	testenv.RequireTool(t, "/usr/bin/gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "compat.c")
	os.WriteFile(src, []byte(`
static char path[] = "`+filepath.Join(dir, "made-by-int80")+`";
static long sys32(long nr, long a, long b, long c) {
	long ret;
	__asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}
int main(void) {
	long fd = sys32(5, (long)path, 0101, 0644); /* open(O_CREAT|O_WRONLY) */
	if (fd < 0) return 1;
	sys32(6, fd, 0, 0);                         /* close */
	if (sys32(10, (long)path, 0, 0) != 0)       /* unlink */
		return 2;
	return 0;
}
`), 0o644)
	bin := filepath.Join(dir, "compat")
	if out, err := exec.Command("gcc", "-static", "-no-pie", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	err := command(t, cg, bin).Run()
	r := finish(t, c, cg)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGSEGV {
		// Some hosts (ia32_emulation=0, some hypervisors) fault on int
		// 0x80 before any syscall runs: then nothing may be recorded.
		t.Logf("this host delivers no int 0x80 syscalls (the program died of SIGSEGV at the first one)")
		total := uint64(0)
		for _, n := range r.Compat {
			total += n
		}
		if total != 0 {
			t.Fatalf("compat counts %v for a program whose every 32-bit syscall faulted", r.Compat)
		}
		if _, serr := os.Stat(filepath.Join(dir, "made-by-int80")); serr == nil {
			t.Fatal("the file exists: the 32-bit open did run")
		}
		return
	}
	if err != nil {
		t.Fatalf("compat program: %v", err)
	}
	if r.Compat[wire.KindOpen] != 1 || r.Compat[wire.KindUnlink] != 1 {
		t.Fatalf("compat counts %v, want open 1 and unlink 1", r.Compat)
	}
	for _, e := range r.Events {
		if e.Open != nil && e.Open.File != nil && strings.HasSuffix(string(e.Open.File.Path), "made-by-int80") {
			t.Fatalf("a 32-bit open was decoded with 64-bit numbers: %+v", e.Open)
		}
	}
}
