//go:build linux

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"vigil/internal/testenv"
)

// runBenchCmd runs `vigil bench args...` in process, with every bench flag
// back at its default first (cobra keeps values between executions).
func runBenchCmd(t *testing.T, args ...string) error {
	t.Helper()
	benchCmd.Flags().VisitAll(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else {
			_ = f.Value.Set(f.DefValue)
		}
		f.Changed = false
	})
	rootCmd.SetArgs(append([]string{"bench"}, args...))
	defer rootCmd.SetArgs(nil)
	return rootCmd.Execute()
}

func TestBenchCommandBadInput(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--arms", "bare,D"}, `--arms: unknown arm "D"`},
		{[]string{"--cells", "control,nope"}, `--cells: unknown cell "nope"`},
		{[]string{"--cell", "bad"}, `--cell "bad"`},
		{[]string{"--shard", "3/2"}, `--shard "3/2"`},
		{[]string{"--order", "sorted"}, `--order "sorted"`},
		{[]string{"-n", "0"}, "-n 0"},
		{[]string{"--out", full, "--arms", "bare"}, "is not empty"},
		{[]string{"stray"}, "put a command to measure after --"},
		{[]string{"--arms", "bare", "--", "/nonexistent/vigil-cmd"}, `command "/nonexistent/vigil-cmd"`},
		{[]string{"--resume", filepath.Join(full, "nope")}, "no plan.json"},
	}
	for _, c := range cases {
		err := runBenchCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("files written into a refused --out: %v", ents)
	}
}

func TestBenchCommandResume(t *testing.T) {
	testenv.RequireRoot(t) // runs samples in memory cgroups
	out := filepath.Join(t.TempDir(), "out")
	if err := runBenchCmd(t, "--arms", "bare,B", "--cells", "control", "-n", "2", "--warmup", "0", "--seed", "4", "--no-report", "--max-foreign-cpus", "0", "--out", out, "--", "/bin/true"); err != nil {
		t.Fatal(err)
	}
	err := runBenchCmd(t, "--resume", out, "-n", "3")
	if err == nil || !strings.Contains(err.Error(), "--blocks 3 conflicts with the plan's 2") {
		t.Fatalf("conflicting resume: %v", err)
	}
	if err := runBenchCmd(t, "--resume", out, "--seed", "4", "--no-report"); err != nil {
		t.Fatalf("resume of a finished run: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(out, "samples.jsonl"))
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Fatalf("%d samples after resume, want the original 4", n)
	}
	// A run whose arm keeps failing exits 3 and names the cell/arm.
	out2 := filepath.Join(t.TempDir(), "out")
	err = runBenchCmd(t, "--arms", "bare", "--cells", "control", "-n", "1", "--warmup", "0", "--max-reruns", "0", "--no-report", "--out", out2, "--", "/bin/false")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("failing arm: %v, want exit 3", err)
	}
}
