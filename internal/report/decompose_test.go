package report

import (
	"math/rand/v2"
	"testing"

	"vigil/internal/stats"

	"vigil/internal/wire"
)

// verdictWall is the wall time of the verdict cells: C pays a 10 ms
// interaction in cell inter, a drift across the blocks in cell drift, and
// 2.3 ms with 2 ms of noise in cell near; everything else is additive.
func verdictWall(blocks int) func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
	return func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
		v := defaultWall(c, kind, block, rng)
		if kind != wire.ArmC {
			return v
		}
		switch c.Name {
		case "inter":
			v += 10e6
		case "drift":
			v += (float64(block) - float64(blocks-1)/2) * 12e6 / float64(blocks-1)
		case "near":
			v += 2.3e6 + rng.NormFloat64()*2e6
		}
		return v
	}
}

// Cells built so that C − A − B + bare (wall) is: 0 (add), +10 ms (inter),
// a linear trend from −6 ms to +6 ms across blocks (drift), and +2.3 ms
// with 2 ms noise near the 2.5 ms tolerance (near). Memory is additive
// everywhere except inter, where C carries 6 MiB extra.
func TestDecompositionVerdicts(t *testing.T) {
	const blocks = 20
	g := genCfg{arms: fourArms, kinds: fourKinds, blocks: blocks, warmup: 1, seed: 11,
		cells: []wire.Cell{cell("add", 0, 0, 1), cell("inter", 0, 0, 1), cell("drift", 0, 0, 1), cell("near", 0, 0, 1)}}
	g.wall = verdictWall(blocks)
	g.mem = func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
		v := defaultMem(c, kind, block, rng)
		if c.Name == "inter" && kind == wire.ArmC {
			v += 6 << 20
		}
		return v
	}
	p, ss := g.build()
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"synthetic"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]wire.Verdict{
		"add":   {wire.Additive, wire.Additive},
		"inter": {wire.NotAdditive, wire.NotAdditive},
		"drift": {wire.Inconclusive, wire.Additive},
		"near":  {wire.Inconclusive, wire.Additive},
	}
	for _, cs := range s.Runs[0].Cells {
		if len(cs.Decomposition) != 2 {
			t.Fatalf("cell %s: %d decompositions", cs.Name, len(cs.Decomposition))
		}
		w, m := cs.Decomposition[0], cs.Decomposition[1]
		if w.Metric != "wall_ns" || m.Metric != "tree_peak_bytes" {
			t.Fatalf("metrics %s, %s", w.Metric, m.Metric)
		}
		if w.Blocks != blocks {
			t.Errorf("cell %s: %d complete blocks, want %d", cs.Name, w.Blocks, blocks)
		}
		if w.Verdict != want[cs.Name][0] || m.Verdict != want[cs.Name][1] {
			t.Errorf("cell %s: verdicts wall %q (%s), memory %q (%s); want %q, %q", cs.Name, w.Verdict, w.Reason, m.Verdict, m.Reason, want[cs.Name][0], want[cs.Name][1])
		}
		if w.Tolerance != 0.05*w.BareMedian || w.Tolerance < 2.2e6 || w.Tolerance > 2.8e6 {
			t.Errorf("cell %s: wall tolerance %v, want 5%% of the bare median %v (about 50 ms)", cs.Name, w.Tolerance, w.BareMedian)
		}
		switch cs.Name {
		case "drift":
			if !w.Drift.Drifting || w.Stopping == nil || w.Stopping.Settleable {
				t.Errorf("drift: want drifting and an unsettleable stopping rule, got %+v %+v", w.Drift, w.Stopping)
			}
		case "near":
			if w.Stopping == nil || !w.Stopping.Settleable || w.Stopping.BlocksNeeded <= blocks {
				t.Errorf("near: want a settleable stopping rule needing more than %d blocks, got %+v", blocks, w.Stopping)
			}
		case "inter":
			if w.Estimate.Lo() < 9e6 || w.Estimate.Hi() > 11e6 {
				t.Errorf("inter: interval [%v, %v] does not locate +10 ms", w.Estimate.Lo(), w.Estimate.Hi())
			}
		}
	}
}

func TestStoppingRuleScaling(t *testing.T) {
	// Estimate 0, half-width 2, tolerance 1: the interval must halve, so
	// four times the blocks.
	sr := stoppingRule(ivOf(0, -2, 2), 10, 1)
	if !sr.Settleable || sr.BlocksNeeded != 40 || sr.AdditionalBlocks != 30 {
		t.Errorf("got %+v, want 40 blocks (30 more)", sr)
	}
	// Estimate on the boundary: nothing settles it.
	if sr := stoppingRule(ivOf(1, 0, 2), 10, 1); sr.Settleable {
		t.Errorf("boundary estimate reported settleable: %+v", sr)
	}
	// A tiny margin needs an impractical number of blocks.
	if sr := stoppingRule(ivOf(0.99, 0, 2), 10, 1); sr.Settleable || sr.BlocksNeeded < 1000 {
		t.Errorf("tiny margin: %+v", sr)
	}
}

func TestStoppingRuleHugeNeedIsImpractical(t *testing.T) {
	tol := 1048576.0
	iv := stats.Interval{Est: tol - 0.001, Lo: tol - 5e7, Hi: tol + 5e7, Confidence: 0.95}
	sr := stoppingRule(iv, 20, tol)
	if sr.Settleable || sr.AdditionalBlocks < 0 || (sr.BlocksNeeded != 0 && sr.BlocksNeeded <= 20*maxPracticalFactor) {
		t.Errorf("stopping rule %+v, want impractical", sr)
	}
}
