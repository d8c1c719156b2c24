//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/archive"
	"vigil/internal/cgroup"
)

// job is one run of the workload: extract the archive of N files into a
// fresh directory, with the observer's output in out.
type job struct {
	n       int
	archive string
	dest    string // fresh, empty, on the tmpfs
	out     string // fresh directory for the observer's output
	seq     int
}

// observer runs the workload under one way of watching it.
type observer interface {
	name() string
	// setup installs and starts what the observer needs; an error says
	// why it cannot run on this host.
	setup(ctx context.Context, h *harness) error
	// run times one job from the observer's start to the moment its
	// record is complete, and counts what it recorded.
	run(ctx context.Context, h *harness, j job) (sample, error)
	// command is the command line, for the report.
	command(h *harness) string
	version(ctx context.Context, h *harness) string
	teardown(h *harness)
}

// harness is what every observer shares.
type harness struct {
	work    string   // tmpfs root
	tar     string   // absolute path of GNU tar
	env     []string // the workload's environment, the same in every arm
	stderr  string   // file receiving the current command's stderr
	vigil   string
	install bool
}

func (h *harness) tarArgv(j job) []string {
	return []string{h.tar, "-xf", j.archive, "-C", j.dest}
}

// timed runs argv to completion and returns its wall time and peak
// resident set (ru_maxrss). stdout is discarded and stderr goes to a file
// (no pipe, no copying goroutine in the harness while it is timed); a
// failure carries stderr's tail.
//
// The command runs under GNU time, which reports its ru_maxrss: a child
// the harness started itself would report the harness's own peak, since
// Go starts children with vfork semantics and exec keeps the peak of the
// memory it replaces.
func (h *harness) timed(ctx context.Context, argv []string) (time.Duration, int64, error) {
	errf, err := os.Create(h.stderr)
	if err != nil {
		return 0, 0, err
	}
	defer errf.Close()
	rssFile := h.stderr + ".rss"
	os.Remove(rssFile)
	full := append([]string{gnuTime, "-f", "%M", "-o", rssFile}, argv...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Env = h.env
	cmd.Stderr = errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	rss, rssErr := readRSS(rssFile)
	if err != nil {
		return wall, rss, fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, h.stderrTail())
	}
	return wall, rss, rssErr
}

// gnuTime is GNU time (Debian package "time").
const gnuTime = "/usr/bin/time"

