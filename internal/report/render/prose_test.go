package render

import (
	"strings"
	"testing"

	"vigil/internal/wire"
)

func TestNoiseEvidenceMarksUncountedItems(t *testing.T) {
	lo, hi := -1e5, 1e5
	nf := &wire.NoiseFloor{NominalRate: 0.05, Items: []wire.NoiseItem{
		{Cell: "k100", Base: "A", Other: "A2", Metric: wire.MetricWall, Unit: wire.UnitNS, Pairs: 3, Diff: wire.Est{Value: 1e4, Lower: &lo, Upper: &hi, Confidence: 0.75}},
		{Cell: "control", Base: "A", Other: "A2", Metric: wire.MetricWall, Unit: wire.UnitNS, Pairs: 8, Diff: wire.Est{Value: 1e4, Lower: &lo, Upper: &hi, Confidence: 0.961}, RelHalfWidth: 0.002},
	}}
	ev := noiseEvidence(nf)
	if !strings.Contains(ev[0], "too few pairs for a 95% interval, not counted") || strings.Contains(ev[0], "half-width") {
		t.Errorf("short item: %q", ev[0])
	}
	if !strings.Contains(ev[1], "half-width 0.2% of the median") {
		t.Errorf("counted item: %q", ev[1])
	}
}

// A noise floor with uncounted comparisons says so in words.
func TestNoiseTextNamesUncounted(t *testing.T) {
	nf := &wire.NoiseFloor{Comparisons: 3, NominalRate: 0.05, Uncounted: 3}
	if got := noiseText(nf, 0.95); !strings.Contains(got, "(3 comparisons with too few pairs for a 95% interval are not counted)") {
		t.Errorf("noise text %q does not name what was left out", got)
	}
	nf.Uncounted = 0
	if got := noiseText(nf, 0.95); strings.Contains(got, "not counted") {
		t.Errorf("noise text %q names uncounted comparisons that do not exist", got)
	}
}

// A cost with no interval at this number of pairs prints the estimate
// alone, not a range of one point labelled "0% Wilcoxon interval".
func TestCostTextWithoutInterval(t *testing.T) {
	v := 1.74e6
	c := wire.Cost{Unit: wire.UnitNS, Diff: wire.Est{Value: v, Lower: &v, Upper: &v, Confidence: 0}, Pairs: 1}
	got := costText(c)
	if strings.Contains(got, "0% Wilcoxon") || strings.Contains(got, "[") || !strings.Contains(got, "no interval at this number of pairs") {
		t.Errorf("costText = %q", got)
	}
}

// From one or two samples no tail ratio is stated; from more it is.
func TestArmCostsTailNeedsSamples(t *testing.T) {
	run := func(n int) string {
		r := &wire.RunSummary{Cells: []*wire.CellSummary{{Cell: wire.Cell{Name: "c"}, Arms: []*wire.ArmSummary{{
			Arm: "bare", Wall: &wire.Dist{N: n, TailRatio: 1, TailBand: "healthy"}, CPU: &wire.Dist{N: n}}}}}}
		return strings.Join(armCostsText(r, wire.Finding{Cell: "c"}, 0.95).Evidence, "\n")
	}
	if got := run(1); !strings.Contains(got, "no tail from 1 sample(s)") || strings.Contains(got, "p99/median") {
		t.Errorf("n=1: %s", got)
	}
	if got := run(5); !strings.Contains(got, "p99/median 1.00 (healthy)") {
		t.Errorf("n=5: %s", got)
	}
}
