package report

import (
	"math"

	"vigil/internal/wire"

	"vigil/internal/stats"
)

// maxPracticalFactor bounds the stopping rule: needing more than this many
// times the current number of blocks is reported as impractical.
const maxPracticalFactor = 20

// armsByKind returns the first arm label of each kind in a cell. Traced
// arms are taken with one export: file arms when there are both B and C
// file arms, else collector arms when there are both, so C − A − B + bare
// never mixes a file export with a network one.
func armsByKind(arms []*wire.ArmSummary) map[wire.ArmKind]*wire.ArmSummary {
	out := map[wire.ArmKind]*wire.ArmSummary{}
	traced := map[string]map[wire.ArmKind]*wire.ArmSummary{} // export -> kind -> arm
	for _, a := range arms {
		if a.ArmKind == wire.ArmB || a.ArmKind == wire.ArmC {
			e := a.Export
			if e == "" {
				e = wire.ExportFile
			}
			if traced[e] == nil {
				traced[e] = map[wire.ArmKind]*wire.ArmSummary{}
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
func decompose(arms []*armData, m metric, floor float64, o Options) *wire.Interaction {
	sums := make([]*wire.ArmSummary, len(arms))
	data := map[*wire.ArmSummary]*armData{}
	for i, a := range arms {
		sums[i] = a.ArmSummary
		data[a.ArmSummary] = a
	}
	k := armsByKind(sums)
	if k[wire.ArmBare] == nil || k[wire.ArmA] == nil || k[wire.ArmB] == nil || k[wire.ArmC] == nil {
		return nil
	}
	bare, a, b, c := data[k[wire.ArmBare]], data[k[wire.ArmA]], data[k[wire.ArmB]], data[k[wire.ArmC]]
	it := &wire.Interaction{Metric: m.name, Unit: m.unit, Confidence: o.Confidence, TolerancePct: o.TolerancePct, ToleranceFloor: floor}
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
		it.PerBlock = append(it.PerBlock, wire.BlockValue{Block: blk, Value: x})
		idx = append(idx, float64(blk))
		vals = append(vals, x)
	}
	it.Blocks = len(vals)
	it.BareMedian = finite(stats.Median(bareVals))
	it.Tolerance = math.Max(o.TolerancePct/100*it.BareMedian, floor)
	sr := stats.SignedRank(vals, o.Confidence)
	it.Estimate = estOf(sr.Interval)
	it.P = sr.P
	it.Drift = drift(idx, vals, it.Tolerance, o.Alpha)
	tol := it.Tolerance
	switch {
	case it.Blocks == 0:
		it.Verdict, it.Reason = wire.Inconclusive, wire.ReasonNoCompleteBlocks
		it.Stopping = &wire.StoppingRule{Kind: wire.StopMinBlocks, Settleable: true, BlocksNeeded: minBlocks(o.Confidence), AdditionalBlocks: minBlocks(o.Confidence)}
	case !sr.Achieved():
		need := minBlocks(o.Confidence)
		it.Verdict, it.Reason = wire.Inconclusive, wire.ReasonTooFewBlocks
		it.Stopping = &wire.StoppingRule{Kind: wire.StopMinBlocks, Settleable: true, BlocksNeeded: need, AdditionalBlocks: need - it.Blocks}
	case it.Drift.Drifting:
		it.Verdict, it.Reason = wire.Inconclusive, wire.ReasonDrifting
		it.Stopping = &wire.StoppingRule{Kind: wire.StopNotExchangeable}
	case classify(sr, tol) == wire.Additive:
		it.Verdict, it.Reason = wire.Additive, wire.ReasonWithinTolerance
	case classify(sr, tol) == wire.NotAdditive:
		it.Verdict, it.Reason = wire.NotAdditive, wire.ReasonBeyondTolerance
	default:
		it.Verdict, it.Reason = wire.Inconclusive, wire.ReasonStraddles
		it.Stopping = stoppingRule(sr.Interval, it.Blocks, tol)
	}
	return it
}

// classify is the verdict rule: additive when the interval lies within
// ±tol, not additive when it lies entirely beyond, else inconclusive (also
// when the interval does not reach its confidence).
func classify(sr stats.SignedRankResult, tol float64) wire.Verdict {
	switch {
	case !sr.Achieved():
		return wire.Inconclusive
	case sr.Lo >= -tol && sr.Hi <= tol:
		return wire.Additive
	case sr.Lo > tol || sr.Hi < -tol:
		return wire.NotAdditive
	}
	return wire.Inconclusive
}

// stoppingRule scales the current interval half-width by sqrt(n/n') and
// asks when it would clear the boundary nearest to the estimate.
func stoppingRule(iv stats.Interval, n int, tol float64) *wire.StoppingRule {
	margin := math.Abs(tol - math.Abs(iv.Est))
	h := iv.HalfWidth()
	side := wire.SideInside
	if math.Abs(iv.Est) > tol {
		side = wire.SideBeyond
	}
	if margin <= 0 || h <= 0 {
		return &wire.StoppingRule{Kind: wire.StopOnBoundary}
	}
	// In floating point first: a margin near 0 makes the count exceed any
	// int, and a wrapped conversion would read as "1 more block".
	needF := math.Ceil(float64(n) * (h / margin) * (h / margin))
	if needF > 1e9 {
		return &wire.StoppingRule{Kind: wire.StopBeyondReach, Side: side}
	}
	need := int(needF)
	if need <= n {
		need = n + 1
	}
	sr := &wire.StoppingRule{Kind: wire.StopImpractical, BlocksNeeded: need, AdditionalBlocks: need - n, Side: side}
	if need > maxPracticalFactor*n && need > 200 {
		return sr
	}
	sr.Kind, sr.Settleable = wire.StopSettleable, true
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
func drift(idx, vals []float64, tol, alpha float64) wire.Drift {
	var d wire.Drift
	if len(vals) < 4 {
		return d
	}
	d.Rho, d.P = stats.Spearman(idx, vals)
	d.SlopePerBlock = stats.TheilSen(idx, vals)
	d.BlockSpan = maxBlockSpan(idx)
	d.TrendSpan = math.Abs(d.SlopePerBlock) * float64(d.BlockSpan)
	h := len(vals) / 2
	d.FirstHalfMedian = stats.Median(vals[:h])
	d.SecondHalfMedian = stats.Median(vals[len(vals)-h:])
	d.Drifting = d.P < alpha && d.TrendSpan > tol
	return d
}
