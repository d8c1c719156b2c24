//go:build linux

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// The full study in miniature, through the real CLI: four arms, three
// cells, 5 blocks + 1 warm-up. Every sample must be valid, every file must
// match its schema, and the fidelity numbers must be the known ones: the
// SDK keeps 128 of 500 span events, and the Runner sees all 2000 worker-file
// opens of x1000.
func TestAgentArmsFullRun(t *testing.T) {
	testenv.RequireRoot(t)
	vigil := testenv.Vigil(t)
	out := filepath.Join(t.TempDir(), "out")
	// The interference gate is off: this test checks the arms, and the
	// test packages beside it load the host (TestContendedSamples checks
	// the gate).
	cmd := exec.Command(vigil, "bench", "--arms", "bare,A,B,C", "--cells", "control,x1000,s500", "-n", "5", "--warmup", "1", "--seed", "20261129", "--max-foreign-cpus", "0", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("vigil bench took %s; stdout:\n%s\nstderr (tail):\n%s", time.Since(start).Round(time.Second), stdout.String(), tail(stderr.String(), 15))
	if err != nil {
		// Keep checking the samples: they are written before the report.
		t.Errorf("vigil bench: %v", err)
	}
	p, ss := readOut(t, out)
	if p.Seed != 20261129 || len(p.Arms) != 4 || len(p.Cells) != 3 {
		t.Fatalf("plan %+v", p)
	}
	valid, warm := 0, 0
	for _, s := range ss {
		if s.Warmup {
			warm++
			continue
		}
		if !s.Valid {
			t.Errorf("sample %s invalid: %s", s.ID, s.InvalidReason)
			continue
		}
		valid++
		c := s.Calibration
		if s.TreePeakBytes <= 0 || s.MaxRSSBytes <= 0 || s.WallNS <= 0 || s.UserNS+s.SysNS <= 0 {
			t.Errorf("%s: missing measurements: %+v", s.ID, s)
		}
		runner := s.ArmKind == wire.ArmA || s.ArmKind == wire.ArmC
		otel := s.ArmKind == wire.ArmB || s.ArmKind == wire.ArmC
		if runner && (s.Health == nil || s.Health.KernelLayer != "complete" || len(s.PhasesMS) == 0 || s.Artifacts.ArchiveBytes <= 0 || s.Artifacts.ArchiveExtractedBytes <= s.Artifacts.ArchiveBytes) {
			t.Errorf("%s: runner fields %+v %+v %+v", s.ID, s.Health, s.PhasesMS, s.Artifacts)
		}
		if otel != (s.Artifacts.TraceBytes > 0) {
			t.Errorf("%s: trace bytes %d", s.ID, s.Artifacts.TraceBytes)
		}
		switch {
		case s.Cell == "s500" && otel:
			if c.SpanRequested != 500 || c.SpanRetained != 128 || c.SpanDropped != 372 || c.SpanMatch == nil || !*c.SpanMatch {
				t.Errorf("%s: span calibration %+v, want 128 retained / 372 dropped", s.ID, c)
			}
		case s.Cell == "x1000" && runner:
			if c.KernelExpectedOpens != 2000 || c.KernelWriteOpens != 1000 || c.KernelReadOpens != 1000 || c.KernelMatch == nil || !*c.KernelMatch {
				t.Errorf("%s: kernel calibration %+v, want 1000 write + 1000 read", s.ID, c)
			}
		}
	}
	if valid != 60 || warm != 12 {
		t.Fatalf("%d valid measured samples and %d warm-ups, want 60 and 12", valid, warm)
	}
	t.Logf("60 valid samples and 12 warm-ups; every line matches sample.schema.json")
	if data, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil {
		t.Error(err)
	} else if err := wire.Validate("summary", data); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	checkBMF(t, filepath.Join(out, "bmf.json"))
	checkBenchTxt(t, filepath.Join(out, "bench.txt"))
	for _, f := range []string{"summary.json", "findings.md", "report.html"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkBMF checks the Bencher Metric Format shape: benchmark -> measure ->
// {value, lower_value?, upper_value?}, with lower <= value <= upper.
func checkBMF(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bmf map[string]map[string]map[string]float64
	if err := json.Unmarshal(data, &bmf); err != nil {
		t.Fatalf("bmf.json is not benchmark -> measure -> numbers: %v", err)
	}
	if len(bmf) == 0 {
		t.Fatal("bmf.json has no benchmarks")
	}
	for b, measures := range bmf {
		for m, v := range measures {
			val, ok := v["value"]
			if !ok {
				t.Fatalf("bmf %s/%s has no value", b, m)
			}
			for k := range v {
				if k != "value" && k != "lower_value" && k != "upper_value" {
					t.Fatalf("bmf %s/%s has key %q", b, m, k)
				}
			}
			if lo, ok := v["lower_value"]; ok && lo > val {
				t.Fatalf("bmf %s/%s lower %v > value %v", b, m, lo, val)
			}
			if hi, ok := v["upper_value"]; ok && hi < val {
				t.Fatalf("bmf %s/%s upper %v < value %v", b, m, hi, val)
			}
		}
	}
}

func checkBenchTxt(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, path)
	results := 0
	for r.Scan() {
		switch rec := r.Result(); rec := rec.(type) {
		case *benchfmt.Result:
			results++
		case *benchfmt.SyntaxError:
			t.Fatalf("bench.txt: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if results == 0 {
		t.Fatal("bench.txt has no benchmark results")
	}
}

// The agent fails every third invocation (its own fault injection,
// configured through the environment the harness passes on): the failures
// are discarded with the agent's reason, re-measured, and never counted.
func TestAgentInjectedFailures(t *testing.T) {
	testenv.RequireRoot(t)
	vigil := testenv.Vigil(t)
	t.Setenv("VIGIL_AGENT_FAIL_EVERY", "3")
	t.Setenv("VIGIL_AGENT_FAIL_COUNTER_FILE", filepath.Join(t.TempDir(), "fail-counter"))
	p := testPlan(t, Options{Arms: []string{"bare", "A"}, Cells: []string{"control"}, Blocks: 4, MaxReruns: 4, Seed: 3})
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, VigilBin: vigil, Log: &log})
	t.Logf("harness log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	_, ss := readOut(t, dir)
	// 8 slots; runs 3 and 6 and 9 fail: 11 samples, 3 discarded.
	if len(out.Shortfalls) != 0 || out.Taken != 11 || out.Discarded != 3 {
		t.Fatalf("taken %d discarded %d shortfalls %v, want 11/3/none", out.Taken, out.Discarded, out.Incomplete())
	}
	for i, s := range ss {
		if s.Valid {
			continue
		}
		if s.ExitCode == 0 || !strings.Contains(s.InvalidReason, "exit code 1") || !strings.Contains(s.InvalidReason, `agent status "error"`) {
			t.Fatalf("%s: exit %d reason %q", s.ID, s.ExitCode, s.InvalidReason)
		}
		next := ss[i+1]
		if next.Block != s.Block || next.Arm != s.Arm || next.Attempt != s.Attempt+1 || !next.Valid {
			t.Fatalf("%s not re-measured at once: next %s", s.ID, next.ID)
		}
	}
}

// SIGINT while vigil record runs an arm: no memory cgroup, record session
// cgroup or process survives, and --resume completes the plan.
func TestInterruptRunnerArm(t *testing.T) {
	testenv.RequireRoot(t)
	vigil := testenv.Vigil(t)
	before := sessionDirs()
	p := testPlan(t, Options{Arms: []string{"bare", "A"}, Cells: []string{"k100"}, Blocks: 4, Seed: 8})
	interruptAndResume(t, p, vigil, 3)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for d := range sessionDirs() {
			if !before[d] && ownSession(d) {
				left = append(left, d)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("record session cgroups left: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionDirs lists vigil-* cgroup v2 directories (vigil record sessions).
func sessionDirs() map[string]bool {
	out := map[string]bool{}
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		for _, pat := range []string{"vigil-*", "*/vigil-*", "*/*/vigil-*"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			for _, d := range m {
				if !strings.Contains(d, "/memory/") {
					out[d] = true
				}
			}
		}
	}
	return out
}

// ownSession reports whether a session directory (vigil-<pid>-<run id>)
// can have come from this test: its owner is gone, or is still a
// descendant of this process (the harness is a child subreaper, so its
// orphans are re-parented here). A live owner elsewhere is another test's
// vigil record running concurrently on the same host, not a leak of ours.
func ownSession(dir string) bool {
	rest, ok := strings.CutPrefix(filepath.Base(dir), "vigil-")
	if !ok {
		return true
	}
	pidText, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return true
	}
	self := os.Getpid()
	for p := pid; p > 1; {
		if p == self {
			return true
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			// Gone: if it was the session's owner, the session leaked.
			return p == pid
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" && p == pid {
			return true
		}
		p, _ = strconv.Atoi(f[1])
	}
	return false
}
