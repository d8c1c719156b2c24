package report

import (
	"math/rand/v2"
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/stats"
	"vigil/internal/wire"
)

// On A/A data (no interaction at all) looked at every 6 blocks up to 60,
// the sequential design ends in "not additive" in at most 5% of runs;
// testing every look at 95% (what --until-decided replaces) does not.
// The tolerance is 0, the hardest case: any interval off zero counts.
func TestSequentialFalseVerdictRate(t *testing.T) {
	const sims = 2000
	looks := []int{6, 12, 18, 24, 30, 36, 42, 48, 54, 60}
	alphas, err := stats.LookAlphas(0.05, looks, 60)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	naive, sequential := 0, 0
	vals := make([]float64, 60)
	for range sims {
		for i := range vals {
			vals[i] = rng.NormFloat64()
		}
		var nf, sf bool
		for k, n := range looks {
			if !nf && classify(stats.SignedRank(vals[:n], 0.95), 0) == wire.NotAdditive {
				nf = true
			}
			if !sf && classify(stats.SignedRank(vals[:n], 1-alphas[k]), 0) == wire.NotAdditive {
				sf = true
			}
		}
		if nf {
			naive++
		}
		if sf {
			sequential++
		}
	}
	nr, sr := float64(naive)/sims, float64(sequential)/sims
	t.Logf("false 'not additive' over %d A/A runs of 10 looks: sequential %.1f%%, naive %.1f%%", sims, 100*sr, 100*nr)
	if sr > 0.05 {
		t.Errorf("sequential design: %.1f%% false verdicts, want at most 5%%", 100*sr)
	}
	if nr <= 0.08 {
		t.Errorf("naive repeated testing: %.1f%% false verdicts; expected it to be inflated well past 5%%", 100*nr)
	}
}

// The report decides at the last look's level and names the design.
func TestSequentialRunReport(t *testing.T) {
	g := genCfg{arms: []string{"bare", "A", "B", "C"}, kinds: []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC},
		blocks: 12, seed: 9, cells: []wire.Cell{cell("control", 0, 0, 1)}}
	p, ss := g.build()
	alphas, _ := stats.LookAlphas(0.05, []int{6, 12}, 24)
	p.Sequential = &wire.Sequential{Design: wire.SequentialDesign, Alpha: 0.05, MaxBlocks: 24, LookEvery: 6,
		Looks: []wire.Look{{Blocks: 6, Alpha: alphas[0]}, {Blocks: 12, Alpha: alphas[1]}}}
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"seq"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	it := s.Runs[0].Cells[0].Decomposition[0]
	if got, want := it.Estimate.Confidence, 1-alphas[1]; got < want-1e-9 {
		t.Errorf("decomposition interval at %v, want at least the look's %v", got, want)
	}
	if md := string(render.Findings(s)); !strings.Contains(md, "2 looks at 6, 12 blocks") {
		t.Errorf("the design and its looks are not named:\n%s", md)
	}
}
