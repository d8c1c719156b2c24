//go:build linux

package runner

import (
	"golang.org/x/sys/unix"

	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"vigil/internal/affinity"

	"vigil/internal/limits"
	"vigil/internal/wire"
)

// forwarded are the signals vigil passes on to the child instead of dying.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// childEnv is vigil's environment with the run id and SDK log path set
// (replacing any inherited values).
func childEnv(runID, sdkLog string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == wire.EnvRunID || name == wire.EnvSDKEventLog {
			continue
		}
		env = append(env, kv)
	}
	return append(env, wire.EnvRunID+"="+runID, wire.EnvSDKEventLog+"="+sdkLog)
}

// envNames returns the sorted, distinct variable names of env.
func envNames(env []string) []string {
	seen := map[string]bool{}
	var names []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// newChild prepares the command so that clone3 places it directly into the
// cgroup open as cgroupFD: it never runs outside the session, not even for
// the instructions between fork and exec.
func newChild(path string, o *Options, env []string, cgroupFD int) *exec.Cmd {
	return &exec.Cmd{
		Path:   path,
		Args:   o.Argv,
		Env:    env,
		Stdin:  o.Stdin,
		Stdout: o.Stdout,
		Stderr: o.Stderr,
		SysProcAttr: &syscall.SysProcAttr{
			UseCgroupFD: true,
			CgroupFD:    cgroupFD,
			Credential:  o.cred,
			// Should vigil be killed outright, the command dies with it
			// (its descendants go when the next vigil removes the stale
			// session). The death signal follows the thread that forked,
			// so startChild keeps that thread for the child's life.
			Pdeathsig: syscall.SIGKILL,
		},
	}
}

// startError maps a failed start to the shell's exit codes.
func startError(name string, err error) *Error {
	var pe *fs.PathError
	inner := err
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The file may exist while what it needs does not: a script's
		// interpreter, or an ELF's loader.
		if _, serr := os.Stat(name); serr == nil && strings.ContainsRune(name, '/') {
			return failCode(ExitNotFound, "command %q cannot be started: %v (the file exists; its interpreter or loader does not)", name, inner)
		}
		return failCode(ExitNotFound, "command %q not found: %v", name, inner)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return failCode(ExitCannotExecute, "command %q cannot be executed: %v", name, inner)
	}
	return fail("starting %q in the session cgroup: %v", name, inner)
}

// exitStatus returns vigil's exit code for the child's wait status: its
// exit code, or 128+N (and N) when signal N killed it.
func exitStatus(ps *os.ProcessState) (code, sig int) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ps.ExitCode(), 0
}

// signals subscribes to the forwarded signals for the life of a run.
func signals() (chan os.Signal, func()) {
	c := make(chan os.Signal, 8)
	signal.Notify(c, forwarded...)
	return c, func() { signal.Stop(c) }
}

// startChild starts cmd from a goroutine locked to its OS thread until
// the child is reaped: the parent-death signal follows the thread that
// forked. For the fork, that thread steps into lim's cgroup v1 groups and
// onto cpus (the child inherits both), and steps back right after.
func startChild(cmd *exec.Cmd, lim *limits.Set, cpus *unix.CPUSet) (done <-chan error, err error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// On any failure to step back, the goroutine ends with the thread
		// still locked, which ends the thread: it is never reused.
		restore, err := affinity.PinThread(cpus)
		if err != nil {
			started <- err
			return
		}
		leave, err := lim.Enter()
		if err != nil {
			started <- errors.Join(fmt.Errorf("entering the limit groups: %w", err), restore())
			return
		}
		err = cmd.Start()
		if back := errors.Join(leave(), restore()); back != nil {
			if err == nil {
				// The child runs and is reaped below; only the thread
				// is not reused.
				started <- fmt.Errorf("stepping back after the fork: %w", back)
				waited <- cmd.Wait()
				return
			}
			started <- errors.Join(err, back)
			return
		}
		if err != nil {
			runtime.UnlockOSThread()
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
		runtime.UnlockOSThread()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}
