//go:build linux

package cgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"vigil/internal/testenv"
)

// parentDir returns the directory sessions are created in, skipping (or
// failing under VIGIL_REQUIRE_PRIVILEGED) without root.
func parentDir(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	dir, err := SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// proc is a test process; exited closes once it has been reaped.
type proc struct {
	*exec.Cmd
	exited chan struct{}
}

// startIn starts `sleep 30` directly inside the cgroup open as fd.
func startIn(t *testing.T, fd int) proc {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := proc{cmd, make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
		}
	})
	return p
}

// waitExited fails the test unless p is reaped within a generous bound.
func waitExited(t *testing.T, p proc) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("process %d not killed", p.Process.Pid)
	}
}

func newSession(t *testing.T) *Session {
	t.Helper()
	s, err := Create(parentDir(t), "t"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Remove(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestSessionPlaceKillRemove(t *testing.T) {
	s := newSession(t)
	if pop, err := s.Populated(); err != nil || pop {
		t.Fatalf("fresh session populated=%v err=%v", pop, err)
	}
	cmd := startIn(t, s.FD())
	procs, err := s.Procs()
	if err != nil || !slices.Contains(procs, cmd.Process.Pid) {
		t.Fatalf("procs %v (err %v) lack child %d", procs, err, cmd.Process.Pid)
	}
	// A child that stays is not waited for past the deadline.
	err = s.WaitEmpty(context.Background(), time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitEmpty on populated session: want ErrTimeout, got %v", err)
	}
	// Nor past a cancelled context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WaitEmpty(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitEmpty with cancelled ctx: want Canceled, got %v", err)
	}
	n, err := s.Kill(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Kill: killed %d, err %v; want 1", n, err)
	}
	if pop, _ := s.Populated(); pop {
		t.Fatal("populated after Kill")
	}
	if err := s.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session dir still there: %v", err)
	}
}

func TestWaitEmptyWakesOnExit(t *testing.T) {
	s := newSession(t)
	cmd := exec.Command("sh", "-c", "read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: s.FD()}
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitEmpty(context.Background(), time.Now().Add(time.Minute)) }()
	w.Write([]byte("go\n"))
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitEmpty after the only task exited: %v", err)
	}
}

func TestSubCgroupKilledAndRemoved(t *testing.T) {
	s := newSession(t)
	sub := filepath.Join(s.Dir(), "sub", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	a := startIn(t, s.FD())
	b := startIn(t, s.FD())
	if err := os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte(strconv.Itoa(b.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	ids, err := s.IDs()
	if err != nil || len(ids) != 3 || !ids[s.ID()] {
		t.Fatalf("IDs = %v (err %v); want session + 2 sub-cgroups", ids, err)
	}
	procs, _ := s.Procs()
	slices.Sort(procs)
	want := []int{a.Process.Pid, b.Process.Pid}
	slices.Sort(want)
	if !slices.Equal(procs, want) {
		t.Fatalf("Procs = %v, want %v", procs, want)
	}
	if n, err := s.Kill(context.Background()); err != nil || n != 2 {
		t.Fatalf("Kill: %d, %v; want 2", n, err)
	}
	if err := s.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("session left behind")
	}
}

func TestRemoveKillsLiveTasks(t *testing.T) {
	s := newSession(t)
	cmd := startIn(t, s.FD())
	if err := s.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitExited(t, cmd)
}

func TestCreateRejectsBadRunID(t *testing.T) {
	for _, id := range []string{"", "a/b", "..x/", "a b"} {
		if _, err := Create(t.TempDir(), id); err == nil {
			t.Errorf("run id %q accepted", id)
		}
	}
}

func TestCleanStale(t *testing.T) {
	parent := parentDir(t)
	// A pid that is certainly dead: a process we started and reaped.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := dead.Process.Pid
	staleDir := filepath.Join(parent, SessionName(deadPid, "stale"))
	if err := os.MkdirAll(filepath.Join(staleDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { KillAll(context.Background(), staleDir, KillTimeout); removeTree(staleDir) })
	fd, err := os.Open(filepath.Join(staleDir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	victim := startIn(t, int(fd.Fd()))

	// A session whose owner is alive (this test process's parent) stays.
	liveDir := filepath.Join(parent, SessionName(os.Getppid(), "live"))
	if err := os.Mkdir(liveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(liveDir) })

	rep, err := CleanStale(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Names, filepath.Base(staleDir)) || rep.Killed < 1 {
		t.Fatalf("report %+v: want %s removed with its process killed", rep, filepath.Base(staleDir))
	}
	if slices.Contains(rep.Names, filepath.Base(liveDir)) {
		t.Fatal("live session removed")
	}
	if _, err := os.Stat(staleDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("stale session still present")
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Fatal("live session gone")
	}
	waitExited(t, victim)
}

// TestCleanStaleRespectsLock: a session whose owner pid looks dead here
// but whose lock is held (an owner in another pid namespace) is left alone.
func TestCleanStaleRespectsLock(t *testing.T) {
	parent := parentDir(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, SessionName(dead.Process.Pid, "locked"))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(dir) })
	lock, err := lockIfUnused(dir)
	if err != nil || lock == nil {
		t.Fatalf("lockIfUnused on a fresh dir: %v, %v", lock, err)
	}
	rep, err := CleanStale(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Names, filepath.Base(dir)) {
		t.Fatal("locked session removed")
	}
	lock.Close()
	rep, err = CleanStale(context.Background(), parent)
	if err != nil || !slices.Contains(rep.Names, filepath.Base(dir)) {
		t.Fatalf("unlocked stale session not removed: %+v, %v", rep, err)
	}
}

func TestCreateHoldsLock(t *testing.T) {
	s := newSession(t)
	lock, err := lockIfUnused(s.Dir())
	if err != nil || lock != nil {
		t.Fatalf("a live session's lock was free (%v, %v)", lock, err)
	}
}

// TestIDsIncludeRemovedSubCgroups: a sub-cgroup created and removed while
// the session runs is still known as part of it.
func TestIDsIncludeRemovedSubCgroups(t *testing.T) {
	s := newSession(t)
	sub := filepath.Join(s.Dir(), "transient")
	nested := filepath.Join(sub, "nested")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	subID, err1 := ID(sub)
	nestedID, err2 := ID(nested)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// The tracker sees new cgroups asynchronously; IDs also processes
	// what is queued, so after this call both are known for good.
	if _, err := s.IDs(); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(sub); err != nil {
		t.Fatal(err)
	}
	ids, err := s.IDs()
	if err != nil {
		t.Fatal(err)
	}
	if !ids[s.ID()] || !ids[subID] || !ids[nestedID] {
		t.Fatalf("IDs %v lack the session %d or the removed sub-cgroups %d, %d", ids, s.ID(), subID, nestedID)
	}
	other, _ := ID(filepath.Dir(s.Dir()))
	if ids[other] {
		t.Fatal("the parent cgroup counted as part of the session")
	}
}
