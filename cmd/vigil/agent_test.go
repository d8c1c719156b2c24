package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/wire"
	"vigil/internal/workload"
)

// runAgentCmd runs a fresh `vigil agent` command (flags do not carry over
// between runs) and returns its stdout, stderr and error.
func runAgentCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newAgentCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestAgentCmdResultLine(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runAgentCmd(t, "--work-dir", filepath.Join(dir, "w"), "--kernel-events", "3",
		"--span-events", "200", "--payload", "medium", "--span-event-limit", "150", "--trace-out", filepath.Join(dir, "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want exactly one result line, got %q", out)
	}
	if err := wire.Validate("agent-result", []byte(out)); err != nil {
		t.Fatalf("result line: %v", err)
	}
	var res wire.AgentResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.PayloadBytes != 4096 || res.WorkerOpens != 6 || res.SpanEventLimitSource != "flag" || res.SpanEventsRetained != 150 || res.SpanEventsDropped != 50 {
		t.Fatalf("result: %+v", res)
	}
}

func TestAgentCmdExitCodes(t *testing.T) {
	dir := t.TempDir()
	// Bad input: a plain error (main prints it and exits 125), no output.
	for _, args := range [][]string{
		{"--kernel-events", "-1"},
		{"--payload", "huge"},
		{"--payload", "small", "--payload-bytes", "10"},
		{"--trace-out", filepath.Join(dir, "missing", "t.jsonl")},
		{"--result-out", filepath.Join(dir, "missing", "r.json")},
	} {
		out, _, err := runAgentCmd(t, args...)
		var ee exitError
		if err == nil || errors.As(err, &ee) || out != "" || !strings.HasPrefix(err.Error(), args[0]) {
			t.Errorf("%v: want a plain error naming %s and no output, got %v, %q", args, args[0], err, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("bad input left files: %v", ents)
	}

	// A failing tool call: exit 1 with the result line written.
	resultOut := filepath.Join(dir, "r.json")
	t.Setenv(workload.EnvFailEvery, "1")
	t.Setenv(workload.EnvFailCounterFile, filepath.Join(dir, "count"))
	out, stderr, err := runAgentCmd(t, "--work-dir", filepath.Join(dir, "w"), "--result-out", resultOut)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || out != "" || !strings.Contains(stderr, "injected failure") {
		t.Fatalf("want exit 1 with the reason on stderr, got %v, stdout %q, stderr %q", err, out, stderr)
	}
	b, err := os.ReadFile(resultOut)
	if err != nil {
		t.Fatal(err)
	}
	var res wire.AgentResult
	if err := json.Unmarshal(b, &res); err != nil || res.Status != wire.StatusError || !res.FailInjected {
		t.Fatalf("result-out: %s (%v)", b, err)
	}
}
