//go:build linux

package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
	"vigil/internal/evidence"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// opens returns the open events of b for path.
func opens(b *evidence.Bundle, path string) []wire.Kernel {
	var out []wire.Kernel
	for _, e := range b.Kernel {
		if e.Kind == wire.KindOpen && string(e.Open.Path()) == path {
			out = append(out, e)
		}
	}
	return out
}

func assertHealthy(t *testing.T, h wire.Health) {
	t.Helper()
	if h.KernelLayer.Status != wire.LayerComplete || h.RingbufDrops.Total != 0 || h.DecodeErrors != 0 || !h.Drain.Proven {
		t.Errorf("kernel layer %+v drops %d decode errors %d drain %+v: want complete, 0, 0, proven",
			h.KernelLayer, h.RingbufDrops.Total, h.DecodeErrors, h.Drain)
	}
}

func TestE2EFilesAndExitCode(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	arc := filepath.Join(dir, "a.tar.gz")
	phases := filepath.Join(dir, "phases.json")
	r := runVigil(t, dir, "record", "--run-id", "e2efiles", "--archive", arc, "--phase-log", phases, "--",
		"sh", "-c", "cat /etc/hostname >/dev/null; echo hi > out.txt; exit 3")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3; stderr: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arc)
	assertNoSessions(t, "e2efiles")
	if string(b.Run.Cwd) != dir {
		t.Errorf("run.json cwd %q, want %q", b.Run.Cwd, dir)
	}

	var cat bool
	for _, e := range b.Kernel {
		if e.Kind == wire.KindExec && filepath.Base(string(e.Exec.Filename)) == "cat" {
			cat = true
		}
	}
	if !cat {
		t.Error("no exec of cat recorded")
	}
	host := opens(b, "/etc/hostname")
	if len(host) == 0 || host[0].Open.Access != wire.AccessRead || host[0].Open.Ret < 0 {
		t.Errorf("read open of /etc/hostname: got %+v", host)
	}
	out := opens(b, filepath.Join(dir, "out.txt"))
	if len(out) == 0 || out[0].Open.Access != wire.AccessWrite || !out[0].Open.Create || !out[0].Open.Truncate {
		t.Errorf("write/create/truncate open of out.txt: got %+v", out)
	}
	assertHealthy(t, b.Health)
	if b.Health.CgroupCorrelation.Status != wire.CorrelationClean {
		t.Errorf("cgroup correlation %+v", b.Health.CgroupCorrelation)
	}
	if b.Run.ExitCode != 3 || b.Run.RunID != "e2efiles" {
		t.Errorf("run.json exit %d run id %q", b.Run.ExitCode, b.Run.RunID)
	}
	data, err := os.ReadFile(phases)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("phases", data); err != nil {
		t.Fatalf("phase log: %v", err)
	}
}

// The phase log's vigil_max_rss_kib is vigil's own peak, not its
// command's: a command that holds 150 MiB (dd's buffer, filled) does not
// move it there, as it would move a measurement of the whole tree (GNU
// time, wait4's rusage). Nor its parent's: this test process holds 200
// MiB when it starts vigil (by vfork, as os/exec does), which getrusage's
// ru_maxrss of vigil would report, as it keeps the peak of the image exec
// replaced.
func TestE2EPhaseLogMemoryIsVigilsOwn(t *testing.T) {
	testenv.RequireRoot(t)
	ballast := make([]byte, 200<<20)
	for i := range ballast {
		if i%4096 == 0 {
			ballast[i] = 1
		}
	}
	defer runtime.KeepAlive(ballast)
	dir := t.TempDir()
	arc := filepath.Join(dir, "a.tar.gz")
	phases := filepath.Join(dir, "phases.json")
	const heldMiB = 150
	r := runVigil(t, dir, "record", "--run-id", "e2ememory", "--archive", arc, "--phase-log", phases, "--",
		"dd", "if=/dev/zero", "of=/dev/null", fmt.Sprintf("bs=%dM", heldMiB), "count=1", "status=none")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(phases)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("phases", data); err != nil {
		t.Fatalf("phase log: %v", err)
	}
	var pl wire.PhaseLog
	if err := json.Unmarshal(data, &pl); err != nil {
		t.Fatal(err)
	}
	// The tree's peak shows the command did hold the memory.
	if r.treeMaxRSSKiB < heldMiB<<10 {
		t.Fatalf("peak RSS of vigil's tree %d KiB: the command did not hold %d MiB", r.treeMaxRSSKiB, heldMiB)
	}
	if pl.MaxRSSKiB < 1024 || pl.MaxRSSKiB >= heldMiB<<10 {
		t.Fatalf("vigil_max_rss_kib %d: want vigil's own peak, at least 1 MiB and below the %d KiB its command held", pl.MaxRSSKiB, heldMiB<<10)
	}
}

