package main

import (
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence/evidencetest"
	"vigil/schema"
)

func TestDiffCommand(t *testing.T) {
	good, bad := writeArchives(t)
	other := filepath.Join(t.TempDir(), "other.tar.gz")
	if err := archive.Write(other, evidencetest.Bundle(80, 3)); err != nil {
		t.Fatal(err)
	}
	reset := func() {
		diffFlags.json, diffFlags.normalize, diffFlags.noDefault, diffFlags.ignoreCounts = false, nil, false, false
	}
	cases := []struct {
		args    []string
		code    int
		stdout  string
		stderr  string
		jsonOut bool
	}{
		{args: []string{"diff", good, good}, code: 0, stdout: "no differences"},
		{args: []string{"diff", good, other}, code: 1, stdout: "tool call write_file#3: only in B"},
		{args: []string{"diff", "--json", good, other}, code: 1, jsonOut: true},
		{args: []string{"diff", good, bad}, code: ExitArchiveInvalid, stderr: bad},
		{args: []string{"diff", good, filepath.Join(t.TempDir(), "missing.tar.gz")}, code: ExitRunnerFailure},
		{args: []string{"diff", "--normalize", "(x=y", good, good}, code: ExitRunnerFailure},
		{args: []string{"diff", good}, code: ExitRunnerFailure},
		{args: []string{"diff", good, t.TempDir()}, code: ExitRunnerFailure},
	}
	for _, c := range cases {
		reset()
		out, errOut, err := runVigil(t, c.args...)
		if got := exitCode(err); got != c.code {
			t.Errorf("%v: exit %d, want %d (err %v, stderr %q)", c.args, got, c.code, err, errOut)
		}
		if c.stdout != "" && !strings.Contains(out, c.stdout) {
			t.Errorf("%v: stdout lacks %q:\n%s", c.args, c.stdout, out)
		}
		if c.stderr != "" && !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: stderr lacks %q: %q", c.args, c.stderr, errOut)
		}
		if c.jsonOut {
			if err := schema.Validate("diff", []byte(out)); err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
		}
	}
	reset()
}
