//go:build linux

package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// HelperVar names the helper a re-run test binary is to run instead of its
// tests (see Main and HelperCommand).
const HelperVar = "VIGIL_TEST_HELPER"

// ExitCode is a helper's error that is only an exit status.
type ExitCode int

func (c ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// Main is a TestMain for a package whose test binary doubles as a helper
// process. With HelperVar set, it runs helper with that name and the
// command line's arguments instead of the tests, and exits 0, the status
// of an ExitCode error, or 1 with any other error on stderr. Otherwise it
// runs the tests and removes the vigil binary Vigil built, if any.
func Main(m *testing.M, helper func(name string, args []string) error) {
	if name := os.Getenv(HelperVar); name != "" {
		err := helper(name, os.Args[1:])
		var code ExitCode
		switch {
		case err == nil:
			os.Exit(0)
		case errors.As(err, &code):
			os.Exit(int(code))
		}
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", name, err)
		os.Exit(1)
	}
	code := m.Run()
	if vigil.dir != "" {
		os.RemoveAll(vigil.dir)
	}
	os.Exit(code)
}

// HelperEnv is the environment entry that makes a re-run test binary run
// helper name, for a command built by other means (under vigil record, say).
func HelperEnv(name string) string { return HelperVar + "=" + name }

// HelperCommand is a command that re-runs this test binary as helper name
// with args; the package's TestMain must be Main.
func HelperCommand(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), HelperEnv(name))
	return cmd
}

var vigil struct {
	once     sync.Once
	dir, bin string
	err      error
}

// Vigil returns the vigil binary, built from cmd/vigil once per test
// binary (Main removes it). Its directory is world-readable, so a test can
// run it as an unprivileged user.
func Vigil(t testing.TB) string {
	t.Helper()
	vigil.once.Do(func() {
		if vigil.dir, vigil.err = os.MkdirTemp("", "vigil-test-bin-"); vigil.err != nil {
			return
		}
		if vigil.err = os.Chmod(vigil.dir, 0o755); vigil.err != nil {
			return
		}
		vigil.bin = filepath.Join(vigil.dir, "vigil")
		out, err := exec.Command("go", "build", "-o", vigil.bin, "vigil/cmd/vigil").CombinedOutput()
		if err != nil {
			vigil.err = fmt.Errorf("go build vigil/cmd/vigil: %v: %s", err, out)
		}
	})
	if vigil.err != nil {
		t.Fatal(vigil.err)
	}
	return vigil.bin
}

// WriteReadFiles is a file workload of known shape: workers goroutines
// write n files of 128 bytes into dir, named prefix and a six-digit index,
// and read each back: two opens per file.
func WriteReadFiles(dir, prefix string, n, workers int) error {
	if n < 0 || workers < 1 {
		return fmt.Errorf("files: %d files with %d workers", n, workers)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	payload := make([]byte, 128)
	for w := range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				p := filepath.Join(dir, fmt.Sprintf("%s%06d", prefix, i))
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
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ExecFromThread is the helper (HelperEnv(ExecFromThread), any package
// whose tests import testenv) that starts a few OS threads, then calls
// execve of /bin/true from a thread other than the thread-group leader:
// the kernel gives that thread the leader's id. It runs from init, where
// the main goroutine holds the leader thread, so the exec goroutine is
// surely on another; it exits 1 if the exec fails.
const ExecFromThread = "exec-from-thread"

func init() {
	if os.Getenv(HelperVar) != ExecFromThread {
		return
	}
	for range 3 {
		go func() {
			runtime.LockOSThread()
			select {}
		}()
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			errc <- errors.New("the exec goroutine runs on the leader thread")
			return
		}
		errc <- unix.Exec("/bin/true", []string{"true"}, os.Environ())
	}()
	fmt.Fprintf(os.Stderr, "helper %s: %v\n", ExecFromThread, <-errc)
	os.Exit(1)
}