func TestE2ESignalExit(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	r := runVigil(t, dir, "record", "-q", "--run-id", "e2esig", "--archive", filepath.Join(dir, "a.tar.gz"), "--", "sh", "-c", "kill -KILL $$")
	if r.code != 137 {
		t.Fatalf("exit %d, want 137; stderr: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, filepath.Join(dir, "a.tar.gz"))
	if b.Run.Signal != 9 || b.Run.ExitCode != 137 {
		t.Errorf("run.json signal %d exit %d", b.Run.Signal, b.Run.ExitCode)
	}
	assertNoSessions(t, "e2esig")
}

// TestE2EEscapees: a grandchild that double-forks, calls setsid and acts
// only after its parent is gone, and a child that moves itself into a
// sub-cgroup of the session, are both captured; the one still running
// after the grace period is killed and counted.
func TestE2EEscapees(t *testing.T) {
	testenv.RequireRoot(t)
	mnt, err := cgroup.FindV2Mount()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"exitfifo", "movedfifo"} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	markA, markB := filepath.Join(dir, "marker-a"), filepath.Join(dir, "marker-b")
	os.WriteFile(markA, nil, 0o644)
	os.WriteFile(markB, nil, 0o644)
	// A: its read returns EOF when the parent's fd 3 closes at exit, so
	// it opens marker-a only once it has outlived its parent.
	// B: moves into <session>/sub, opens marker-b, reports, stays.
	script := `
		(setsid sh -c 'read x < exitfifo; cat "$1" > /dev/null' a "$1" &)
		sh -c 'd="$1$(sed -n "s/^0:://p" /proc/self/cgroup)/sub"
			mkdir "$d" && echo $$ > "$d/cgroup.procs" && cat "$2" > /dev/null && echo ok > movedfifo && exec sleep 60' b "$2" "$3" &
		read x < movedfifo
		exec 3> exitfifo
		exit 0`
	arc := filepath.Join(dir, "a.tar.gz")
	r := runVigil(t, dir, "record", "--run-id", "e2eescape", "--grace", "2s", "--archive", arc, "--",
		"sh", "-c", script, "main", markA, mnt, markB)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr: %s", r.code, r.stderr)
	}
	assertNoSessions(t, "e2eescape")
	b := verifyAndRead(t, arc)

	// The main child is the first process to exec. (The first event is
	// the fork that created it, reported with vigil as the parent.)
	var mainPID uint32
	for _, e := range b.Kernel {
		if e.Kind == wire.KindExec {
			mainPID = e.PID
			break
		}
	}
	var mainExit uint64
	var mainCgroup uint64
	for _, e := range b.Kernel {
		if e.PID == mainPID && mainCgroup == 0 {
			mainCgroup = e.CgroupID
		}
		if e.Kind == wire.KindExit && e.PID == mainPID && e.Exit.GroupDead {
			mainExit = e.TimeNS
		}
	}
	a := opens(b, markA)
	if len(a) == 0 {
		t.Fatal("open of marker-a by the double-forked setsid grandchild not captured")
	}
	if mainExit == 0 || a[0].TimeNS <= mainExit || a[0].PID == mainPID {
		t.Errorf("marker-a opened at %d by pid %d; main child %d exited at %d: want after, by another process",
			a[0].TimeNS, a[0].PID, mainPID, mainExit)
	}
	bm := opens(b, markB)
	if len(bm) == 0 {
		t.Fatal("open of marker-b from the sub-cgroup not captured")
	}
	if bm[0].CgroupID == mainCgroup {
		t.Errorf("marker-b opened in cgroup %d, the session itself; want the sub-cgroup", bm[0].CgroupID)
	}
	c := b.Health.CgroupCorrelation
	if c.StragglersKilled != 1 || c.OutsideEvents != 0 {
		t.Errorf("correlation %+v: want 1 straggler killed, no outside events", c)
	}
	if !strings.Contains(r.stderr, "killed 1 process") {
		t.Errorf("stderr does not report the killed straggler: %s", r.stderr)
	}
	if b.Health.RingbufDrops.Total != 0 || !b.Health.Drain.Proven {
		t.Errorf("drops %d drain %+v", b.Health.RingbufDrops.Total, b.Health.Drain)
	}
}

