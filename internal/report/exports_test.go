package report

import (
	"testing"

	"vigil/internal/wire"
)

// TestNoiseFloorKeepsExportsApart: B and B@collector run the same arm kind
// but export differently, so their comparison is a real one, not an A/A
// pair; B and B2 (same export) are one.
func TestNoiseFloorKeepsExportsApart(t *testing.T) {
	cell := func(other, export string) []*wire.CellSummary {
		return []*wire.CellSummary{{
			Cell: wire.Cell{Name: "s500"},
			Arms: []*wire.ArmSummary{
				{Arm: "B", ArmKind: "B", Export: "file"},
				{Arm: other, ArmKind: "B", Export: export},
			},
			Comparisons: []*wire.Comparison{{Base: "B", Other: other, Metric: metricWall.name, Pairs: 6, Achieved: true, ExcludesZero: true}},
		}}
	}
	if nf := noiseFloor(cell("B@collector", "collector"), 0.95); nf != nil {
		t.Fatalf("B vs B@collector counted as A/A: %+v", nf)
	}
	nf := noiseFloor(cell("B2", "file"), 0.95)
	if nf == nil || nf.Comparisons != 1 || nf.ExcludingZero != 1 {
		t.Fatalf("B vs B2 not counted as A/A: %+v", nf)
	}
}

// TestDecompositionDoesNotMixExports: with B@collector listed before the
// file arms, the decomposition still takes B and C with one export.
func TestDecompositionDoesNotMixExports(t *testing.T) {
	arms := []*wire.ArmSummary{
		{Arm: "bare", ArmKind: "bare"}, {Arm: "A", ArmKind: "A"},
		{Arm: "B@collector", ArmKind: "B", Export: "collector"},
		{Arm: "B", ArmKind: "B", Export: "file"}, {Arm: "C", ArmKind: "C", Export: "file"},
	}
	k := armsByKind(arms)
	if k["B"].Arm != "B" || k["C"].Arm != "C" {
		t.Fatalf("decomposition takes %s and %s", k["B"].Arm, k["C"].Arm)
	}
	k = armsByKind(append(arms[:3:3], &wire.ArmSummary{Arm: "C@collector", ArmKind: "C", Export: "collector"}, &wire.ArmSummary{Arm: "B2", ArmKind: "B"}))
	if k["B"].Arm != "B@collector" || k["C"].Arm != "C@collector" {
		t.Fatalf("decomposition takes %s and %s", k["B"].Arm, k["C"].Arm)
	}
}

func TestArmsByKindWithoutAPair(t *testing.T) {
	k := armsByKind([]*wire.ArmSummary{{Arm: "bare", ArmKind: "bare"}, {Arm: "B", ArmKind: "B"}})
	if k["B"] == nil || k["B"].Arm != "B" {
		t.Fatalf("bare,B: B is %v", k["B"])
	}
}
