package report

import (
	"math"

	"vigil/internal/wire"

	"vigil/internal/stats"
)

// noiseFloor collects the comparisons between two labels that run the
// same arm kind (an A/A design). Any interval excluding 0 there is a false
// difference; their rate and width are what a user should expect from
// real comparisons at this budget. Only intervals that reach the
// requested confidence are counted: a shorter one can neither exclude 0
// nor stand for a conf-level half-width. The others are listed as items
// and counted as uncounted.
func noiseFloor(cells []*wire.CellSummary, conf float64) *wire.NoiseFloor {
	nf := &wire.NoiseFloor{NominalRate: 1 - conf}
	var rel []float64
	for _, c := range cells {
		// Labels run the same thing when kind and export agree (B and
		// B@collector differ by their export).
		kinds := map[string]string{}
		for _, a := range c.Arms {
			kinds[a.Arm] = string(a.ArmKind) + "/" + a.Export
		}
		for _, cmp := range c.Comparisons {
			if kinds[cmp.Base] != kinds[cmp.Other] || cmp.Pairs == 0 {
				continue
			}
			base := armNamed(c.Arms, cmp.Base)
			med := baseMedian(base, cmp.Metric)
			item := wire.NoiseItem{Cell: c.Name, Base: cmp.Base, Other: cmp.Other, Metric: cmp.Metric, Unit: cmp.Unit, Pairs: cmp.Pairs, Diff: cmp.Diff, ExcludesZero: cmp.ExcludesZero}
			if !cmp.Achieved {
				nf.Items = append(nf.Items, item)
				nf.Uncounted++
				continue
			}
			if med != 0 && cmp.Diff.Bounded() {
				item.RelHalfWidth = math.Max(cmp.Diff.Hi()-cmp.Diff.Value, cmp.Diff.Value-cmp.Diff.Lo()) / med
				rel = append(rel, item.RelHalfWidth)
			}
			nf.Items = append(nf.Items, item)
			nf.Comparisons++
			if item.ExcludesZero {
				nf.ExcludingZero++
			}
		}
	}
	if nf.Comparisons == 0 {
		return nil
	}
	nf.FalseRate = float64(nf.ExcludingZero) / float64(nf.Comparisons)
	if len(rel) > 0 {
		nf.MedianRelHalfWidth = stats.Median(rel)
	}
	return nf
}

func armNamed(arms []*wire.ArmSummary, name string) *wire.ArmSummary {
	for _, a := range arms {
		if a.Arm == name {
			return a
		}
	}
	return nil
}

// baseMedian is the median of metric for arm a, 0 when unavailable.
func baseMedian(a *wire.ArmSummary, metric wire.Metric) float64 {
	if a == nil {
		return 0
	}
	switch {
	case metric == metricWall.name && a.Wall != nil:
		return a.Wall.Median.Value
	case metric == metricCPU.name && a.CPU != nil:
		return a.CPU.Median.Value
	case metric == metricRSS.name && a.MaxRSS != nil:
		return a.MaxRSS.Median.Value
	case metric == metricPeak.name && a.TreePeak != nil:
		return a.TreePeak.Median.Value
	}
	return 0
}
