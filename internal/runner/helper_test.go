//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary act as a workload instead of running
// tests: "files:N:C:DIR" writes N files into DIR with C workers and reads
// each back, two opens per file, then removes them; "exec-from-thread"
// starts threads and calls execve from one that is not the group leader.
const helperEnv = "VIGIL_RUNNER_TEST_HELPER"

// runHelper runs the workload named by helperEnv, if any, and exits.
func runHelper() {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		return
	}
	if spec == "exec-from-thread" {
		execFromThread()
	}
	var n, c int
	var dir string
	if _, err := fmt.Sscanf(spec, "files:%d:%d:%s", &n, &c, &dir); err != nil || n < 0 || c < 1 {
		fmt.Fprintf(os.Stderr, "%s=%q: want files:N:C:DIR\n", helperEnv, spec)
		os.Exit(2)
	}
	if err := fileWorkload(dir, n, c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func fileWorkload(dir string, n, workers int) error {
	payload := make([]byte, 128)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				p := filepath.Join(dir, "f"+strconv.Itoa(i))
				if err := os.WriteFile(p, payload, 0o644); err != nil {
					errs[w] = err
					return
				}
				got, err := os.ReadFile(p)
				if err != nil || len(got) != len(payload) {
					errs[w] = fmt.Errorf("reading back %s: %v (%d bytes)", p, err, len(got))
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		os.Remove(filepath.Join(dir, "f"+strconv.Itoa(i)))
	}
	return nil
}

// execFromThread starts a few OS threads, then calls execve of /bin/true
// from a thread other than the group leader: the kernel gives that thread
// the leader's TID, which the session task balance must account for.
func execFromThread() {
	// Keep this goroutine on the leader, so the exec goroutine cannot be.
	runtime.LockOSThread()
	for i := 0; i < 3; i++ {
		go func() {
			runtime.LockOSThread()
			select {}
		}()
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == os.Getpid() {
			errc <- fmt.Errorf("exec-from-thread: goroutine runs on the leader thread")
			return
		}
		errc <- unix.Exec("/bin/true", []string{"true"}, os.Environ())
	}()
	fmt.Fprintln(os.Stderr, <-errc)
	os.Exit(1)
}

// exitedPID is the pid of a process that has run and been reaped: an
// owner that is surely gone (pids are not reused this soon).
func exitedPID(t *testing.T) int {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	return dead.Process.Pid
}
