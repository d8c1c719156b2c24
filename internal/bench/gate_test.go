//go:build linux

package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/wire"
	"vigil/internal/workload"
)

// An agent that failed before its span-event phase reports 0 retained and
// 0 dropped: that describes the failure, not what the SDK kept, so the
// sample carries no span verdict (span_match absent) and the report's
// retention numbers are not dragged to 0 by it. The sample stays invalid.
func TestFailedAgentHasNoSpanVerdict(t *testing.T) {
	dir := t.TempDir()
	paths := samplePaths{Dir: dir, Result: filepath.Join(dir, "result.json"), Trace: filepath.Join(dir, "trace.jsonl"), Stderr: filepath.Join(dir, "stderr.log")}
	cell := wire.Cell{Name: "s500", SpanEvents: 500, Concurrency: 1, PayloadBytes: 128}
	writeResult := func(status wire.Status, retained, dropped int) {
		r := wire.AgentResult{Schema: wire.AgentResultSchema, OTel: true, SpanEventsRequested: 500, SpanEventsRetained: retained, SpanEventsDropped: dropped,
			SpanEventLimit: 128, SpanEventLimitSource: workload.LimitSourceDefault, RetainedFirstIndex: -1, RetainedLastIndex: -1,
			Concurrency: 1, PayloadBytes: 128, PhasesMS: map[string]float64{"setup": 1, "flush": 1, "cleanup": 1, "total": 3}, Status: status, WorkDir: dir, WorkerDir: dir}
		if status == wire.StatusError {
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
	writeResult(wire.StatusError, 0, 0)
	var s wire.Sample
	assess(&s, sampleRun{m: Measurement{ExitCode: 1, TreePeak: -1}, kind: wire.ArmB, cell: cell, paths: paths})
	if s.Valid || !strings.Contains(s.InvalidReason, `agent status "error"`) {
		t.Fatalf("failed agent: valid %v reason %q", s.Valid, s.InvalidReason)
	}
	if s.Calibration.SpanMatch != nil {
		t.Errorf("failed agent got span_match %v", *s.Calibration.SpanMatch)
	}

	// A completed run keeps its verdict; a missing trace file fails it.
	writeResult(wire.StatusOK, 128, 372)
	s = wire.Sample{}
	assess(&s, sampleRun{m: Measurement{ExitCode: 0, TreePeak: -1}, kind: wire.ArmB, cell: cell, paths: paths})
	if s.Calibration.SpanMatch == nil || !*s.Calibration.SpanMatch {
		t.Errorf("completed run: span_match %v", s.Calibration.SpanMatch)
	}
	if s.Valid || !strings.Contains(s.InvalidReason, "trace file") {
		t.Errorf("missing trace file: valid %v reason %q", s.Valid, s.InvalidReason)
	}
}
