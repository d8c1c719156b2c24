//go:build linux

package runner

import (
	"bufio"
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

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// SIGINT, SIGTERM and SIGKILL of vigil record in each phase, the phase
// reached through HoldPhaseEnv (vigil stops there until released), not by
// sleeping. Whatever the signal: no child outlives the run, no session
// cgroup or probe is left once the next vigil has started, and the final
// archive name holds a complete archive or nothing.
func TestE2ESignalsInEveryPhase(t *testing.T) {
	testenv.RequireRoot(t)
	phases := []string{"preflight", "attach", "child_runtime", "drain", "archive_write"}
	for _, phase := range phases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
			t.Run(fmt.Sprintf("%s/%v", phase, sig), func(t *testing.T) {
				signalInPhase(t, phase, sig)
			})
		}
	}
}

func signalInPhase(t *testing.T, phase string, sig syscall.Signal) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	arc := filepath.Join(dir, "run.tar.gz")
	runID := fmt.Sprintf("phase%s%d", strings.ReplaceAll(phase, "_", ""), sig)
	// The command lasts past the hold only where it must be running.
	script := `echo $$ > "$0"`
	if phase == "child_runtime" {
		script += `; exec sleep 60`
	}
	cmd := exec.Command(testenv.Vigil(t), "record", "-q", "--run-id", runID, "--archive", arc, "--", "sh", "-c", script, pidFile)
	cmd.Env = append(os.Environ(), HoldPhaseEnv+"="+phase, HoldFIFOEnv+"="+fifo)
	// A file, not a pipe: the command inherits vigil's stderr, and Wait
	// would otherwise wait for every holder of the pipe, not for vigil.
	errFile, err := os.CreateTemp("", "vigil-phase-stderr-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	got, err := os.ReadFile(fifo) // vigil is now stopped at the phase
	if err != nil || string(got) != phase {
		t.Fatalf("hold: %q %v", got, err)
	}
	progs, links := bpfObjectsOf(t, cmd.Process.Pid)
	if (phase == "child_runtime" || phase == "drain") && len(progs) == 0 {
		t.Fatalf("no probe loaded in phase %s", phase)
	}
	childPID := 0
	if data, err := os.ReadFile(pidFile); err == nil {
		childPID, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig != syscall.SIGKILL {
		if err := os.WriteFile(fifo, []byte{1}, 0); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	var stderr strings.Builder
	data, _ := os.ReadFile(errFile.Name())
	stderr.Write(data)

	switch {
	case sig == syscall.SIGKILL:
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("vigil: %v, want killed", cmd.ProcessState)
		}
		if _, err := os.Stat(arc); err == nil {
			t.Fatal("a file under the final archive name after SIGKILL before the write")
		}
	case phase == "preflight" || phase == "attach":
		if code != 125 || !strings.Contains(stderr.String(), "interrupted by") {
			t.Fatalf("exit %d, stderr %q; want 125, interrupted before the command started", code, stderr.String())
		}
		oneLine(t, stderr.String())
		if _, err := os.Stat(arc); err == nil {
			t.Fatal("archive written for a run that never started")
		}
	case phase == "child_runtime":
		// Forwarded: the command died of it, and the archive says so.
		if code != 128+int(sig) {
			t.Fatalf("exit %d, want %d: %s", code, 128+int(sig), stderr.String())
		}
		if b := verifyAndRead(t, arc); b.Run.Signal != int(sig) {
			t.Fatalf("run.json signal %d, want %d", b.Run.Signal, sig)
		}
	default:
		// The command is over: the evidence is written, the signal
		// changes nothing.
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if b := verifyAndRead(t, arc); b.Health.KernelLayer.Status != wire.LayerComplete {
			t.Fatalf("kernel_layer %s", b.Health.KernelLayer.Status)
		}
	}

	// The command does not outlive vigil, however vigil ended.
	if childPID > 0 {
		waitGone(t, childPID, "the command")
	}
	// Probes go with the process that loaded them.
	waitUnloaded(t, progs, links)
	// The next vigil removes what a killed one left (its session and
	// temporary files); then nothing of this run remains.
	if sig == syscall.SIGKILL {
		if r := runVigil(t, dir, "record", "--archive", arc, "--", "true"); r.code != 0 {
			t.Fatalf("next record: %d %s", r.code, r.stderr)
		}
		verifyAndRead(t, arc)
	}
	assertNoSessions(t, runID)
	assertOnlyVigilFiles(t, dir, sig == syscall.SIGKILL || phase == "child_runtime" || phase == "drain" || phase == "archive_write")
}

// assertOnlyVigilFiles fails if dir holds anything beside the test's own
// files and, when archived, the archive.
func assertOnlyVigilFiles(t *testing.T, dir string, archived bool) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		switch e.Name() {
		case "hold", "child.pid":
		case "run.tar.gz":
			if !archived {
				t.Errorf("archive written")
			}
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// bpfObjectsOf lists the ids of the BPF programs and links process pid
// holds open (from /proc/PID/fdinfo).
func bpfObjectsOf(t *testing.T, pid int) (progs []ebpf.ProgramID, links []link.ID) {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fdinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		f, err := os.Open(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil {
				continue
			}
			switch k {
			case "prog_id":
				progs = append(progs, ebpf.ProgramID(id))
			case "link_id":
				links = append(links, link.ID(id))
			}
		}
		f.Close()
	}
	return progs, links
}

// waitUnloaded waits (the kernel frees them asynchronously) until none of
// the programs and links exists any more.
func waitUnloaded(t *testing.T, progs []ebpf.ProgramID, links []link.ID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := 0
		for _, id := range progs {
			if p, err := ebpf.NewProgramFromID(id); err == nil {
				p.Close()
				left++
			} else if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("program %d: %v", id, err)
			}
		}
		for _, id := range links {
			if l, err := link.NewFromID(id); err == nil {
				l.Close()
				left++
			} else if !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("link %d: %v", id, err)
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d BPF programs and links still exist after vigil ended", left, len(progs)+len(links))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until process pid is gone (or a zombie), failing after
// a few seconds.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(data), ')'); i > 0 && len(data) > i+2 && data[i+2] == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still running after vigil ended", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
