package report

import (
	"hash/fnv"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// compare computes other − base over the blocks where both have a valid
// sample, plus an unpaired U test over all their valid samples.
func compare(base, other *armData, m metric, o Options, seed int64, cell string) *wire.Comparison {
	c := &wire.Comparison{Base: base.Arm, Other: other.Arm, Metric: m.name, Unit: m.unit}
	var xs, ys, diffs, all1, all2 []float64
	for _, b := range base.blocks() {
		if v, ok := m.get(base.byBlock[b]); ok {
			all1 = append(all1, v)
		}
	}
	for _, b := range other.blocks() {
		if v, ok := m.get(other.byBlock[b]); ok {
			all2 = append(all2, v)
		}
	}
	for _, b := range base.blocks() {
		so, ok := other.byBlock[b]
		if !ok {
			continue
		}
		x, ok1 := m.get(base.byBlock[b])
		y, ok2 := m.get(so)
		if ok1 && ok2 {
			xs = append(xs, x)
			ys = append(ys, y)
			diffs = append(diffs, y-x)
		}
	}
	c.Pairs = len(diffs)
	if len(all1) > 0 && len(all2) > 0 {
		u := stats.MannWhitney(all2, all1)
		c.UTest = wire.UTest{N1: u.N1, N2: u.N2, U: u.U, P: u.P}
	} else {
		c.UTest = wire.UTest{N1: len(all2), N2: len(all1), P: 1}
	}
	sr := stats.SignedRank(diffs, o.Confidence)
	c.Diff = estOf(sr.Interval)
	c.P = sr.P
	c.Method = "normal"
	if sr.Exact {
		c.Method = "exact"
	}
	c.Achieved = c.Pairs > 0 && sr.Achieved()
	c.ExcludesZero = c.Achieved && sr.Interval.Excludes(0)
	c.Ratio = estOf(stats.RatioOfMedians(xs, ys, true, o.BootstrapReps, subSeed(seed, cell, base.Arm, other.Arm, string(m.name)), o.Confidence))
	return c
}

// subSeed derives a bootstrap seed from the plan seed and the comparison,
// so results do not depend on the order comparisons are computed in.
func subSeed(seed int64, parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ uint64(seed)
}
