package report

import (
	"testing"

	"vigil/internal/wire"
)

func TestNoiseFloorCountsOnlyAchievedIntervals(t *testing.T) {
	g := genCfg{arms: []string{"A", "A2"}, kinds: []wire.ArmKind{wire.ArmA, wire.ArmA}, blocks: 3, seed: 5,
		cells: []wire.Cell{cell("control", 0, 0, 1)}}
	p, ss := g.build()
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"aa"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if nf := s.Runs[0].Noise; nf != nil {
		t.Errorf("3 blocks give no 95%% A/A interval, yet noise floor %+v", nf)
	}

	// Mixed: one cell with enough blocks, one short of them.
	g = genCfg{arms: []string{"A", "A2"}, kinds: []wire.ArmKind{wire.ArmA, wire.ArmA}, blocks: 8, seed: 5,
		cells: []wire.Cell{cell("control", 0, 0, 1), cell("k100", 100, 0, 1)},
		invalid: func(c wire.Cell, arm string, block int) string {
			if c.Name == "k100" && arm == "A2" && block >= 3 {
				return "capture incomplete"
			}
			return ""
		}}
	p, ss = g.build()
	var kept []wire.Sample
	for _, x := range ss {
		// Drop the re-measures: k100/A2 keeps only blocks 0-2.
		if !(x.Cell == "k100" && x.Arm == "A2" && x.Attempt > 0) {
			kept = append(kept, x)
		}
	}
	s, err = Build([]wire.Plan{p}, [][]wire.Sample{kept}, []string{"aa"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	nf := s.Runs[0].Noise
	if nf == nil {
		t.Fatal("no noise floor")
	}
	if nf.Comparisons != 3 {
		t.Errorf("%d comparisons counted, want the 3 of cell control", nf.Comparisons)
	}
	for _, it := range nf.Items {
		if it.Cell == "k100" && it.RelHalfWidth != 0 {
			t.Errorf("k100 item with %d pairs contributes a half-width %v", it.Pairs, it.RelHalfWidth)
		}
	}
	if nf.Uncounted != 3 {
		t.Errorf("%d comparisons left out, want the 3 of cell k100", nf.Uncounted)
	}
}
