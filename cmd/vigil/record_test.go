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

// A size is read in bytes: 3MiB reaches the capture as 3,145,728, which
// it refuses (not a power of two), naming it; past 1GiB is refused here.
func TestRecordRingSizeUnits(t *testing.T) {
	arc := filepath.Join(t.TempDir(), "a.tar.gz")
	_, errOut, err := runVigil(t, "record", "--ring-size", "3MiB", "--archive", arc, "--", "true")
	if exitCode(err) != ExitRunnerFailure || !strings.Contains(errOut, "--ring-size 3145728") {
		t.Fatalf("--ring-size 3MiB: exit %d, %q", exitCode(err), errOut)
	}
	_, _, err = runVigil(t, "record", "--ring-size", "2GiB", "--archive", arc, "--", "true")
	if exitCode(err) != ExitRunnerFailure || !strings.Contains(err.Error(), `--ring-size "2GiB": at most 1GiB`) {
		t.Fatalf("--ring-size 2GiB: exit %d, %v", exitCode(err), err)
	}
	if _, serr := os.Stat(arc); serr == nil {
		t.Fatal("an archive was written")
	}
}
