//go:build linux

package bench

import (
	"os/exec"
	"strings"
	"testing"

	"vigil/internal/interference"
	"vigil/internal/testenv"
)

// Samples taken beside a CPU hog are marked contended with their figures,
// discarded under one reason and re-measured within the budget.
func TestContendedSamples(t *testing.T) {
	testenv.RequireRoot(t)
	hog := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { hog.Process.Kill(); hog.Wait() }()

	_, out, err := runUser(t, Options{Arms: []string{"bare"}, Cells: []string{"control"}, Blocks: 2, MaxReruns: 1, MaxForeignCPUs: 0.5},
		"/bin/sleep", "0.3")
	if err != nil {
		t.Fatal(err)
	}
	// The budget is one re-measure per cell and arm: block 0 twice, block
	// 1 once, all contended (the hog never stops).
	if len(out.Samples) != 3 {
		t.Fatalf("%d samples; want 3", len(out.Samples))
	}
	for _, s := range out.Samples {
		in := s.Interference
		if in == nil || in.ForeignCPUs == nil || in.ForeignCPUsResolution == nil {
			t.Fatalf("%s: no interference figures: %+v", s.ID, in)
		}
		if !s.Contended || s.Valid || s.InvalidReason != interference.Reason(0.5) || *in.ForeignCPUs < 0.8 {
			t.Errorf("%s: contended %v, valid %v, reason %q, foreign %.2f±%.2f CPUs; want contended beside a hog of one CPU",
				s.ID, s.Contended, s.Valid, s.InvalidReason, *in.ForeignCPUs, *in.ForeignCPUsResolution)
		}
		if in.VoluntaryCtxSwitches == nil || in.Load1AtStart == nil || !strings.Contains(strings.Join(in.Unavailable, ";"), "cpu_migrations") {
			t.Errorf("%s: record %+v", s.ID, in)
		}
	}
	if inc := out.Incomplete(); len(inc) != 1 {
		t.Errorf("incomplete %v; want control/bare", inc)
	}
}
