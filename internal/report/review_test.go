package report

import (
	"math"
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/sample"
	"vigil/internal/stats"
)

// A B sample that timed out or crashed before writing its result has no
// span numbers (span_match absent, retained 0): it says nothing about
// which events the SDK kept, so it must not turn a clean "oldest dropped,
// 128 kept" into "0–128 retained, mixed".
func TestSpanFidelityIgnoresSamplesWithoutSpanData(t *testing.T) {
	g := genCfg{arms: []string{sample.ArmBare, sample.ArmB}, kinds: []string{sample.ArmBare, sample.ArmB}, blocks: 6, seed: 11,
		cells: []sample.Cell{cell("s500", 0, 500, 1)},
		invalid: func(c sample.Cell, arm string, block int) string {
			if arm == sample.ArmB && block == 2 {
				return "timed out after 10m0s; agent result: no result written"
			}
			return ""
		}}
	p, ss := g.build()
	found := false
	for i := range ss {
		s := &ss[i]
		if !s.Valid {
			// What the harness records without an agent result.
			s.Calibration = sample.Calibration{SpanRequested: 500, SpanLimit: -1, RetainedFirstIndex: -1, RetainedLastIndex: -1}
			s.Artifacts.TraceBytes = 0
			found = true
		}
	}
	if !found {
		t.Fatal("generator made no invalid sample")
	}
	s, err := Build([]sample.Plan{p}, [][]sample.Sample{ss}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := s.Runs[0].Cells[0].Spans
	if f == nil {
		t.Fatal("no span fidelity")
	}
	if f.DroppedEnd != "oldest" || f.RetainedMin != 128 || f.RetainedMax != 128 || f.DroppedMin != 372 || f.Limit != 128 {
		t.Errorf("span fidelity %+v, want oldest dropped, 128 retained, 372 dropped, limit 128", f)
	}
	if f.Samples != 6 {
		t.Errorf("%d samples with span data, want the 6 valid B samples", f.Samples)
	}
}

// An A/A comparison whose paired interval cannot reach the requested
// confidence (fewer than 6 blocks at 95%) has no 95% interval that could
// exclude 0: counting it would lower the false-difference rate and its
// [min, max] Walsh range would pass for a 95% half-width.
func TestNoiseFloorCountsOnlyAchievedIntervals(t *testing.T) {
	g := genCfg{arms: []string{"A", "A2"}, kinds: []string{sample.ArmA, sample.ArmA}, blocks: 3, seed: 5,
		cells: []sample.Cell{cell("control", 0, 0, 1)}}
	p, ss := g.build()
	s, err := Build([]sample.Plan{p}, [][]sample.Sample{ss}, []string{"aa"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if nf := s.Runs[0].Noise; nf != nil {
		t.Errorf("3 blocks give no 95%% A/A interval, yet noise floor %+v", nf)
	}

	// Mixed: one cell with enough blocks, one short of them.
	g = genCfg{arms: []string{"A", "A2"}, kinds: []string{sample.ArmA, sample.ArmA}, blocks: 8, seed: 5,
		cells: []sample.Cell{cell("control", 0, 0, 1), cell("k100", 100, 0, 1)},
		invalid: func(c sample.Cell, arm string, block int) string {
			if c.Name == "k100" && arm == "A2" && block >= 3 {
				return "capture incomplete"
			}
			return ""
		}}
	p, ss = g.build()
	var kept []sample.Sample
	for _, x := range ss {
		// Drop the re-measures: k100/A2 keeps only blocks 0-2.
		if !(x.Cell == "k100" && x.Arm == "A2" && x.Attempt > 0) {
			kept = append(kept, x)
		}
	}
	s, err = Build([]sample.Plan{p}, [][]sample.Sample{kept}, []string{"aa"}, DefaultOptions())
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

// NaN compares false with every bound, so a NaN flag value passed every
// range check and surfaced only as "json: unsupported value: NaN" when
// summary.json was encoded, naming no flag.
func TestOptionsRejectNonFinite(t *testing.T) {
	p, ss := genCfg{arms: fourArms, kinds: fourArms, cells: []sample.Cell{cell("control", 0, 0, 1)}, blocks: 6, seed: 1}.build()
	nan, inf := math.NaN(), math.Inf(1)
	for name, mod := range map[string]func(*Options){
		"confidence":    func(o *Options) { o.Confidence = nan },
		"tolerance":     func(o *Options) { o.TolerancePct = nan },
		"tolerance inf": func(o *Options) { o.TolerancePct = inf },
		"wall floor":    func(o *Options) { o.WallFloorNS = nan },
		"mem floor":     func(o *Options) { o.MemFloorBytes = inf },
		"alpha":         func(o *Options) { o.Alpha = nan },
	} {
		o := DefaultOptions()
		mod(&o)
		_, err := WriteAll(t.TempDir(), p, ss, o)
		if err == nil || strings.Contains(err.Error(), "json") {
			t.Errorf("%s: error %v, want a one-line rejection of the option", name, err)
		}
	}
}

// When the estimate sits a hair from the tolerance boundary, the blocks
// needed grow past any int; the conversion must not wrap around into
// "1 more block should settle it".
func TestStoppingRuleHugeNeedIsImpractical(t *testing.T) {
	tol := 1048576.0
	iv := stats.Interval{Est: tol - 0.001, Lo: tol - 5e7, Hi: tol + 5e7, Confidence: 0.95}
	sr := stoppingRule(iv, 20, tol)
	if sr.Settleable || sr.AdditionalBlocks < 0 || (sr.BlocksNeeded != 0 && sr.BlocksNeeded <= 20*maxPracticalFactor) {
		t.Errorf("stopping rule %+v, want impractical", sr)
	}
}

// A ratio of medians with a zero base median does not exist; findings.md
// must not print it as "0.000×".
func TestUndefinedRatioIsNotZero(t *testing.T) {
	g := genCfg{arms: fourArms, kinds: fourArms, cells: []sample.Cell{cell("control", 0, 0, 1)}, blocks: 6, seed: 2}
	p, ss := g.build()
	for i := range ss {
		if ss[i].ArmKind == sample.ArmBare {
			ss[i].TreePeakBytes = 0 // e.g. a peak the cgroup did not see
		}
	}
	s, err := Build([]sample.Plan{p}, [][]sample.Sample{ss}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	md := string(render.Findings(s))
	if strings.Contains(md, "0.000×") {
		t.Errorf("findings print an undefined ratio as 0.000×:\n%s", md)
	}
	if !strings.Contains(md, "ratio of medians undefined") {
		t.Errorf("findings do not say the ratio is undefined")
	}
}
