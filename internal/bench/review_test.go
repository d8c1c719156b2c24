//go:build linux

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/sample"
	"vigil/internal/testenv"
	"vigil/internal/workload"
)

// On resume, a slot whose earlier try was invalid is finished by a
// re-measure (attempt 1), and a slot whose budget is already spent is
// skipped. Both were counted in the total; progress must still end at
// [total/total] rather than short of it.
func TestProgressReachesTotalOnResume(t *testing.T) {
	testenv.RequireRoot(t)
	p := testPlan(t, Options{Arms: []string{"bare"}, Cells: []string{"control", "k100"}, Blocks: 2, MaxReruns: 1, Seed: 4, Command: []string{"/bin/true"}})
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	st, _, _, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := func(cell string, block, attempt int) sample.Sample {
		return sample.Sample{Schema: sample.SampleSchema, ID: cell + ".bare.b" + string(rune('0'+block)) + ".t" + string(rune('0'+attempt)),
			Cell: cell, Arm: "bare", ArmKind: sample.ArmBare, Block: block, Attempt: attempt, ExitCode: 1, InvalidReason: "exit code 1", Host: p.Host}
	}
	// control block 0: one invalid try, budget left (re-measured on resume).
	// k100 block 0: two invalid tries, budget (1) spent (skipped on resume).
	for _, s := range []sample.Sample{bad("control", 0, 0), bad("k100", 0, 0), bad("k100", 0, 1)} {
		if err := st.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var log bytes.Buffer
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Resume: true, Log: &log})
	t.Logf("harness log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	if out.Taken != 3 {
		t.Fatalf("taken %d, want 3 (control b0 re-measure, control b1, k100 b1)", out.Taken)
	}
	var last string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(l, "] ") {
			last = l
		}
	}
	if !strings.HasPrefix(last, "vigil bench: [3/3] ") {
		t.Errorf("last progress line %q, want [3/3]", last)
	}
}

// An agent that failed before its span-event phase reports 0 retained and
// 0 dropped: that describes the failure, not what the SDK kept, so the
// sample carries no span verdict (span_match absent) and the report's
// retention numbers are not dragged to 0 by it. The sample stays invalid.
func TestFailedAgentHasNoSpanVerdict(t *testing.T) {
	dir := t.TempDir()
	paths := samplePaths{Dir: dir, Result: filepath.Join(dir, "result.json"), Trace: filepath.Join(dir, "trace.jsonl"), Stderr: filepath.Join(dir, "stderr.log")}
	cell := sample.Cell{Name: "s500", SpanEvents: 500, Concurrency: 1, PayloadBytes: 128}
	writeResult := func(status string, retained, dropped int) {
		r := workload.Result{Schema: workload.ResultSchema, OTel: true, SpanEventsRequested: 500, SpanEventsRetained: retained, SpanEventsDropped: dropped,
			SpanEventLimit: 128, SpanEventLimitSource: workload.LimitSourceDefault, RetainedFirstIndex: -1, RetainedLastIndex: -1,
			Concurrency: 1, PayloadBytes: 128, PhasesMS: map[string]float64{"setup": 1, "flush": 1, "cleanup": 1, "total": 3}, Status: status, WorkDir: dir, WorkerDir: dir}
		if status == workload.StatusError {
			r.Error = "tool call call_1 (write_file): injected failure"
		} else {
			r.RetainedFirstIndex, r.RetainedLastIndex = 372, 499
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(paths.Result, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeResult(workload.StatusError, 0, 0)
	var s sample.Sample
	assess(&s, sampleRun{m: Measurement{ExitCode: 1, TreePeak: -1}, kind: sample.ArmB, cell: cell, paths: paths})
	if s.Valid || !strings.Contains(s.InvalidReason, `agent status "error"`) {
		t.Fatalf("failed agent: valid %v reason %q", s.Valid, s.InvalidReason)
	}
	if s.Calibration.SpanMatch != nil {
		t.Errorf("failed agent got span_match %v", *s.Calibration.SpanMatch)
	}

	// A completed run keeps its verdict; a missing trace file fails it.
	writeResult(workload.StatusOK, 128, 372)
	s = sample.Sample{}
	assess(&s, sampleRun{m: Measurement{ExitCode: 0, TreePeak: -1}, kind: sample.ArmB, cell: cell, paths: paths})
	if s.Calibration.SpanMatch == nil || !*s.Calibration.SpanMatch {
		t.Errorf("completed run: span_match %v", s.Calibration.SpanMatch)
	}
	if s.Valid || !strings.Contains(s.InvalidReason, "trace file") {
		t.Errorf("missing trace file: valid %v reason %q", s.Valid, s.InvalidReason)
	}
}
