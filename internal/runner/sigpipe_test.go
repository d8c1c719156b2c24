//go:build linux

package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"vigil/internal/testenv"
)

// TestE2EClosedStderr: vigil's own notices go to stderr; when that is a
// pipe nobody reads any more (vigil record ... 2>&1 | head), a notice must
// not kill vigil mid-run with SIGPIPE: the straggler is still killed and
// counted, the archive written, the session removed, and vigil exits with
// the child's code.
func TestE2EClosedStderr(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	arc := filepath.Join(dir, "a.tar.gz")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := exec.Command(testenv.Vigil(t), "record", "--run-id", "e2eclosedstderr", "--grace", "0", "--archive", arc, "--",
		"sh", "-c", "(setsid sleep 60 > /dev/null 2>&1 &); exit 3")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("vigil: %v (status %v); want exit 3, the child's", err, cmd.ProcessState)
	}
	b := verifyAndRead(t, arc)
	if b.Health.CgroupCorrelation.StragglersKilled != 1 {
		t.Errorf("stragglers killed %d, want 1", b.Health.CgroupCorrelation.StragglersKilled)
	}
	assertNoSessions(t, "e2eclosedstderr")
}
