//go:build linux

package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"vigil/internal/affinity"

	"golang.org/x/sys/unix"

	"vigil/internal/interference"
	"vigil/internal/memcg"
	"vigil/internal/wire"
)

// spawnScript starts a sample. Its $0 is the v1 memory cgroup to join ("" for
// none) and "$@" the command. The shell joins the cgroup, forks a subshell
// (a real fork of a ~1.6 MiB shell), reports its pid on fd 3 and exits. The
// subshell, now re-parented to the harness (a child subreaper), waits on fd
// 4 until the harness has seen the shell exit, then execs the command; the
// harness reaps the command itself with wait4. The wait keeps the shell
// from reaping a command that finishes before the shell does.
//
// Why not start the command directly: Go starts children with
// vfork(CLONE_VM), and at execve Linux carries the old address space's RSS
// high-water mark into the new program's ru_maxrss, so a direct child's
// ru_maxrss is never below the harness's own RSS. A command forked by a small
// shell starts from the shell's mark instead.
//
// As for any asynchronous command of a non-interactive shell, the command
// starts with SIGINT and SIGQUIT ignored; the harness stops samples with
// SIGTERM and SIGKILL only.
const spawnScript = `[ -z "$0" ] || echo $$ > "$0/cgroup.procs" || exit 125
{ read -r _ <&4; exec 3>&- 4<&- "$@"; } &
echo $! >&3`

var subreaperOnce sync.Once
var subreaperErr error

// Executor runs one sample's command and measures it.
type Executor struct {
	Memcg *memcg.Controller // mode None: no tree peak
	// Timeout bounds one sample (0: none).
	Timeout time.Duration
	// StopGrace is how long a stopped sample's command gets to exit after
	// SIGTERM (so vigil record can tear its session down) before the whole
	// tree is killed.
	StopGrace time.Duration
	// StragglerGrace is how long descendants may take to leave after the
	// command exited before they are killed and counted.
	StragglerGrace time.Duration
	// CPUs, when set, pins every sample's process tree (--cpus).
	CPUs *unix.CPUSet
}

// Measurement is what running one command yields.
type Measurement struct {
	Start time.Time
	// Wall runs from starting the spawning shell to reaping the command.
	Wall time.Duration
	// User and Sys cover the spawning shell, the command and every
	// descendant the command reaped.
	User, Sys time.Duration
	// MaxRSS is the largest single process (bytes): the command's
	// ru_maxrss, which covers its reaped descendants.
	MaxRSS int64
	// TreePeak is the whole tree's peak (bytes), -1 when unavailable.
	TreePeak   int64
	PeakSource string
	ExitCode   int
	// Stragglers counts descendants still alive after the command exited,
	// which were killed.
	Stragglers int
	// Interference is the host's activity besides the sample meanwhile.
	Interference wire.Interference
	Interrupted  bool // stopped because ctx was cancelled
	TimedOut     bool
}