// readRSS reads GNU time's -f %M output: KiB on the last line (a line
// about the exit status may come before it).
func readRSS(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(lastLine(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: GNU time's %%M: %v", path, err)
	}
	return n, nil
}

func (h *harness) stderrTail() string {
	data, _ := os.ReadFile(h.stderr)
	s := strings.TrimSpace(string(data))
	if len(s) > 400 {
		s = "..." + s[len(s)-400:]
	}
	return strings.ReplaceAll(s, "\n", " / ")
}

// countFile applies a counter to an output file.
func countFile(path string, f func(io.Reader) (counts, error)) (counts, error) {
	fh, err := os.Open(path)
	if err != nil {
		return counts{}, err
	}
	defer fh.Close()
	c, err := f(fh)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func withCounts(s sample, c counts) sample {
	s.FileOpens, s.SetEvents, s.Lost = c.FileOpens, c.SetEvents, c.Lost
	return s
}

// bare is the workload alone.
type bare struct{}

func (bare) name() string                          { return "bare" }
func (bare) setup(context.Context, *harness) error { return nil }
func (bare) teardown(*harness)                     {}
func (bare) version(ctx context.Context, h *harness) string {
	return toolVersion(ctx, h.tar, "--version")
}
func (bare) command(h *harness) string { return "tar -xf ARCHIVE -C DEST" }
func (bare) run(ctx context.Context, h *harness, j job) (sample, error) {
	wall, rss, err := h.timed(ctx, h.tarArgv(j))
	return sample{WallNS: wall.Nanoseconds(), MaxRSSKiB: rss, FileOpens: -1, SetEvents: -1, Lost: -1}, err
}

// vigilRecord is vigil record writing an archive.
type vigilRecord struct{}

func (vigilRecord) name() string { return "vigil" }
func (vigilRecord) setup(ctx context.Context, h *harness) error {
	if _, err := os.Stat(h.vigil); err != nil {
		return err
	}
	return nil
}
func (vigilRecord) teardown(*harness) {}
func (vigilRecord) version(ctx context.Context, h *harness) string {
	return toolVersion(ctx, h.vigil, "--version")
}
func (vigilRecord) command(h *harness) string {
	return "vigil record --programs load --archive OUT.tar.gz -- tar -xf ARCHIVE -C DEST"
}

// vigilResident is vigil record taking a resident set, which setup loads
// (vigil resident load) into a BPF file system mounted for it.
type vigilResident struct{ dir string }

func (*vigilResident) name() string { return "vigil-resident" }
func (v *vigilResident) setup(ctx context.Context, h *harness) error {
	mnt := filepath.Join(h.work, "bpf")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("bpf", mnt, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount a BPF file system: %w", err)
	}
	v.dir = filepath.Join(mnt, "vigil")
	if out, err := exec.CommandContext(ctx, h.vigil, "resident", "load", "--resident-dir", v.dir).CombinedOutput(); err != nil {
		unix.Unmount(mnt, 0)
		v.dir = ""
		return fmt.Errorf("vigil resident load: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}
func (v *vigilResident) teardown(h *harness) {
	if v.dir == "" {
		return
	}
	exec.Command(h.vigil, "resident", "unload", "--resident-dir", v.dir).Run()
	unix.Unmount(filepath.Dir(v.dir), 0)
}
func (*vigilResident) version(ctx context.Context, h *harness) string {
	return toolVersion(ctx, h.vigil, "--version")
}
func (*vigilResident) command(h *harness) string {
	return "vigil record --programs resident --archive OUT.tar.gz -- tar -xf ARCHIVE -C DEST (after vigil resident load)"
}
func (v *vigilResident) run(ctx context.Context, h *harness, j job) (sample, error) {
	return runVigil(ctx, h, j, []string{"--programs", "resident", "--resident-dir", v.dir}, "resident")
}
func (vigilRecord) run(ctx context.Context, h *harness, j job) (sample, error) {
	return runVigil(ctx, h, j, []string{"--programs", "load"}, "loaded")
}

// runVigil times vigil record with flags, and requires that its programs
// came from where source says (run.json capture_programs).
func runVigil(ctx context.Context, h *harness, j job, flags []string, source string) (sample, error) {
	out := filepath.Join(j.out, "run.tar.gz")
	argv := append(append(append([]string{h.vigil, "record"}, flags...), "--archive", out, "--"), h.tarArgv(j)...)
	wall, rss, err := h.timed(ctx, argv)
	s := sample{WallNS: wall.Nanoseconds(), MaxRSSKiB: rss}
	if err != nil {
		return s, err
	}
	a, err := archive.Open(out)
	if err != nil {
		return s, fmt.Errorf("vigil archive %s: %w", out, err)
	}
	if p := a.Bundle.Run.Programs; p == nil || p.Source != source {
		return s, fmt.Errorf("vigil archive %s: programs %+v, want %s", out, p, source)
	}
	s = withCounts(s, countVigil(a.Bundle))
	k := a.Bundle.Health.KernelLayer
	s.Detail = "kernel_layer=" + string(k.Status)
	if len(k.Reasons) > 0 {
		s.Detail += ": " + strings.Join(k.Reasons, "; ")
	}
	return s, nil
}

// straceObserver is strace following forks, writing the traced set.
type straceObserver struct{}

func (straceObserver) name() string { return "strace" }
func (straceObserver) setup(ctx context.Context, h *harness) error {
	return ensureInstalled(ctx, h.install, []string{"strace"}, "strace")
}
func (straceObserver) teardown(*harness) {}
func (straceObserver) version(ctx context.Context, h *harness) string {
	return toolVersion(ctx, "strace", "-V")
}
func straceTrace() string { return "trace=" + strings.Join(tracedSyscalls, ",") }
func (straceObserver) command(h *harness) string {
	return "strace -f -e " + straceTrace() + " -o OUT tar -xf ARCHIVE -C DEST"
}
func (straceObserver) run(ctx context.Context, h *harness, j job) (sample, error) {
	out := filepath.Join(j.out, "strace.txt")
	argv := append([]string{"strace", "-f", "-e", straceTrace(), "-o", out}, h.tarArgv(j)...)
	wall, rss, err := h.timed(ctx, argv)
	s := sample{WallNS: wall.Nanoseconds(), MaxRSSKiB: rss}
	if err != nil {
		return s, err
	}
	c, err := countFile(out, countStrace)
	return withCounts(s, c), err
}

// bpftraceObserver runs a bpftrace script on the syscalls tracepoints,
// filtered in the kernel to the run's cgroup v2; bpftrace -c starts the
// workload once its probes are attached, through a wrapper that moves
// itself into that cgroup before it executes tar.
type bpftraceObserver struct {
	cgroup    string // the run's cgroup v2 directory
	wrapper   string
	unmountTP func()
}

func (*bpftraceObserver) name() string { return "bpftrace" }

func (b *bpftraceObserver) setup(ctx context.Context, h *harness) error {
	if err := ensureInstalled(ctx, h.install, []string{"bpftrace"}, "bpftrace"); err != nil {
		return err
	}
	unmount, err := syscallTracepoints()
	if err != nil {
		return err
	}
	b.unmountTP = unmount
	root, err := cgroup.FindV2Mount()
	if err != nil {
		return err
	}
	b.cgroup = filepath.Join(root, fmt.Sprintf("vigil-peers-%d", os.Getpid()))
	if err := os.Mkdir(b.cgroup, 0o755); err != nil {
		return fmt.Errorf("cgroup for the run: %w", err)
	}
	b.wrapper = filepath.Join(h.work, "into-cgroup.sh")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s/cgroup.procs || exit 125\nexec \"$@\"\n", b.cgroup)
	return os.WriteFile(b.wrapper, []byte(script), 0o755)
}

func (b *bpftraceObserver) teardown(h *harness) {
	if b.cgroup != "" {
		os.Remove(b.cgroup)
	}
	if b.unmountTP != nil {
		b.unmountTP()
	}
}

func (*bpftraceObserver) version(ctx context.Context, h *harness) string {
	return toolVersion(ctx, "bpftrace", "--version")
}

// bpftraceProgram prints one line per event of the traced set: opens at
// their return with the result (as strace and vigil have it), execve and
// connect at entry. Only tasks in cgroup pass the filter.
func bpftraceProgram(cgroup string) string {
	f := fmt.Sprintf("/cgroup == cgroupid(%q)/", cgroup)
	return `tracepoint:syscalls:sys_enter_open,
tracepoint:syscalls:sys_enter_openat,
tracepoint:syscalls:sys_enter_openat2
` + f + `
{ @fname[tid] = args->filename; }

tracepoint:syscalls:sys_exit_open,
tracepoint:syscalls:sys_exit_openat,
tracepoint:syscalls:sys_exit_openat2
/@fname[tid]/
{ printf("open %d %d %s\n", pid, args->ret, str(@fname[tid])); delete(@fname[tid]); }

tracepoint:syscalls:sys_enter_execve
` + f + `
{ printf("execve %d %s\n", pid, str(args->filename)); }

tracepoint:syscalls:sys_enter_connect
` + f + `
{ printf("connect %d %d\n", pid, args->fd); }

END { clear(@fname); }
`
}

func (b *bpftraceObserver) command(h *harness) string {
	return "bpftrace -o OUT -e PROGRAM -c 'sh into-cgroup.sh tar -xf ARCHIVE -C DEST' (PROGRAM: scripts/peers/observers.go bpftraceProgram)"
}

func (b *bpftraceObserver) run(ctx context.Context, h *harness, j job) (sample, error) {
	out := filepath.Join(j.out, "bpftrace.txt")
	// bpftrace -c runs only ELF executables: the script goes through sh.
	child := append([]string{"/bin/sh", b.wrapper}, h.tarArgv(j)...)
	for _, a := range child {
		if strings.ContainsAny(a, " \t\n'\"\\") {
			return sample{}, fmt.Errorf("bpftrace -c splits its command at spaces: %q cannot be passed", a)
		}
	}
	argv := []string{"bpftrace", "-o", out, "-e", bpftraceProgram(b.cgroup), "-c", strings.Join(child, " ")}
	wall, rss, err := h.timed(ctx, argv)
	s := sample{WallNS: wall.Nanoseconds(), MaxRSSKiB: rss}
	if err != nil {
		return s, err
	}
	c, err := countFile(out, countBpftrace)
	return withCounts(s, c), err
}

// auditdObserver is the Linux audit system with auditd writing the log:
// a syscall rule on the traced set, scoped to the run by its login uid
// (set by a wrapper before it executes tar, and inherited by everything
// the run starts) and tagged with a key.
type auditdObserver struct {
	dir               string
	log               string
	wrapper           string
	onRules, offRules string
	daemon            *exec.Cmd
	// saved is the audit status before the run, restored at the end.
	saved map[string]string
}

const (
	auditKey = "vigil-peers"
	// auditLoginUID marks the run's tasks: a value no login session
	// gets, inherited across fork and exec.
	auditLoginUID = "1999999999"
)

func (*auditdObserver) name() string { return "auditd" }

func auditRule(op string) string {
	r := op + " always,exit -F arch=b64"
	for _, s := range tracedSyscalls {
		r += " -S " + s
	}
	return r + " -F auid=" + auditLoginUID + " -k " + auditKey
}

func (a *auditdObserver) command(h *harness) string {
	return "auditctl -e 1 " + auditRule("-a") + "; set-loginuid.sh tar -xf ARCHIVE -C DEST; auditctl -m MARKER; (wait for MARKER in auditd's log); auditctl " + auditRule("-d") + " -e 0"
}

func (*auditdObserver) version(ctx context.Context, h *harness) string {
	return "auditd " + debianPackageVersion(ctx, "auditd")
}

// auditStatus parses auditctl -s: "key value" lines.
func auditStatus(ctx context.Context) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, "auditctl", "-s").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("auditctl -s: %v: %s", err, lastLine(string(out)))
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
			m[k] = v
		}
	}
	return m, nil
}