// TestE2EConcurrentRunsIsolated: two runs alive at the same time (their
// children rendezvous on a fifo) each record only their own marker.
func TestE2EConcurrentRunsIsolated(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "rendezvous")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	m1, m2 := filepath.Join(dir, "marker-one"), filepath.Join(dir, "marker-two")
	os.WriteFile(m1, nil, 0o644)
	os.WriteFile(m2, nil, 0o644)
	start := func(id, script string) *exec.Cmd {
		cmd := exec.Command(testenv.Vigil(t), "record", "-q", "--run-id", id, "--archive", filepath.Join(dir, id+".tar.gz"),
			"--", "sh", "-c", script)
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	one := start("conc1", `cat marker-one > /dev/null; echo x > rendezvous`)
	two := start("conc2", `read y < rendezvous; cat marker-two > /dev/null`)
	for _, c := range []*exec.Cmd{one, two} {
		if err := c.Wait(); err != nil {
			t.Fatalf("%v: %v", c.Args, err)
		}
	}
	b1 := verifyAndRead(t, filepath.Join(dir, "conc1.tar.gz"))
	b2 := verifyAndRead(t, filepath.Join(dir, "conc2.tar.gz"))
	if len(opens(b1, m1)) == 0 || len(opens(b2, m2)) == 0 {
		t.Fatal("a run lacks its own marker")
	}
	if len(opens(b1, m2)) != 0 || len(opens(b2, m1)) != 0 {
		t.Fatal("a run recorded the other run's marker")
	}
	for _, b := range []*evidence.Bundle{b1, b2} {
		assertHealthy(t, b.Health)
		if b.Health.CgroupCorrelation.OutsideEvents != 0 {
			t.Errorf("%s: %d outside events", b.Run.RunID, b.Health.CgroupCorrelation.OutsideEvents)
		}
	}
	assertNoSessions(t, "conc1", "conc2")
}

// TestE2EStaleSessionRemoved: a session left by a vigil that died, with a
// process still in it, is removed and the process killed by the next run.
func TestE2EStaleSessionRemoved(t *testing.T) {
	testenv.RequireRoot(t)
	parent, err := cgroup.SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	deadPID := exitedPID(t)
	stale := filepath.Join(parent, cgroup.SessionName(deadPID, "crashed"))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(stale)
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	fd.Close()
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = sleeper.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			sleeper.Process.Kill()
			<-exited
		}
		os.Remove(stale)
	})

	dir := t.TempDir()
	r := runVigil(t, dir, "record", "--run-id", "e2estale", "--archive", filepath.Join(dir, "a.tar.gz"), "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("stale session still present")
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("process in the stale session still running")
	}
	if ws, ok := sleeper.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("process in the stale session: %v, want killed by SIGKILL", waitErr)
	}
	if !strings.Contains(r.stderr, "stale") || !strings.Contains(r.stderr, filepath.Base(stale)) {
		t.Errorf("removal not reported: %s", r.stderr)
	}
}

