//go:build linux

// The golden files hold the Linux build's output; elsewhere record and
// bench are stand-ins, and paths and errors read differently.

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what the commands print now")

// A replacement hides one thing that legitimately differs between runs or
// hosts. Each golden case lists the ones it needs and no more, so a change
// of wording or layout anywhere else fails the comparison.
type replacement struct {
	re   *regexp.Regexp
	with string
}

var (
	// Go durations measured at run time: "in 1s", "(4.2ms)".
	measuredDuration = replacement{regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|ms|s|m[0-9]+s|h[0-9]+m[0-9]+s)\b`), "DURATION"}
	// ed25519 key ids are sha256 hex of a fresh random key.
	keyID = replacement{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "KEYID"}
	// The agent's phase timings in milliseconds.
	phaseTimings = replacement{regexp.MustCompile(`"(cleanup|file_work|flush|model|setup|span_events|tools|total)":[0-9.e+-]+`), `"$1":MS`}
	// Trace and span ids are random unless a parent trace is given.
	traceIDs = replacement{regexp.MustCompile(`"(trace_id|root_span_id)":"[0-9a-f]+"`), `"$1":"ID"`}
	// How many kernel events a real command produces depends on the host
	// (dynamic loader, libc).
	eventCount = replacement{regexp.MustCompile(`\b[0-9]+ events\b`), "N events"}
	// A record removes the sessions a killed vigil left beside it, and
	// says so: another test package's, when packages run side by side.
	staleSessions = replacement{regexp.MustCompile(`(?m)^vigil: removed [0-9]+ stale session cgroup\(s\) .*\n`), ""}
)

// goldenCase is one vigil command line whose output is compared with
// testdata/NAME.golden.
type goldenCase struct {
	name    string
	args    []string // $TMP stands for the test's temporary directory
	replace []replacement
	// pick, when set, chooses the part of the output the golden file
	// holds (e.g. a final line beside measured values).
	pick func(stdout, stderr string) (string, string)
}

// runGolden runs each case as a child process in dir, with a fixed
// environment (TMPDIR and HOME are dir), and compares stdout, stderr and
// exit code with the golden file; with -update it rewrites the file.
func runGolden(t *testing.T, dir string, cases []goldenCase) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "$TMP", dir)
			}
			cmd := exec.Command(self, args...)
			cmd.Dir = dir
			cmd.Env = []string{envRunMain + "=1", "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			out, errOut := stdout.String(), stderr.String()
			if c.pick != nil {
				out, errOut = c.pick(out, errOut)
			}
			var b strings.Builder
			b.WriteString("$ vigil")
			for _, a := range c.args {
				if strings.ContainsAny(a, " '\"") {
					a = strconv.Quote(a)
				}
				b.WriteString(" " + a)
			}
			b.WriteString("\n")
			b.WriteString("-- stdout --\n" + out)
			b.WriteString("-- stderr --\n" + errOut)
			b.WriteString("-- exit " + strconv.Itoa(code) + " --\n")
			got := strings.ReplaceAll(b.String(), dir, "$TMP")
			for _, r := range c.replace {
				got = r.re.ReplaceAllString(got, r.with)
			}
			file := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/vigil -run %s -update to create it)", err, t.Name())
			}
			if got != string(want) {
				t.Errorf("output differs from %s (if the change is intended, rerun with -update):\n%s", file, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines that differ, numbered, want before got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// Help of the root and of every command: the wording users read first.
func TestGoldenHelp(t *testing.T) {
	cases := []goldenCase{
		{name: "help", args: []string{"--help"}},
		{name: "version", args: []string{"--version"}},
	}
	for _, c := range rootCmd.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		cases = append(cases, goldenCase{name: "help-" + c.Name(), args: []string{c.Name(), "--help"}})
	}
	runGolden(t, t.TempDir(), cases)
}

// The archive commands on fixed archives: every line they print is
// determined by the archive, so nothing is replaced but the directory.
func TestGoldenArchiveCommands(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := archive.Write(filepath.Join(dir, "a.tar.gz"), evidencetest.Bundle(60, 2)); err != nil {
		t.Fatal(err)
	}
	if err := archive.Write(filepath.Join(dir, "b.tar.gz"), evidencetest.Bundle(80, 3)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "a.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	write("truncated.tar.gz", data[:len(data)-4])
	head := "schema: vigil.policy/v1\n"
	write("pass.yaml", []byte(head+"default: allow\nrules:\n- {name: no-lan, action: deny, ops: [connect], endpoints: ['10.0.0.0/8:*']}\n"))
	write("fail.yaml", []byte(head+"default: allow\nrules:\n- {name: no-home, action: deny, ops: [read], paths: ['/home/**']}\n"))
	write("incomplete.yaml", []byte(head+"default: deny\nrules:\n- {name: all, action: allow, paths: ['/**']}\n- {name: net, action: allow, endpoints: ['*:*']}\n"))
	runGolden(t, dir, []goldenCase{
		{name: "verify", args: []string{"verify", "$TMP/a.tar.gz", "$TMP/b.tar.gz"}},
		{name: "verify-truncated", args: []string{"verify", "$TMP/a.tar.gz", "$TMP/truncated.tar.gz"}},
		{name: "inspect", args: []string{"inspect", "$TMP/a.tar.gz"}},
		{name: "diff-same", args: []string{"diff", "$TMP/a.tar.gz", "$TMP/a.tar.gz"}},
		{name: "diff", args: []string{"diff", "$TMP/a.tar.gz", "$TMP/b.tar.gz"}},
		{name: "check-pass", args: []string{"check", "--policy", "$TMP/pass.yaml", "$TMP/a.tar.gz"}},
		{name: "check-fail", args: []string{"check", "--policy", "$TMP/fail.yaml", "$TMP/a.tar.gz"}},
		{name: "check-incomplete", args: []string{"check", "--policy", "$TMP/incomplete.yaml", "$TMP/a.tar.gz"}},
		{name: "export", args: []string{"export", "$TMP/a.tar.gz", "--otlp-file", "$TMP/a.otlp.jsonl"}},
		{name: "keygen", args: []string{"keygen", "$TMP/ci"}, replace: []replacement{keyID}},
		{name: "keygen-exists", args: []string{"keygen", "$TMP/ci"}},
	})
}

// goldenPlan and goldenSamples are a small bench result with fixed
// measurements: four arms, one cell, six blocks.
const goldenPlan = `{"schema":"vigil.plan/v1","arms":["bare","A","B","C"],"arm_kinds":["bare","A","B","C"],"cells":[{"name":"control","kernel_events":0,"span_events":0,"concurrency":1,"payload_bytes":128}],"blocks":6,"warmup":0,"order":"random","seed":7,"shard":"1/1","host":{"hostname":"h","os":"linux","arch":"amd64","kernel":"6.18","host_class":"linux-amd64-6.18","cpus":2},"versions":{"vigil":"t"}}`

func goldenSamples() []byte {
	var b bytes.Buffer
	for block := range 6 {
		for i, arm := range []string{"bare", "A", "B", "C"} {
			// Arm costs 0, 2, 5 and 8 ms over a 50 ms bare run, and each
			// block is off by a few tenths of a millisecond.
			wall := 50_000_000 + []int{0, 2, 5, 8}[i]*1_000_000 + (block*37%11)*100_000
			rss := 10<<20 + i<<20 + block*4096
			fmt.Fprintf(&b, `{"schema":"vigil.sample/v1","id":"s%d-%s","cell":"control","arm":"%s","arm_kind":"%s","block":%d,"wall_ns":%d,"user_ns":%d,"sys_ns":%d,"max_rss_bytes":%d,"tree_peak_bytes":%d,"valid":true,"host":{"host_class":"linux-amd64-6.18"}}`+"\n",
				block, arm, arm, arm, block, wall, wall/2, wall/10, rss, rss+1<<20)
		}
	}
	return b.Bytes()
}

// report's table from fixed samples, at the default confidence.
func TestGoldenReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "plan.json"), []byte(goldenPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "samples.jsonl"), goldenSamples(), 0o644); err != nil {
		t.Fatal(err)
	}
	runGolden(t, dir, []goldenCase{
		{name: "report", args: []string{"report", "$TMP/bench", "--out", "$TMP/out"}},
	})
}

// agent's result line, and its one-line refusal of bad input.
func TestGoldenAgent(t *testing.T) {
	runGolden(t, t.TempDir(), []goldenCase{
		{name: "agent", args: []string{"agent", "--work-dir", "$TMP/w", "--kernel-events", "3", "--span-events", "20"}, replace: []replacement{phaseTimings, traceIDs}},
		{name: "agent-bad-payload", args: []string{"agent", "--payload", "huge"}},
	})
}

// record's end-of-run summary for a real run (root, eBPF): the run id is
// fixed; the event count depends on the host's loader and libc.
func TestGoldenRecord(t *testing.T) {
	testenv.RequireRoot(t)
	runGolden(t, t.TempDir(), []goldenCase{
		{name: "record", args: []string{"record", "--run-id", "golden", "--archive", "$TMP/run.tar.gz", "--", "/bin/true"}, replace: []replacement{eventCount, staleSessions}},
		{name: "record-child-fails", args: []string{"record", "--run-id", "golden", "--archive", "$TMP/fail.tar.gz", "--", "/bin/sh", "-c", "exit 3"}, replace: []replacement{eventCount, staleSessions}},
		{name: "record-not-found", args: []string{"record", "--archive", "$TMP/none.tar.gz", "--", "/nonexistent/cmd"}},
	})
}

// bench's end line for a one-sample run (root: samples run in memory
// cgroups); the lines before it describe the host and the measurements.
func TestGoldenBench(t *testing.T) {
	testenv.RequireRoot(t)
	lastStderrLine := func(_, stderr string) (string, string) {
		lines := strings.SplitAfter(strings.TrimSuffix(stderr, "\n"), "\n")
		return "", lines[len(lines)-1] + "\n"
	}
	runGolden(t, t.TempDir(), []goldenCase{
		{name: "bench", args: []string{"bench", "--arms", "bare", "--cells", "control", "-n", "2", "--warmup", "0", "--seed", "1", "--max-foreign-cpus", "0", "--out", "$TMP/out", "--", "/bin/true"},
			replace: []replacement{measuredDuration}, pick: lastStderrLine},
	})
}
