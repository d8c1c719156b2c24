//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
)

// A vigil killed while writing its archive leaves hidden temporary files
// beside the target (and, on a file system without O_TMPFILE, one killed
// in the instant a scratch file has a name leaves that); the next record
// to that target removes those of dead writers and keeps those whose
// writer may still be running.
func TestE2ELeftoverTempsRemoved(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	deadPID := exitedPID(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	deadPID, livePID := deadPID, live.Process.Pid
	names := map[string]bool{ // name: should survive
		fmt.Sprintf(".run.tar.gz.tmp-%d-aaaa", deadPID):            false, // the runner's temp
		fmt.Sprintf("..run.tar.gz.tmp-%d-aaaa.tmp-12345", deadPID): false, // archive.Write's temp inside it
		fmt.Sprintf(".run.tar.gz.tmp-%d-bbbb", livePID):            true,  // a writer that may still run
		fmt.Sprintf(".other.tar.gz.tmp-%d-cccc", deadPID):          true,  // another target's
		"run.tar.gz.tmp-1-x":                        true,  // not a vigil temp name
		fmt.Sprintf(".vigil-spill-%d-123", deadPID): false, // a scratch file named for a moment
		fmt.Sprintf(".vigil-spill-%d-456", livePID): true,  // one whose maker may still run
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arc := filepath.Join(dir, "run.tar.gz")
	r := runVigil(t, dir, "record", "--archive", arc, "--", "true")
	if r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "removed 3 temporary file(s) of killed vigil runs") {
		t.Errorf("stderr does not report the removal: %s", r.stderr)
	}
	for n, keep := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if kept := err == nil; kept != keep {
			t.Errorf("%s: kept %v, want %v", n, kept, keep)
		}
	}
	verifyAndRead(t, arc)
}
