//go:build linux

package capture

import (
	"os"
	"path/filepath"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func totalDrops(r *Result) uint64 {
	var n uint64
	for _, v := range r.Drops {
		n += v
	}
	return n
}

func totalEmitted(r *Result) uint64 {
	var n uint64
	for _, v := range r.Emitted {
		n += v
	}
	return n
}

// checkComplete asserts the invariants every clean capture must satisfy.
func checkComplete(t *testing.T, r *Result) {
	t.Helper()
	if !r.DrainProven {
		t.Errorf("drain not proven: %s", r.DrainDetail)
	}
	if r.DecodeErrors != 0 {
		t.Errorf("%d decode errors: %s", r.DecodeErrors, r.DecodeDetail)
	}
	if d := totalDrops(r); d != 0 {
		t.Errorf("drops = %v, want none", r.Drops)
	}
	if uint64(len(r.Events)) != totalEmitted(r) {
		t.Errorf("%d events, kernel emitted %d", len(r.Events), totalEmitted(r))
	}
	for i, ev := range r.Events {
		if ev.Seq != uint64(i) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
}

func TestShellSession(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	work := t.TempDir()
	const script = "cat /etc/hostname >/dev/null; echo hi > out.txt; exit 3"
	cmd := command(t, cg, "/bin/sh", "-c", script)
	cmd.Dir = work
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("sh: %v", err)
	}
	shPID := uint32(cmd.Process.Pid)
	r := finish(t, c, cg)
	checkComplete(t, r)
	t.Logf("events=%d emitted=%v timings=%+v", len(r.Events), r.Emitted, c.Timings())

	var catExec, hostnameRead, outWrite, shFork, shExit, shExec, spawn bool
	var catPID uint32
	for _, ev := range r.Events {
		switch ev.Kind {
		case wire.KindExec:
			if ev.Exec.File.Path == "/usr/bin/cat" && len(ev.Exec.Argv) == 2 && ev.Exec.Argv[0] == "cat" && ev.Exec.Argv[1] == "/etc/hostname" {
				catExec, catPID = true, ev.PID
			}
			// /bin/sh is a symlink to dash here: the file is resolved.
			if ev.PID == shPID && ev.Exec.Filename == "/bin/sh" && ev.Exec.File.Path != "" && !ev.Exec.File.Detached && len(ev.Exec.Argv) == 3 && ev.Exec.Argv[2] == script {
				shExec = true
			}
		case wire.KindOpen:
			o := ev.Open
			if o.File != nil && o.File.Path == "/etc/hostname" && o.Access == wire.AccessRead && o.Ret >= 0 && !o.Create && o.Syscall == "openat" {
				hostnameRead = true
			}
			// The name as given is relative; the kernel's file is not.
			if o.File != nil && string(o.File.Path) == filepath.Join(work, "out.txt") && o.Name.Requested == "out.txt" && o.Access == wire.AccessWrite && o.Create && o.Truncate && !o.Append && o.Ret >= 0 && ev.PID == shPID {
				outWrite = true
				if o.Mode != 0o666 {
					t.Errorf("out.txt mode = %o, want 666", o.Mode)
				}
			}
		case wire.KindFork:
			// The test process (outside) cloned sh straight into the session.
			if ev.Fork.ChildPID == shPID && ev.Fork.ParentPID == uint32(os.Getpid()) && ev.PID == uint32(os.Getpid()) && !ev.Fork.Thread {
				spawn = true
			}
			if ev.Fork.ParentPID == shPID && ev.PID == shPID && !ev.Fork.Thread && ev.Fork.ChildPID != shPID {
				shFork = true
			}
		case wire.KindExit:
			if ev.PID == shPID && ev.Exit.Code == 3 && ev.Exit.Signal == 0 && ev.Exit.GroupDead {
				shExit = true
			}
		}
		if ev.CgroupID != c.SessionCgroupID() {
			t.Errorf("event %d from cgroup %d, session is %d", ev.Seq, ev.CgroupID, c.SessionCgroupID())
		}
	}
	for name, ok := range map[string]bool{
		"exec of /bin/sh": shExec, "exec of cat": catExec, "read open of /etc/hostname": hostnameRead,
		"write+create+truncate open of out.txt": outWrite, "fork by sh": shFork, "clone of sh into the session": spawn, "exit code 3 of sh": shExit,
	} {
		if !ok {
			t.Errorf("missing %s", name)
		}
	}
	if catPID == 0 || catPID == shPID {
		t.Errorf("cat ran as pid %d (sh %d): expected a forked child", catPID, shPID)
	}
	if _, err := os.Stat(filepath.Join(work, "out.txt")); err != nil {
		t.Fatal(err)
	}
}

func TestExitBySignal(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	cmd := command(t, cg, "/bin/sh", "-c", "kill -KILL $$")
	if err := cmd.Run(); err == nil {
		t.Fatal("sh survived SIGKILL")
	}
	pid := uint32(cmd.Process.Pid)
	r := finish(t, c, cg)
	checkComplete(t, r)
	var found bool
	for _, ev := range r.Events {
		if ev.Kind == wire.KindExit && ev.PID == pid {
			found = true
			if ev.Exit.Signal != 9 || ev.Exit.Code != 0 || !ev.Exit.GroupDead {
				t.Errorf("exit of killed sh = %+v, want signal 9", *ev.Exit)
			}
		}
	}
	if !found {
		t.Errorf("no exit event for pid %d", pid)
	}
}
