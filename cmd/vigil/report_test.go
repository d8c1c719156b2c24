package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runReport runs `vigil report args...` in process.
func runReport(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runVigil(t, append([]string{"report"}, args...)...)
}

const testPlan = `{"schema":"vigil.plan/v1","arms":["bare","A"],"arm_kinds":["bare","A"],"cells":[{"name":"control","kernel_events":0,"span_events":0,"concurrency":1,"payload_bytes":128}],"blocks":1,"warmup":0,"order":"random","seed":1,"shard":"1/1","host":{"hostname":"h","os":"linux","arch":"amd64","kernel":"6.18","host_class":"linux-amd64-6.18","cpus":2},"versions":{"vigil":"t"}}`

func testSample(id, arm string) string {
	return `{"schema":"vigil.sample/v1","id":"` + id + `","cell":"control","arm":"` + arm + `","arm_kind":"` + arm + `","block":0,"wall_ns":50000000,"user_ns":1,"sys_ns":1,"max_rss_bytes":1000,"tree_peak_bytes":2000,"valid":true,"host":{"host_class":"linux-amd64-6.18"}}`
}

func TestReportCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.json"), []byte(testPlan), 0o644)
	sf := filepath.Join(dir, "samples.jsonl")
	os.WriteFile(sf, []byte(testSample("s1", "bare")+"\n"+testSample("s2", "A")+"\n{not json\n"), 0o644)
	out := t.TempDir()
	_, stderr, err := runReport(t, dir, "--out", out)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != ExitRunnerFailure {
		t.Fatalf("malformed line: err %v, want exit %d", err, ExitRunnerFailure)
	}
	if !strings.Contains(stderr, sf+":3: malformed sample") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line naming %s:3", stderr, sf)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("partial outputs written: %v", ents)
	}
	missing := filepath.Join(dir, "missing")
	if _, stderr, err := runReport(t, missing); !errors.As(err, &ee) || !strings.Contains(stderr, missing) {
		t.Errorf("missing dir: %v %q", err, stderr)
	}
	if _, _, err := runReport(t, dir, "--tolerance", "lots"); !errors.As(err, &ee) {
		t.Errorf("bad --tolerance accepted: %v", err)
	}
}

func TestReportCommandWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.json"), []byte(testPlan), 0o644)
	os.WriteFile(filepath.Join(dir, "samples.jsonl"), []byte(testSample("s1", "bare")+"\n"+testSample("s2", "A")+"\n"), 0o644)
	stdout, stderr, err := runReport(t, dir, "--out", dir, "--tolerance", "3%")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(stdout, "-- cell control") || !strings.Contains(stdout, "50.00 ms") {
		t.Errorf("table missing: %s", stdout)
	}
	for _, f := range []string{"summary.json", "bmf.json", "bench.txt", "findings.md", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written", f)
		}
	}
}

// A non-finite --confidence or --tolerance is bad input: one line naming
// it and exit 125, not a panic in the bootstrap or a JSON encoder error.
func TestReportCommandNonFiniteFlags(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.json"), []byte(testPlan), 0o644)
	os.WriteFile(filepath.Join(dir, "samples.jsonl"), []byte(testSample("s1", "bare")+"\n"+testSample("s2", "A")+"\n"), 0o644)
	rc, _, _ := rootCmd.Find([]string{"report"})
	defer func() {
		// Flag values outlive Execute; restore the defaults for later tests.
		rc.Flags().Set("confidence", "0.95")
		rc.Flags().Set("tolerance", "5%")
	}()
	for _, args := range [][]string{{"--confidence", "NaN"}, {"--tolerance", "NaN%"}, {"--tolerance", "Inf"}} {
		out := t.TempDir()
		_, stderr, err := runReport(t, append([]string{dir, "--out", out}, args...)...)
		var ee exitError
		if !errors.As(err, &ee) || ee.code != ExitRunnerFailure {
			t.Errorf("%v: err %v, want exit %d", args, err, ExitRunnerFailure)
		}
		name := strings.TrimPrefix(args[0], "--")
		if !strings.Contains(stderr, name) || strings.Contains(stderr, "json") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line naming %s", args, stderr, name)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("%v: outputs written: %v", args, ents)
		}
		rc.Flags().Set("confidence", "0.95")
		rc.Flags().Set("tolerance", "5%")
	}
}

// --from-summary renders the same files again from summary.json alone, and
// refuses the analysis flags it would otherwise ignore.
func TestReportFromSummary(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plan.json"), []byte(testPlan), 0o644)
	os.WriteFile(filepath.Join(dir, "samples.jsonl"), []byte(testSample("s1", "bare")+"\n"+testSample("s2", "A")+"\n"), 0o644)
	first, stderr, err := runReport(t, dir)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	again := t.TempDir()
	second, stderr, err := runReport(t, "--from-summary", filepath.Join(dir, "summary.json"), "--out", again)
	if err != nil {
		t.Fatalf("--from-summary: %v: %s", err, stderr)
	}
	if strings.ReplaceAll(first, dir, "D") != strings.ReplaceAll(second, again, "D") {
		t.Errorf("tables differ:\n%s\n---\n%s", first, second)
	}
	for _, f := range []string{"summary.json", "bmf.json", "bench.txt", "findings.md", "report.html"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs after --from-summary (%v)", f, err)
		}
	}
	var ee exitError
	_, stderr, err = runReport(t, "--from-summary", filepath.Join(dir, "summary.json"), "--out", t.TempDir(), "--tolerance", "3%")
	if !errors.As(err, &ee) || !strings.Contains(stderr, "--tolerance has no effect with --from-summary") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("--tolerance with --from-summary: err %v, stderr %q", err, stderr)
	}
}
