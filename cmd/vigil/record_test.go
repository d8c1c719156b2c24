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

// --programs takes auto, resident or load; resident and --ring-size refuse
// bad input in one line before touching the kernel, and an unknown
// subcommand is an error, not the help page.
func TestResidentFlags(t *testing.T) {
	arc := filepath.Join(t.TempDir(), "a.tar.gz")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--programs", "pinned", "--archive", arc, "--", "true"}, `--programs "pinned": want auto, resident or load`},
		{[]string{"resident", "bogus"}, `unknown subcommand "bogus"`},
		{[]string{"verify", "--bogus", arc}, `verify: unknown flag: --bogus`},
		{[]string{"resident", "load", "--bogus"}, `resident load: unknown flag: --bogus`},
		{[]string{"resident", "load", "--ring-size", "3MiB"}, "--ring-size 3MiB: "},
		{[]string{"resident", "load", "--ring-size", "lots"}, `--ring-size "lots"`},
		{[]string{"bench", "--programs", "pinned", "--out", filepath.Join(t.TempDir(), "b")}, `--programs "pinned": want load or resident`},
	} {
		_, _, err := runVigil(t, c.args...)
		if exitCode(err) != ExitRunnerFailure || err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, %v; want one line with %q", c.args, exitCode(err), err, c.want)
		}
	}
	if _, serr := os.Stat(arc); serr == nil {
		t.Fatal("an archive was written")
	}
}
