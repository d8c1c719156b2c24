package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCommand(t *testing.T) {
	good, bad := writeArchives(t)
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "schema: vigil.policy/v1\n"
	pass := write("pass.yaml", head+"default: allow\nrules:\n- {name: no-lan, action: deny, ops: [connect], endpoints: ['10.0.0.0/8:*']}\n")
	fail := write("fail.yaml", head+"default: allow\nrules:\n- {name: no-home, action: deny, ops: [read], paths: ['/home/**']}\n")
	// The fixture's record does not cover every class a deny default needs.
	incomplete := write("incomplete.yaml", head+"default: deny\nrules:\n- {name: all, action: allow, paths: ['/**']}\n- {name: net, action: allow, endpoints: ['*:*']}\n")
	broken := write("broken.yaml", head+"default: deny\nrules:\n- {name: x, action: allow, paths: ['relative/**']}\n")
	runCLICases(t, []cliCase{
		{args: []string{"check", "--policy", pass, good}, code: 0, stdout: "PASS"},
		{args: []string{"check", "--policy", fail, good}, code: 1, stdout: "read /home/agent/work/file-00000  (rule no-home"},
		{args: []string{"check", "--policy", fail, "--format", "json", good}, code: 1, schema: "policy-check"},
		{args: []string{"check", "--policy", fail, "--format", "sarif", good}, code: 1, stdout: `"version": "2.1.0"`},
		{args: []string{"check", "--policy", incomplete, good}, code: ExitCheckIncomplete, stdout: "no violation seen in an incomplete record"},
		{args: []string{"check", "--policy", pass, bad}, code: ExitArchiveInvalid, stderr: bad},
		{args: []string{"check", good}, code: ExitRunnerFailure},
		{args: []string{"check", "--policy", pass, "--format", "xml", good}, code: ExitRunnerFailure},
		{args: []string{"check", "--policy", filepath.Join(dir, "none.yaml"), good}, code: ExitRunnerFailure},
		{args: []string{"check", "--policy", broken, good}, code: ExitRunnerFailure},
	})
	// A bad policy is one line naming the file and what is wrong.
	_, _, err := runVigil(t, "check", "--policy", broken, good)
	if msg := err.Error(); !strings.Contains(msg, broken) || !strings.Contains(msg, "must be absolute") || strings.Contains(msg, "\n") {
		t.Errorf("bad policy error: %q", msg)
	}
}
