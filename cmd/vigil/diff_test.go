package main

import (
	"path/filepath"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence/evidencetest"
)

func TestDiffCommand(t *testing.T) {
	good, bad := writeArchives(t)
	other := filepath.Join(t.TempDir(), "other.tar.gz")
	if err := archive.Write(other, evidencetest.Bundle(80, 3)); err != nil {
		t.Fatal(err)
	}
	runCLICases(t, []cliCase{
		{args: []string{"diff", good, good}, code: 0, stdout: "no differences"},
		{args: []string{"diff", good, other}, code: 1, stdout: "tool call write_file#3: only in B"},
		{args: []string{"diff", "--json", good, other}, code: 1, schema: "diff"},
		{args: []string{"diff", good, bad}, code: ExitArchiveInvalid, stderr: bad},
		{args: []string{"diff", good, filepath.Join(t.TempDir(), "missing.tar.gz")}, code: ExitRunnerFailure},
		{args: []string{"diff", "--normalize", "(x=y", good, good}, code: ExitRunnerFailure},
		{args: []string{"diff", good}, code: ExitRunnerFailure},
		{args: []string{"diff", good, t.TempDir()}, code: ExitRunnerFailure},
	})
}
