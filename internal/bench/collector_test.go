//go:build linux

package bench

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"vigil/internal/collector"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// TestCollectorArms: B and C with a file export beside B@collector and
// C@collector exporting to a real Jaeger that bench starts and stops, in
// one interleaved run. Collector samples carry the agent's export counts
// (every span ended was exported, none failed) and no trace file.
func TestCollectorArms(t *testing.T) {
	testenv.RequireRoot(t)
	bin, err := collector.FindJaeger()
	if err != nil {
		testenv.RequireTool(t, "jaeger ("+err.Error()+")")
	}
	vigil := testenv.Vigil(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(vigil, "bench", "--arms", "B,C,B@collector,C@collector", "--cells", "s500", "-n", "3", "--warmup", "0",
		"--seed", "7", "--max-foreign-cpus", "0", "--jaeger", bin, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("vigil bench: %v\n%s", err, tail(stderr.String(), 20))
	}
	p, ss := readOut(t, out)
	if got := p.ArmExports; len(got) != 4 || got[0] != wire.ExportFile || got[2] != wire.ExportCollector || p.Collector == "" {
		t.Fatalf("plan arm_exports %v collector %q", got, p.Collector)
	}
	n := map[string]int{}
	for _, s := range ss {
		if !s.Valid {
			t.Errorf("%s invalid: %s", s.ID, s.InvalidReason)
			continue
		}
		n[s.Arm]++
		switch p.ExportOf(s.Arm) {
		case wire.ExportCollector:
			if s.OTLPExport == nil || s.OTLPExport.SpansFailed != 0 || s.OTLPExport.SpansExported < 5 || s.Artifacts.TraceBytes != 0 {
				t.Errorf("%s: export %+v, trace bytes %d", s.ID, s.OTLPExport, s.Artifacts.TraceBytes)
			}
		default:
			if s.OTLPExport != nil || s.Artifacts.TraceBytes <= 0 {
				t.Errorf("%s: export %+v, trace bytes %d", s.ID, s.OTLPExport, s.Artifacts.TraceBytes)
			}
		}
		if c := s.Calibration; c.SpanRetained != 128 || c.SpanDropped != 372 {
			t.Errorf("%s: span calibration %+v", s.ID, c)
		}
	}
	for _, a := range p.Arms {
		if n[a] != 3 {
			t.Errorf("arm %s: %d valid samples, want 3", a, n[a])
		}
	}
}