func auditctl(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "auditctl", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("auditctl %s: %v: %s", strings.Join(args, " "), err, lastLine(string(out)))
	}
	return nil
}

func (a *auditdObserver) setup(ctx context.Context, h *harness) error {
	if err := ensureInstalled(ctx, h.install, []string{"auditd"}, "auditd", "auditctl"); err != nil {
		return err
	}
	st, err := auditStatus(ctx)
	if err != nil {
		return fmt.Errorf("the kernel's audit interface is not usable here: %w", err)
	}
	if st["pid"] != "0" {
		return fmt.Errorf("an audit daemon (pid %s) already owns the audit log here; it is not replaced", st["pid"])
	}
	if v, _ := os.ReadFile("/proc/self/loginuid"); len(v) == 0 {
		return errors.New("no /proc/self/loginuid: the kernel lacks CONFIG_AUDITSYSCALL, the run cannot be scoped")
	}
	a.saved = st
	a.dir = filepath.Join(h.work, "audit")
	a.log = filepath.Join(a.dir, "audit.log")
	if err := os.Mkdir(a.dir, 0o700); err != nil {
		return err
	}
	conf, err := auditdConf(a.log)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(a.dir, "auditd.conf"), conf, 0o600); err != nil {
		return err
	}
	a.wrapper = filepath.Join(h.work, "set-loginuid.sh")
	script := "#!/bin/sh\necho " + auditLoginUID + " > /proc/self/loginuid || exit 125\nexec \"$@\"\n"
	if err := os.WriteFile(a.wrapper, []byte(script), 0o755); err != nil {
		return err
	}
	a.onRules = filepath.Join(a.dir, "on.rules")
	a.offRules = filepath.Join(a.dir, "off.rules")
	if err := os.WriteFile(a.onRules, []byte("-e 1\n"+auditRule("-a")+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(a.offRules, []byte(auditRule("-d")+"\n-e 0\n"), 0o600); err != nil {
		return err
	}
	errf, err := os.Create(filepath.Join(a.dir, "auditd.stderr"))
	if err != nil {
		return err
	}
	defer errf.Close()
	a.daemon = exec.Command("auditd", "-n", "-c", a.dir)
	a.daemon.Stderr = errf
	a.daemon.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := a.daemon.Start(); err != nil {
		return fmt.Errorf("auditd: %w", err)
	}
	exited := make(chan struct{})
	go func() { a.daemon.Wait(); close(exited) }()
	want := strconv.Itoa(a.daemon.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case <-exited:
			data, _ := os.ReadFile(filepath.Join(a.dir, "auditd.stderr"))
			a.daemon = nil
			return fmt.Errorf("auditd exited at start: %s", lastLine(string(data)))
		default:
		}
		if s, err := auditStatus(ctx); err == nil && s["pid"] == want {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("auditd did not register with the kernel within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Debian's default audit.rules values, so a burst waits for auditd
	// rather than being dropped at the kernel's built-in backlog of 64;
	// auditing stays off outside this observer's samples, because with
	// it on every task of the host pays for it.
	return auditctl(ctx, "-e", "0", "-b", "8192", "--backlog_wait_time", "60000")
}

// auditdConf is Debian's auditd.conf with the log in dir, no rotation and
// no action on a full disk (the log lives on the run's tmpfs).
func auditdConf(log string) ([]byte, error) {
	base, err := os.ReadFile("/etc/audit/auditd.conf")
	if err != nil {
		return nil, err
	}
	set := map[string]string{
		"log_file": log, "log_group": "root", "max_log_file_action": "IGNORE",
		"space_left_action": "IGNORE", "admin_space_left_action": "IGNORE",
		"disk_full_action": "IGNORE", "disk_error_action": "IGNORE",
	}
	var out bytes.Buffer
	for _, l := range strings.Split(string(base), "\n") {
		k, _, ok := strings.Cut(l, "=")
		if v, found := set[strings.TrimSpace(k)]; ok && found {
			fmt.Fprintf(&out, "%s = %s\n", strings.TrimSpace(k), v)
			delete(set, strings.TrimSpace(k))
			continue
		}
		out.WriteString(l + "\n")
	}
	for k, v := range set {
		fmt.Fprintf(&out, "%s = %s\n", k, v)
	}
	return out.Bytes(), nil
}

func (a *auditdObserver) teardown(h *harness) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	auditctl(ctx, "-D", "-k", auditKey)
	if a.daemon != nil {
		a.daemon.Process.Signal(syscall.SIGTERM)
		for i := 0; i < 100; i++ {
			if s, err := auditStatus(ctx); err == nil && s["pid"] == "0" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if a.saved != nil {
		auditctl(ctx, "-e", a.saved["enabled"], "-b", a.saved["backlog_limit"],
			"--backlog_wait_time", a.saved["backlog_wait_time"])
	}
}

// auditdPID is the daemon's pid, for its memory.
func (a *auditdObserver) pid() int { return a.daemon.Process.Pid }

func (a *auditdObserver) run(ctx context.Context, h *harness, j job) (sample, error) {
	start, err := fileSize(a.log)
	if err != nil {
		return sample{}, err
	}
	st0, err := auditStatus(ctx)
	if err != nil {
		return sample{}, err
	}
	// 5 resets the peak RSS, so VmHWM afterwards is this sample's.
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", a.pid()), []byte("5"), 0)
	marker := fmt.Sprintf("vigil-peers-end-%d-done", j.seq)
	t0 := time.Now()
	if err := auditctl(ctx, "-R", a.onRules); err != nil {
		return sample{}, err
	}
	_, _, runErr := h.timed(ctx, append([]string{a.wrapper}, h.tarArgv(j)...))
	if err := auditctl(ctx, "-m", marker); err != nil {
		auditctl(ctx, "-R", a.offRules)
		return sample{}, err
	}
	end, waitErr := waitFor(ctx, a.log, start, []byte(marker), 120*time.Second)
	offErr := auditctl(ctx, "-R", a.offRules)
	wall := time.Since(t0)
	s := sample{WallNS: wall.Nanoseconds(), MaxRSSKiB: vmHWM(a.pid())}
	if err := errors.Join(runErr, waitErr, offErr); err != nil {
		return s, err
	}
	st1, err := auditStatus(ctx)
	if err != nil {
		return s, err
	}
	fh, err := os.Open(a.log)
	if err != nil {
		return s, err
	}
	defer fh.Close()
	c, err := countAudit(io.NewSectionReader(fh, start, end-start), auditKey)
	if err != nil {
		return s, err
	}
	l0, _ := strconv.ParseInt(st0["lost"], 10, 64)
	l1, _ := strconv.ParseInt(st1["lost"], 10, 64)
	c.Lost = l1 - l0 // the kernel's count: records auditd never received
	return withCounts(s, c), nil
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// waitFor polls the file from offset until marker appears, and returns
// the offset just past the line holding it.
func waitFor(ctx context.Context, path string, offset int64, marker []byte, limit time.Duration) (int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	var tail []byte // the part of the last read that could start the marker
	pos := offset
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(limit)
	for {
		n, err := fh.ReadAt(buf, pos)
		if n > 0 {
			chunk := append(tail, buf[:n]...)
			if i := bytes.Index(chunk, marker); i >= 0 {
				base := pos - int64(len(tail))
				nl := bytes.IndexByte(chunk[i:], '\n')
				if nl < 0 {
					// The line is not finished: read again from its start.
					pos = base + int64(i)
					tail = nil
					time.Sleep(time.Millisecond)
					continue
				}
				return base + int64(i+nl+1), nil
			}
			pos += int64(n)
			keep := min(len(chunk), len(marker)-1)
			tail = append([]byte(nil), chunk[len(chunk)-keep:]...)
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if n < len(buf) {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("%s: no %q after %s: auditd did not write the run's records", path, marker, limit)
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// vmHWM is a process's peak resident set in KiB, from /proc/PID/status.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