// Run runs argv with extra env in dir, stdout/stderr to the given files.
// A non-nil error means the sample could not be run or cleaned up (as
// opposed to running and failing: a non-zero ExitCode).
func (e *Executor) Run(ctx context.Context, argv, env []string, dir string, stdout, stderr *os.File) (m Measurement, err error) {
	m = Measurement{TreePeak: -1, PeakSource: memcg.SourceUnavailable, ExitCode: -1}
	subreaperOnce.Do(func() { subreaperErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	if subreaperErr != nil {
		return m, fmt.Errorf("become child subreaper: %v", subreaperErr)
	}
	var group *memcg.Group
	if e.Memcg != nil && e.Memcg.Mode() != memcg.None {
		if group, err = e.Memcg.New(); err != nil {
			return m, err
		}
		defer func() {
			if rerr := group.Remove(); rerr != nil && err == nil {
				err = rerr
			}
		}()
		m.PeakSource = e.Memcg.Source()
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return m, err
	}
	defer pr.Close()
	gr, gw, err := os.Pipe()
	if err != nil {
		pw.Close()
		return m, err
	}
	defer gw.Close()
	join := ""
	sh := exec.Command("/bin/sh")
	if group != nil && !group.Prepare(sh) {
		join = group.Dir
	}
	sh.Args = append([]string{"/bin/sh", "-c", spawnScript, join}, argv...)
	sh.Env = append(os.Environ(), env...)
	sh.Dir = dir
	sh.Stdout, sh.Stderr = stdout, stderr
	sh.ExtraFiles = []*os.File{pw, gr}
	if sh.SysProcAttr == nil {
		sh.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own process group: a terminal's ^C reaches only the harness,
	// which then stops the sample in order.
	sh.SysProcAttr.Setpgid = true

	before := interference.Take()
	m.Start = before.At
	if err := affinity.StartPinned(e.CPUs, sh.Start); err != nil {
		pw.Close()
		gr.Close()
		return m, fmt.Errorf("start /bin/sh: %w", err)
	}
	pw.Close()
	gr.Close()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	shErr := sh.Wait()
	gw.Close() // the shell is gone: let the command start
	pgid := sh.Process.Pid
	addUsage(&m, sh.ProcessState)
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if perr != nil {
		// The shell never started the command (e.g. it could not join
		// the cgroup; its message is in the sample's stderr).
		return m, fmt.Errorf("spawning shell exited with %d (%v) without starting the command", exitCode(sh.ProcessState), shErr)
	}

	done := make(chan reaped, 1)
	go func() { done <- reap(pid) }()
	var timeout <-chan time.Time
	if e.Timeout > 0 {
		t := time.NewTimer(e.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var r reaped
	select {
	case r = <-done:
	case <-ctx.Done():
		m.Interrupted = true
		r = e.stop(pid, pgid, group, done)
	case <-timeout:
		m.TimedOut = true
		r = e.stop(pid, pgid, group, done)
	}
	if r.err != nil {
		return m, fmt.Errorf("wait for the command: %v", r.err)
	}
	m.Wall = r.at.Sub(m.Start)
	m.ExitCode = waitCode(r.status)
	m.User += time.Duration(r.usage.Utime.Nano())
	m.Sys += time.Duration(r.usage.Stime.Nano())
	m.MaxRSS = r.usage.Maxrss * 1024 // Linux reports KiB
	after := interference.Take()
	after.At = r.at
	m.Interference = interference.Measure(before, after, interference.Tree{
		CPU: m.User + m.Sys, Voluntary: r.usage.Nvcsw + shCsw(sh.ProcessState, true), Preempted: r.usage.Nivcsw + shCsw(sh.ProcessState, false)})

	// Descendants that outlive the command are stragglers: killed (they
	// would disturb the next sample), counted, and reaped if they were
	// re-parented to the harness.
	var left []int
	if group != nil {
		empty := group.WaitEmpty(e.StragglerGrace)
		if !empty {
			killed, kerr := group.Kill()
			m.Stragglers += len(killed)
			left = killed
			if kerr != nil {
				return m, kerr
			}
		}
		reapExited()
		peak, perr := group.Peak()
		if perr != nil {
			return m, perr
		}
		m.TreePeak = peak
	} else {
		left = killGroup(pgid, e.StragglerGrace)
		m.Stragglers += len(left)
	}
	reapKilled(left)
	return m, nil
}

// reaped is the command's wait4 result and the instant it returned.
type reaped struct {
	status syscall.WaitStatus
	usage  syscall.Rusage
	at     time.Time
	err    error
}

func reap(pid int) reaped {
	var r reaped
	for {
		_, err := syscall.Wait4(pid, &r.status, 0, &r.usage)
		if err == syscall.EINTR {
			continue
		}
		r.at, r.err = time.Now(), err
		return r
	}
}

// reapAll collects exit statuses of pids that were re-parented to the
// harness, so no zombie outlives its sample. block waits for processes
// that were just killed; otherwise only finished ones are collected.
// reapExited reaps every child of the harness that has ended: as the
// child subreaper it inherits each orphaned straggler, including those
// forked during the grace period that were never listed in the group, and
// one left unreaped would stay a zombie for the rest of the run. (A
// collector that has ended is reaped here too; it then reports that it
// exited.)
func reapExited() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

// reapKilled waits for each killed straggler that is the harness's child
// (re-parented to it); for any other pid wait4 returns ECHILD at once.
func reapKilled(pids []int) {
	for _, p := range pids {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(p, &ws, 0, nil)
			if err != syscall.EINTR {
				break
			}
		}
	}
}

// stop ends a running sample: SIGTERM to the command, which lets vigil
// record forward it and remove its session; after StopGrace, SIGKILL to
// every process of the tree.
func (e *Executor) stop(pid, pgid int, group *memcg.Group, done <-chan reaped) reaped {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	t := time.NewTimer(e.StopGrace)
	defer t.Stop()
	select {
	case r := <-done:
		return r
	case <-t.C:
	}
	if group != nil {
		_, _ = group.Kill()
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return <-done
}

// addUsage adds the spawning shell's CPU. Its ru_maxrss is not used: it
// carries the harness's own high-water mark (see spawnScript).
func addUsage(m *Measurement, st *os.ProcessState) {
	if st == nil {
		return
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		m.User += time.Duration(ru.Utime.Nano())
		m.Sys += time.Duration(ru.Stime.Nano())
	}
}

// shCsw is the spawning shell's voluntary (or involuntary) context switches.
func shCsw(st *os.ProcessState, voluntary bool) int64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if voluntary {
		return ru.Nvcsw
	}
	return ru.Nivcsw
}

func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok {
		return waitCode(ws)
	}
	return st.ExitCode()
}

// waitCode is the exit status, or 128+N for death by signal N.
func waitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// killGroup waits up to grace for the process group pgid to empty, then
// SIGKILLs whatever is left and returns those processes.
func killGroup(pgid int, grace time.Duration) []int {
	deadline := time.Now().Add(grace)
	for {
		left := groupMembers(pgid)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return left
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// groupMembers lists live (non-zombie) processes whose process group is pgid.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesized comm: state ppid pgrp ...
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