func TestE2EBadInput(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	arc := filepath.Join(dir, "a.tar.gz")
	// A directory even root cannot write to: a read-only tmpfs.
	ro := t.TempDir()
	if err := unix.Mount("tmpfs", ro, "tmpfs", unix.MS_RDONLY, "size=64k"); err != nil {
		t.Fatalf("mounting a read-only tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ro, 0) })
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"read-only archive dir", []string{"record", "--run-id", "bad0", "--archive", filepath.Join(ro, "a.tar.gz"), "--", "true"}, 125, "read-only file system"},
		{"no command", []string{"record", "--run-id", "bad1", "--archive", arc}, 125, "no command"},
		{"unknown flag", []string{"record", "--run-id", "bad2", "--bogus", "--archive", arc, "--", "true"}, 125, "unknown flag"},
		{"missing archive dir", []string{"record", "--run-id", "bad3", "--archive", "/nonexistent/a.tar.gz", "--", "true"}, 125, "not writable"},
		{"missing --archive", []string{"record", "--run-id", "bad4", "--", "true"}, 125, "--archive"},
		{"command not found", []string{"record", "--run-id", "bad5", "--archive", arc, "--", "vigil-no-such-command"}, 127, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runVigil(t, dir, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d stderr %q; want %d mentioning %q", r.code, r.stderr, c.code, c.want)
			}
			oneLine(t, r.stderr)
			assertOnlyFiles(t, dir)
		})
	}
	// Only this test's sessions count: other packages' tests run vigil
	// beside this one and have sessions of their own meanwhile.
	assertNoSessions(t, "bad0", "bad1", "bad2", "bad3", "bad4", "bad5")
}

// TestE2EForwardsSignals: SIGTERM to vigil reaches the child, and vigil
// exits as the child did (128+15), with a complete archive.
func TestE2EForwardsSignals(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "a.tar.gz")
	cmd := exec.Command(testenv.Vigil(t), "record", "-q", "--run-id", "e2esigfwd", "--archive", arc, "--",
		"sh", "-c", `echo up > "$0"; exec sleep 60`, ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(ready); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if cmd.ProcessState.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Fatalf("vigil: %v; want exit 143", err)
	}
	b := verifyAndRead(t, arc)
	if b.Run.Signal != int(syscall.SIGTERM) {
		t.Errorf("run.json signal %d", b.Run.Signal)
	}
	assertNoSessions(t, "e2esigfwd")
}

// TestE2ENestedRecord: a vigil inside a recorded run creates and removes
// its own session below the outer one; the outer run still attributes
// every event to its session.
func TestE2ENestedRecord(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	outer, inner := filepath.Join(dir, "outer.tar.gz"), filepath.Join(dir, "inner.tar.gz")
	r := runVigil(t, dir, "record", "-q", "--run-id", "e2eouter", "--archive", outer, "--",
		testenv.Vigil(t), "record", "-q", "--run-id", "e2einner", "--archive", inner, "--", "sh", "-c", "cat /etc/hostname > /dev/null")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	bo, bi := verifyAndRead(t, outer), verifyAndRead(t, inner)
	if c := bo.Health.CgroupCorrelation; c.Status != wire.CorrelationClean || c.OutsideEvents != 0 {
		t.Errorf("outer correlation %+v", c)
	}
	if len(opens(bo, "/etc/hostname")) == 0 || len(opens(bi, "/etc/hostname")) == 0 {
		t.Error("the nested command's open missing from an archive")
	}
	assertHealthy(t, bo.Health)
	assertHealthy(t, bi.Health)
	assertNoSessions(t, "e2eouter", "e2einner")
}
