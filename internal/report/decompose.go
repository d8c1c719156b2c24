package report

import (
	"fmt"
	"math"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// maxPracticalFactor bounds the stopping rule: needing more than this many
// times the current number of blocks is reported as impractical.
const maxPracticalFactor = 20

// armsByKind returns the first arm label of each kind in a cell. Traced
// arms are taken with one export: file arms when there are both B and C
// file arms, else collector arms when there are both, so C − A − B + bare
// never mixes a file export with a network one.
func armsByKind(arms []*ArmSummary) map[string]*ArmSummary {
	out := map[string]*ArmSummary{}
	traced := map[string]map[string]*ArmSummary{} // export -> kind -> arm
	for _, a := range arms {
		if a.ArmKind == wire.ArmB || a.ArmKind == wire.ArmC {
			e := a.Export
			if e == "" {
				e = wire.ExportFile
			}
			if traced[e] == nil {
				traced[e] = map[string]*ArmSummary{}
			}
			if _, ok := traced[e][a.ArmKind]; !ok {
				traced[e][a.ArmKind] = a
			}
			continue
		}
		if _, ok := out[a.ArmKind]; !ok {
			out[a.ArmKind] = a
		}
	}
	for _, e := range []string{wire.ExportFile, wire.ExportCollector} {
		if t := traced[e]; t[wire.ArmB] != nil && t[wire.ArmC] != nil {
			out[wire.ArmB], out[wire.ArmC] = t[wire.ArmB], t[wire.ArmC]
			return out
		}
	}
	// No B and C with one export: the first of each kind, as listed.
	for _, a := range arms {
		if _, ok := out[a.ArmKind]; !ok {
			out[a.ArmKind] = a
		}
	}
	return out
}

// decompose computes the per-block interaction C − A − B + bare for metric
// m and decides whether the two layers' costs add up within a tolerance of
// max(pct × bare median, floor):
//
//   - not enough blocks for an interval at the requested confidence, or a
//     significant trend across blocks that moves the interaction by more
//     than the tolerance over the run: inconclusive;
//   - interval inside [−tol, +tol]: additive;
//   - interval entirely beyond ±tol: not additive;
//   - otherwise inconclusive, with the number of blocks after which the
//     interval (half-width ~ 1/sqrt(n)) would clear the nearer boundary.
func decompose(arms []*ArmSummary, m metric, floor float64, o Options) *Interaction {
	k := armsByKind(arms)
	bare, a, b, c := k[wire.ArmBare], k[wire.ArmA], k[wire.ArmB], k[wire.ArmC]
	if bare == nil || a == nil || b == nil || c == nil {
		return nil
	}
	it := &Interaction{Metric: m.name, Unit: m.unit}
	var bareVals []float64
	for _, blk := range bare.blocks() {
		if v, ok := m.get(bare.byBlock[blk]); ok {
			bareVals = append(bareVals, v)
		}
	}
	var idx, vals []float64
	for _, blk := range bare.blocks() {
		sa, sb, sc := a.byBlock[blk], b.byBlock[blk], c.byBlock[blk]
		if sa == nil || sb == nil || sc == nil {
			continue
		}
		v0, ok0 := m.get(bare.byBlock[blk])
		va, ok1 := m.get(sa)
		vb, ok2 := m.get(sb)
		vc, ok3 := m.get(sc)
		if !(ok0 && ok1 && ok2 && ok3) {
			continue
		}
		x := vc - va - vb + v0
		it.PerBlock = append(it.PerBlock, BlockValue{Block: blk, Value: x})
		idx = append(idx, float64(blk))
		vals = append(vals, x)
	}
	it.Blocks = len(vals)
	it.BareMedian = finite(stats.Median(bareVals))
	it.Tolerance = math.Max(o.TolerancePct/100*it.BareMedian, floor)
	it.ToleranceRule = fmt.Sprintf("max(%g%% of the bare median %s, floor %s)", o.TolerancePct, fmtUnit(it.BareMedian, m.unit), fmtUnit(floor, m.unit))
	sr := stats.SignedRank(vals, o.Confidence)
	it.Estimate = estOf(sr.Interval)
	it.P = sr.P
	it.Drift = drift(idx, vals, it.Tolerance, o.Alpha)
	tol := it.Tolerance
	switch {
	case it.Blocks == 0:
		it.Verdict = Inconclusive
		it.Reason = "no block has a valid sample of all four arms"
		it.Stopping = &StoppingRule{Settleable: true, BlocksNeeded: minBlocks(o.Confidence), AdditionalBlocks: minBlocks(o.Confidence),
			Text: fmt.Sprintf("needs at least %d complete blocks for a %.0f%% interval", minBlocks(o.Confidence), 100*o.Confidence)}
	case !sr.Achieved():
		need := minBlocks(o.Confidence)
		it.Verdict = Inconclusive
		it.Reason = fmt.Sprintf("%d complete blocks cannot give a %.0f%% interval", it.Blocks, 100*o.Confidence)
		it.Stopping = &StoppingRule{Settleable: true, BlocksNeeded: need, AdditionalBlocks: need - it.Blocks,
			Text: fmt.Sprintf("needs at least %d complete blocks (%d more) for a %.0f%% interval", need, need-it.Blocks, 100*o.Confidence)}
	case it.Drift.Drifting:
		it.Verdict = Inconclusive
		it.Reason = fmt.Sprintf("the interaction drifts across blocks (Spearman rho %.2f, p %.3g; trend %s over the run, tolerance %s)",
			it.Drift.Rho, it.Drift.P, fmtSigned(it.Drift.SlopePerBlock*float64(maxBlockSpan(idx)), m.unit), fmtUnit(tol, m.unit))
		it.Stopping = &StoppingRule{Settleable: false,
			Text: "more blocks of the same sampling will not settle it: the samples are not exchangeable across blocks; look for the drifting mechanism (warm-up, order, machine state) first"}
	case classify(sr, tol) == Additive:
		it.Verdict = Additive
		it.Reason = fmt.Sprintf("the %s interval lies within ±%s", pct(sr.Confidence), fmtUnit(tol, m.unit))
	case classify(sr, tol) == NotAdditive:
		it.Verdict = NotAdditive
		it.Reason = fmt.Sprintf("the %s interval lies entirely beyond ±%s", pct(sr.Confidence), fmtUnit(tol, m.unit))
	default:
		it.Verdict = Inconclusive
		it.Reason = fmt.Sprintf("the %.0f%% interval straddles the tolerance ±%s", 100*sr.Confidence, fmtUnit(tol, m.unit))
		it.Stopping = stoppingRule(sr.Interval, it.Blocks, tol, m.unit)
	}
	return it
}

// classify is the verdict rule: additive when the interval lies within
// ±tol, not additive when it lies entirely beyond, else inconclusive (also
// when the interval does not reach its confidence).
func classify(sr stats.SignedRankResult, tol float64) string {
	switch {
	case !sr.Achieved():
		return Inconclusive
	case sr.Lo >= -tol && sr.Hi <= tol:
		return Additive
	case sr.Lo > tol || sr.Hi < -tol:
		return NotAdditive
	}
	return Inconclusive
}

// pct prints a confidence level: "95%", or "99.87%" for the strict levels
// of early sequential looks.
func pct(conf float64) string {
	if math.Abs(conf*100-math.Round(conf*100)) < 1e-9 {
		return fmt.Sprintf("%.0f%%", 100*conf)
	}
	return fmt.Sprintf("%.4g%%", 100*conf)
}

// stoppingRule scales the current interval half-width by sqrt(n/n') and
// asks when it would clear the boundary nearest to the estimate.
func stoppingRule(iv stats.Interval, n int, tol float64, unit string) *StoppingRule {
	margin := math.Abs(tol - math.Abs(iv.Est))
	h := iv.HalfWidth()
	side := "inside"
	if math.Abs(iv.Est) > tol {
		side = "beyond"
	}
	if margin <= 0 || h <= 0 {
		return &StoppingRule{Settleable: false, Text: fmt.Sprintf("the estimate sits on the tolerance boundary ±%s; no number of blocks of the same sampling settles it; choose a tolerance or a narrower design", fmtUnit(tol, unit))}
	}
	// In floating point first: a margin near 0 makes the count exceed any
	// int, and a wrapped conversion would read as "1 more block".
	needF := math.Ceil(float64(n) * (h / margin) * (h / margin))
	if needF > 1e9 {
		return &StoppingRule{Settleable: false, Text: fmt.Sprintf("more than 10^9 complete blocks would be needed for the interval to fall %s ±%s; more of the same sampling is impractical", side, fmtUnit(tol, unit))}
	}
	need := int(needF)
	if need <= n {
		need = n + 1
	}
	sr := &StoppingRule{BlocksNeeded: need, AdditionalBlocks: need - n}
	if need > maxPracticalFactor*n && need > 200 {
		sr.Text = fmt.Sprintf("about %d complete blocks (%d more) would be needed for the interval to fall %s ±%s; more of the same sampling is impractical", need, need-n, side, fmtUnit(tol, unit))
		return sr
	}
	sr.Settleable = true
	sr.Text = fmt.Sprintf("about %d complete blocks (%d more) should bring the interval %s ±%s, if the spread stays as observed", need, need-n, side, fmtUnit(tol, unit))
	return sr
}

// minBlocks is the smallest n whose exact signed-rank interval reaches conf.
func minBlocks(conf float64) int {
	for n := 1; n < 60; n++ {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i + 1)
		}
		if stats.SignedRank(d, conf).Achieved() {
			return n
		}
	}
	return 60
}

func maxBlockSpan(idx []float64) int {
	if len(idx) < 2 {
		return 0
	}
	return int(idx[len(idx)-1] - idx[0])
}

// drift tests for a monotone trend of the interaction over block index. It
// counts as drift only when significant at alpha and large: the Theil–Sen
// trend over the run exceeds the tolerance.
func drift(idx, vals []float64, tol, alpha float64) Drift {
	var d Drift
	if len(vals) < 4 {
		return d
	}
	d.Rho, d.P = stats.Spearman(idx, vals)
	d.SlopePerBlock = stats.TheilSen(idx, vals)
	d.TrendSpan = math.Abs(d.SlopePerBlock) * float64(maxBlockSpan(idx))
	h := len(vals) / 2
	d.FirstHalfMedian = stats.Median(vals[:h])
	d.SecondHalfMedian = stats.Median(vals[len(vals)-h:])
	d.Drifting = d.P < alpha && d.TrendSpan > tol
	return d
}
