package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --ring-size takes a size like --max-memory does; a bad one is named in
// a one-line error before anything runs.
func TestRecordRingSizeFlag(t *testing.T) {
	arc := filepath.Join(t.TempDir(), "a.tar.gz")
	for _, bad := range []string{"1k", "-5", "2.5", "lots"} {
		_, _, err := runVigil(t, "record", "--ring-size", bad, "--archive", arc, "--", "true")
		if exitCode(err) != ExitRunnerFailure || !strings.Contains(err.Error(), `--ring-size "`+bad+`"`) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("--ring-size %s: exit %d, %v", bad, exitCode(err), err)
		}
		if _, serr := os.Stat(arc); serr == nil {
			t.Fatalf("--ring-size %s: an archive was written", bad)
		}
	}
}
