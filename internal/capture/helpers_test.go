//go:build linux

package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/cgroup"
	"vigil/internal/testenv"
)

// The test binary doubles as the workload (helper).
func TestMain(m *testing.M) { testenv.Main(m, runHelper) }

func runHelper(mode string, args []string) error {
	switch mode {
	case "files": // DIR PREFIX N CONCURRENCY: write then read back N files
		var n, conc int
		fmt.Sscan(args[2], &n)
		fmt.Sscan(args[3], &conc)
		return testenv.WriteReadFiles(args[0], args[1], n, conc)
	case "openloop": // PATH N: open and close PATH N times, print elapsed ns
		var n int
		fmt.Sscan(args[1], &n)
		start := time.Now()
		for i := 0; i < n; i++ {
			fd, err := unix.Openat(unix.AT_FDCWD, args[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
		fmt.Println(time.Since(start).Nanoseconds())
		return nil
	case "getpidloop": // N: call getpid N times, print the thread's CPU ns per call
		var n int
		fmt.Sscan(args[0], &n)
		runtime.LockOSThread()
		start := threadCPU()
		for range n {
			unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0)
		}
		fmt.Println(float64(threadCPU()-start) / float64(n))
		return nil
	case "ringnoploop": // N: N io_uring NOPs, one submitted and reaped at a time; print the thread's CPU ns per NOP
		var n int
		fmt.Sscan(args[0], &n)
		runtime.LockOSThread()
		r, err := newTestRing(4)
		if err != nil {
			return err
		}
		defer r.close()
		start := threadCPU()
		for range n {
			r.sqe() // IORING_OP_NOP: a cleared entry
			if err := r.enter(1, 1); err != nil {
				return err
			}
			r.reap()
		}
		fmt.Println(float64(threadCPU()-start) / float64(n))
		return nil
	case "firstopen": // CGROUP: Preflight, Open, Close in a fresh process; print µs of each
		start := time.Now()
		if err := Preflight(Config{}); err != nil {
			return err
		}
		pre := time.Since(start)
		t := time.Now()
		c, err := Open(Config{CgroupPath: args[0]})
		if err != nil {
			return err
		}
		open := time.Since(t)
		t = time.Now()
		if err := c.Close(); err != nil {
			return err
		}
		fmt.Println(pre.Microseconds(), open.Microseconds(), c.Timings().Load.Microseconds(), c.Timings().Attach.Microseconds(), time.Since(t).Microseconds())
		return nil
	case "openat2": // PATH: create PATH with openat2
		fd, err := unix.Openat2(unix.AT_FDCWD, args[0], &unix.OpenHow{
			Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC,
			Mode:  0o640,
		})
		if err != nil {
			return err
		}
		return unix.Close(fd)
	case "creat": // PATH...: open each PATH with O_CREAT, twice: the first may create it, the second finds it
		for range 2 {
			for _, p := range args {
				fd, err := unix.Open(p, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
				if err != nil {
					return err
				}
				unix.Close(fd)
			}
		}
		return nil
	case "creatrace": // PATH N: N threads open PATH with O_CREAT at once; one of them creates it
		var n int
		fmt.Sscan(args[1], &n)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, n)
		for range n {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				runtime.LockOSThread()
				ready.Done()
				<-start
				fd, err := unix.Open(args[0], unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
				if err != nil {
					errs <- err
					return
				}
				unix.Close(fd)
			}()
		}
		ready.Wait()
		close(start)
		done.Wait()
		close(errs)
		return <-errs
	case "tmpfile": // DIR: open an unnamed file in DIR (O_TMPFILE)
		fd, err := unix.Open(args[0], unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	case "connect": // PORT UNIXPATH: connect to closed TCP ports and a missing unix socket
		var port int
		fmt.Sscan(args[0], &port)
		try := func(domain int, sa unix.Sockaddr) {
			fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return
			}
			unix.Connect(fd, sa)
			unix.Close(fd)
		}
		try(unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		try(unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}})
		try(unix.AF_UNIX, &unix.SockaddrUnix{Name: args[1]})
		return nil
	}
	if h, ok := v2Helpers[mode]; ok {
		return h(args)
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// cgroup2Mount finds the cgroup v2 mount point (/sys/fs/cgroup/unified on
// hybrid hosts, /sys/fs/cgroup on pure v2 hosts).
func cgroup2Mount(t testing.TB) string {
	t.Helper()
	mnt, err := cgroup.FindV2Mount()
	if err != nil {
		t.Fatal(err)
	}
	return mnt
}

var cgroupSeq atomic.Int64

// threadCPU is the calling thread's CPU time in nanoseconds: time the
// thread spends preempted by other tasks is left out.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// testCgroup creates a throwaway cgroup and removes it at cleanup, killing
// anything this test left in it first.
func testCgroup(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(cgroup2Mount(t), fmt.Sprintf("vigil-capture-test-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if populated(t, dir) {
			os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
			waitEmpty(t, dir)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	return dir
}

func populated(t testing.TB, dir string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte("populated 1"))
}

// waitEmpty blocks until cgroup.events says "populated 0", woken by
// inotify on every change of the file.
func waitEmpty(t testing.TB, dir string) {
	t.Helper()
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, filepath.Join(dir, "cgroup.events"), unix.IN_MODIFY); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 4096)
	for populated(t, dir) {
		if time.Now().After(deadline) {
			t.Fatalf("cgroup %s still populated after 30s", dir)
		}
		fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 1000); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			unix.Read(in, buf)
		}
	}
}

// command builds a command that starts directly inside cgroup dir
// (clone3 CLONE_INTO_CGROUP), or in the test's own cgroup if dir is "".
func command(t testing.TB, dir string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	if dir != "" {
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(f.Fd())}
	}
	return cmd
}

// helper builds a command re-running this test binary as a helper.
func helper(t testing.TB, dir, mode string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(t, dir, self, args...)
	cmd.Env = append(os.Environ(), testenv.HelperEnv(mode))
	return cmd
}

// openCapture opens a capture on dir and closes it at cleanup.
func openCapture(t testing.TB, dir string, ringSize int) *Capture {
	t.Helper()
	return openCaptureWith(t, Config{CgroupPath: dir, RingSize: ringSize})
}

// openCaptureWith opens a capture of cfg, requires every probe attached,
// and closes it at cleanup.
func openCaptureWith(t testing.TB, cfg Config) *Capture {
	t.Helper()
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	for _, p := range c.Probes() {
		if !p.Attached {
			t.Fatalf("probe %s not attached: %s", p.Name, p.Error)
		}
	}
	return c
}

// finish waits for dir to be empty, then drains c.
func finish(t testing.TB, c *Capture, dir string) *Result {
	t.Helper()
	waitEmpty(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
