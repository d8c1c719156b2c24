//go:build linux

package runner

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence"
	"vigil/internal/testenv"
)

// The test binary doubles as a workload (runHelper).
func TestMain(m *testing.M) { testenv.Main(m, runHelper) }

// result is one finished vigil invocation.
type result struct {
	code           int
	stdout, stderr string
	// treeMaxRSSKiB is wait4's ru_maxrss: the larger of vigil's own peak
	// and that of the largest process vigil waited for.
	treeMaxRSSKiB int64
}

// runVigil runs the vigil binary in dir with args and waits for it.
func runVigil(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(testenv.Vigil(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running vigil: %v", err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String(), rss}
}

// verifyAndRead checks the archive with `vigil verify` and decodes it.
func verifyAndRead(t *testing.T, path string) *evidence.Bundle {
	t.Helper()
	if r := runVigil(t, filepath.Dir(path), "verify", path); r.code != 0 {
		t.Fatalf("vigil verify %s: exit %d: %s", path, r.code, r.stderr)
	}
	if err := archive.Verify(path); err != nil {
		t.Fatalf("archive.Verify: %v", err)
	}
	a, err := archive.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// The archive was written as the events arrived; encoded at once
	// from the same events it is the same bytes (a signed one differs by
	// its signature entry only, which Encode does not write).
	if a.Signature == nil {
		var again bytes.Buffer
		if err := archive.Encode(&again, a.Bundle); err != nil {
			t.Fatalf("re-encoding %s: %v", path, err)
		}
		if data, _ := os.ReadFile(path); !bytes.Equal(data, again.Bytes()) {
			t.Fatalf("%s (%d bytes, streamed) differs from the same events encoded at once (%d bytes)", path, len(data), again.Len())
		}
	}
	return a.Bundle
}

// assertNoSessions fails if any session cgroup of a live test-started
// vigil (named with one of runIDs) is left in vigil's parent cgroup.
func assertNoSessions(t *testing.T, runIDs ...string) {
	t.Helper()
	for _, id := range runIDs {
		assertNoSession(t, id)
	}
}

// oneLine fails unless s is exactly one non-empty line.
func oneLine(t *testing.T, s string) {
	t.Helper()
	s = strings.TrimSuffix(s, "\n")
	if s == "" || strings.Contains(s, "\n") {
		t.Errorf("want a one-line error, got %q", s)
	}
}
