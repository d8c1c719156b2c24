package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runVigil runs the root command with args and returns stdout, stderr and
// the error RunE returned.
func runVigil(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	rootCmd.SetArgs(args)
	// Commands that read an archive set the collector's pacing for the
	// process (gcpace.OneShot): put it back for the next test.
	gcPercent, memLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gcPercent)
	defer func() {
		debug.SetGCPercent(gcPercent)
		debug.SetMemoryLimit(memLimit)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		rootCmd.SetArgs(nil)
		resetFlags(rootCmd)
	}()
	err := rootCmd.Execute()
	return out.String(), errOut.String(), err
}

// resetFlags puts every flag of cmd and its subcommands back to its
// default and unset, so that one in-process run's flags never reach the
// next (cobra keeps them in the command tree).
func resetFlags(cmd *cobra.Command) {
	reset := func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			sv.Replace(nil)
		} else {
			f.Value.Set(f.DefValue)
		}
		f.Changed = false
	}
	cmd.Flags().VisitAll(reset)
	cmd.PersistentFlags().VisitAll(reset)
	for _, c := range cmd.Commands() {
		resetFlags(c)
	}
}

func writeArchives(t *testing.T) (good, bad string) {
	t.Helper()
	dir := t.TempDir()
	good = filepath.Join(dir, "good.tar.gz")
	if err := archive.Write(good, evidencetest.Bundle(60, 2)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	bad = filepath.Join(dir, "bad.tar.gz")
	if err := os.WriteFile(bad, data[:len(data)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	return good, bad
}

func exitCode(err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return ExitRunnerFailure
	}
	return 0
}

func TestVerifyCommand(t *testing.T) {
	good, bad := writeArchives(t)
	out, _, err := runVigil(t, "verify", good)
	if err != nil || !strings.HasPrefix(out, "ok: "+evidencetest.RunID+" "+good+" kernel_layer=complete") {
		t.Fatalf("verify good: %q, %v", out, err)
	}
	out, errOut, err := runVigil(t, "verify", good, bad)
	if exitCode(err) != ExitVerifyFailed {
		t.Fatalf("verify bad: exit %d (%v)", exitCode(err), err)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "vigil: "+bad+": truncated gzip stream") {
		t.Fatalf("verify bad stderr = %q", errOut)
	}
	if !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("good archive not reported alongside the bad one: %q", out)
	}
	missing := filepath.Join(t.TempDir(), "none.tar.gz")
	_, errOut, err = runVigil(t, "verify", missing)
	if exitCode(err) != ExitRunnerFailure || errOut != "vigil: "+missing+": no such file or directory\n" {
		t.Fatalf("verify missing file: exit %d, %q", exitCode(err), errOut)
	}
	dir := t.TempDir()
	_, errOut, err = runVigil(t, "verify", dir)
	if exitCode(err) != ExitRunnerFailure || errOut != "vigil: "+dir+": is a directory, not an archive\n" {
		t.Fatalf("verify a directory: exit %d, %q", exitCode(err), errOut)
	}
	// A missing archive first does not stop the others being checked;
	// the exit code is the worst.
	out, errOut, err = runVigil(t, "verify", missing, bad, good)
	if exitCode(err) != ExitRunnerFailure || strings.Count(errOut, "\n") != 2 || !strings.Contains(errOut, missing) ||
		!strings.Contains(errOut, bad) || !strings.HasPrefix(out, "ok: "+evidencetest.RunID+" "+good) {
		t.Fatalf("verify missing, bad, good: exit %d, stdout %q, stderr %q", exitCode(err), out, errOut)
	}
}

func TestInspectCommand(t *testing.T) {
	good, bad := writeArchives(t)
	out, _, err := runVigil(t, "inspect", good)
	if err != nil || !strings.Contains(out, "kernel layer        complete") || !strings.Contains(out, "tool calls (2;") {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	out, _, err = runVigil(t, "inspect", "--json", "--top", "2", good)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("inspect", []byte(out)); err != nil {
		t.Fatalf("inspect --json does not match its schema: %v\n%s", err, out)
	}
	if strings.Count(out, `"opens"`) != 2 {
		t.Fatalf("--top 2 not applied:\n%s", out)
	}
	_, errOut, err := runVigil(t, "inspect", "--json=false", "--top", "10", bad)
	if exitCode(err) != ExitVerifyFailed || !strings.Contains(errOut, bad) {
		t.Fatalf("inspect bad: exit %d, %q", exitCode(err), errOut)
	}
}
