package report

import (
	"testing"

	"vigil/internal/sample"
)

// TestNoiseFloorKeepsExportsApart: B and B@collector run the same arm kind
// but export differently, so their comparison is a real one, not an A/A
// pair; B and B2 (same export) are one.
func TestNoiseFloorKeepsExportsApart(t *testing.T) {
	cell := func(other, export string) []*CellSummary {
		return []*CellSummary{{
			Cell: sample.Cell{Name: "s500"},
			Arms: []*ArmSummary{
				{Arm: "B", ArmKind: "B", Export: "file"},
				{Arm: other, ArmKind: "B", Export: export},
			},
			Comparisons: []*Comparison{{Base: "B", Other: other, Metric: metricWall.name, Pairs: 6, Achieved: true, ExcludesZero: true}},
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
