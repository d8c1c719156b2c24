//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
)

// runHelper is what the test binary does when re-run as a workload
// (testenv.Main): "files N C DIR" writes N files into DIR with C workers
// and reads each back, two opens per file, then removes them; "misses N
// DIR" opens N distinct names in DIR that do not exist (N failed opens,
// N distinct paths, nothing created); "sends N" sends a UDP datagram to
// each of N distinct loopback addresses (127.0.0.0/8, port 9), nothing
// listening.
func runHelper(name string, args []string) error {
	if name == "sends" && len(args) == 1 {
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for i := range n {
			to := &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, byte(i >> 16), byte(i >> 8), byte(i)}}
			if err := unix.Sendto(fd, []byte{'x'}, 0, to); err != nil && err != unix.ECONNREFUSED {
				return fmt.Errorf("send to %v: %w", to.Addr, err)
			}
		}
		return nil
	}
	if name == "misses" && len(args) == 2 {
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return err
		}
		for i := range n {
			if f, err := os.Open(filepath.Join(args[1], fmt.Sprintf("missing-%07d", i))); err == nil {
				f.Close()
				return fmt.Errorf("%s exists", f.Name())
			}
		}
		return nil
	}
	if name != "files" || len(args) != 3 {
		return fmt.Errorf("%s %q: want files N C DIR or misses N DIR", name, args)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	c, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	if err := testenv.WriteReadFiles(args[2], "f", n, c); err != nil {
		return err
	}
	for i := range n {
		os.Remove(filepath.Join(args[2], fmt.Sprintf("f%06d", i)))
	}
	return nil
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
