//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A vigil killed during a run leaves its private SDK event log in the
// temporary directory; the next run removes those of dead vigils only.
func TestRemoveStaleSDKLogs(t *testing.T) {
	dir := t.TempDir()
	dead := exitedPID(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	names := map[string]bool{ // name: should survive
		fmt.Sprintf("vigil-sdk-%d-run1-123.ndjson", dead):             false,
		fmt.Sprintf("vigil-sdk-%d-run2-456.ndjson", live.Process.Pid): true,
		fmt.Sprintf("vigil-sdk-%d-run3-789.ndjson", os.Getpid()):      true,
		fmt.Sprintf("vigil-sdk-%d-run4-000.ndjson.partial", dead):     true,
		fmt.Sprintf("other-%d-run5.ndjson", dead):                     true,
		fmt.Sprintf("vigil-sdk-x%d-run6.ndjson", dead):                true,
		// A dead pid as seen from here, but the file is locked in use (its
		// vigil runs in another PID namespace).
		fmt.Sprintf("vigil-sdk-%d-run7-111.ndjson", dead): true,
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	held, err := os.Open(filepath.Join(dir, fmt.Sprintf("vigil-sdk-%d-run7-111.ndjson", dead)))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := lockInUse(held); err != nil {
		t.Fatal(err)
	}
	removed := removeStaleSDKLogs(dir)
	if want := []string{fmt.Sprintf("vigil-sdk-%d-run1-123.ndjson", dead)}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for n, keep := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if kept := err == nil; kept != keep {
			t.Errorf("%s: kept %v, want %v", n, kept, keep)
		}
	}
}
