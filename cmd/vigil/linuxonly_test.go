package main

import (
	"runtime"
	"testing"
)

// On every system the stand-in refuses in one line naming the command and
// the system, whatever flags it is given; main turns the error into exit 125.
func TestLinuxOnlyCommand(t *testing.T) {
	cmd := linuxOnlyCmd("record --archive FILE -- CMD", "Run a command")
	cmd.SetArgs([]string{"--archive", "x.tar.gz", "--", "true"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	want := "record is Linux only (this is " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if exitCode(err) != ExitRunnerFailure {
		t.Fatalf("exit %d, want %d", exitCode(err), ExitRunnerFailure)
	}
}
