package report

import (
	"sort"

	"vigil/internal/wire"
)

// findCost returns other − base for metric in one cell, whichever order
// the comparison was computed in (a reversed comparison is negated and its
// ratio inverted); ok is false when the cell has no such comparison.
func findCost(cs *wire.CellSummary, base, other *wire.ArmSummary, metric wire.Metric) (wire.Cost, bool) {
	c := wire.Cost{Cell: cs.Name, Base: base.Arm, Other: other.Arm, BaseKind: base.ArmKind, OtherKind: other.ArmKind, Metric: metric, Unit: wire.UnitOf(metric)}
	for _, cmp := range cs.Comparisons {
		if cmp.Metric != metric {
			continue
		}
		switch {
		case cmp.Base == base.Arm && cmp.Other == other.Arm:
			c.Diff, c.Ratio = cmp.Diff, cmp.Ratio
		case cmp.Base == other.Arm && cmp.Other == base.Arm:
			c.Diff, c.Ratio = negated(cmp.Diff), inverted(cmp.Ratio)
		default:
			continue
		}
		c.P, c.Pairs, c.Achieved, c.UTest = cmp.P, cmp.Pairs, cmp.Achieved, cmp.UTest
		return c, true
	}
	return c, false
}

func negated(e wire.Est) wire.Est {
	d := wire.Est{Value: -e.Value, Confidence: e.Confidence}
	if e.Upper != nil {
		v := -*e.Upper
		d.Lower = &v
	}
	if e.Lower != nil {
		v := -*e.Lower
		d.Upper = &v
	}
	return d
}

func inverted(e wire.Est) wire.Est {
	r := wire.Est{Confidence: e.Confidence}
	if e.Value != 0 {
		r.Value = 1 / e.Value
	}
	if e.Upper != nil && *e.Upper != 0 {
		v := 1 / *e.Upper
		r.Lower = &v
	}
	if e.Lower != nil && *e.Lower != 0 {
		v := 1 / *e.Lower
		r.Upper = &v
	}
	return r
}

// findings lists the claims of every run, numbered across runs.
func findings(s *wire.Summary) []wire.Finding {
	out := []wire.Finding{}
	for i, r := range s.Runs {
		var fs []wire.Finding
		fs = append(fs, armFindings(r, s.Options.Confidence)...)
		fs = append(fs, decompositionFindings(r)...)
		if f, ok := kernelFinding(r); ok {
			fs = append(fs, f)
		}
		fs = append(fs, spanFindings(r)...)
		if r.Noise != nil {
			fs = append(fs, wire.Finding{Kind: wire.FindingNoiseFloor})
		}
		if f, ok := interferenceFinding(r); ok {
			fs = append(fs, f)
		}
		fs = append(fs, completenessFinding(r))
		for _, f := range fs {
			f.N, f.HostClass, f.Run = len(out)+1, r.HostClass, i
			out = append(out, f)
		}
	}
	return out
}

// armFindings: per cell, the arms' wall times and each layer's paired
// cost against bare.
func armFindings(r *wire.RunSummary, conf float64) []wire.Finding {
	var out []wire.Finding
	for _, cs := range r.Cells {
		f := wire.Finding{Kind: wire.FindingArmCosts, Cell: cs.Name, Metric: wire.MetricWall}
		kinds := armsByKind(cs.Arms)
		if bare := kinds[wire.ArmBare]; bare != nil {
			for _, k := range []wire.ArmKind{wire.ArmA, wire.ArmB, wire.ArmC} {
				if a := kinds[k]; a != nil {
					if c, ok := findCost(cs, bare, a, wire.MetricWall); ok && c.Pairs > 0 {
						if !c.Achieved {
							c.MinPairs = minBlocks(conf)
						}
						f.Costs = append(f.Costs, c)
					}
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// decompositionFindings: one finding for wall time and one for memory,
// each with the verdict of every cell; the memory one cites C − A and
// each layer's memory cost.
func decompositionFindings(r *wire.RunSummary) []wire.Finding {
	wall := wire.Finding{Kind: wire.FindingDecomposition, Metric: wire.MetricWall}
	mem := wire.Finding{Kind: wire.FindingDecomposition}
	for _, cs := range r.Cells {
		for _, it := range cs.Decomposition {
			v := wire.CellVerdict{Cell: cs.Name, Metric: it.Metric, Verdict: it.Verdict}
			if it.Metric == wire.MetricWall {
				wall.Verdicts = append(wall.Verdicts, v)
				continue
			}
			mem.Metric = it.Metric
			mem.Verdicts = append(mem.Verdicts, v)
			k := armsByKind(cs.Arms)
			pairs := [][2]wire.ArmKind{{wire.ArmA, wire.ArmC}, {wire.ArmBare, wire.ArmA}, {wire.ArmBare, wire.ArmB}}
			for _, p := range pairs {
				if k[p[0]] == nil || k[p[1]] == nil {
					continue
				}
				if c, ok := findCost(cs, k[p[0]], k[p[1]], it.Metric); ok && c.Pairs > 0 {
					mem.Costs = append(mem.Costs, c)
				}
			}
		}
	}
	var out []wire.Finding
	for _, f := range []wire.Finding{wall, mem} {
		if len(f.Verdicts) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// kernelFinding: kernel capture health over the cells, smallest first.
func kernelFinding(r *wire.RunSummary) (wire.Finding, bool) {
	var cells []*wire.CellSummary
	for _, cs := range r.Cells {
		if cs.Kernel != nil {
			cells = append(cells, cs)
		}
	}
	if len(cells) == 0 {
		return wire.Finding{}, false
	}
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].KernelEvents < cells[j].KernelEvents })
	f := wire.Finding{Kind: wire.FindingKernel}
	broken := false
	for _, cs := range cells {
		f.Cells = append(f.Cells, cs.Name)
		k := cs.Kernel
		if k.Evaluated == 0 {
			// A custom command has no worker-file calibration; health alone
			// cannot show that capture was complete.
			f.Uncalibrated = append(f.Uncalibrated, cs.Name)
			continue
		}
		if !k.Healthy {
			f.Unhealthy = append(f.Unhealthy, cs.Name)
			broken = true
		} else if !broken {
			f.HealthyThrough = cs.Name
		}
	}
	switch {
	case len(f.Unhealthy) == 0 && f.HealthyThrough != "":
		f.Status = wire.StatusHealthy
	case f.HealthyThrough != "":
		f.Status = wire.StatusHealthyThrough
	case len(f.Unhealthy) > 0:
		f.Status = wire.StatusNotHealthy
	default:
		f.Status = wire.StatusUncalibrated
	}
	return f, true
}

// spanFindings: one finding per cell whose span events were clipped, one
// for the cells that kept them all.
func spanFindings(r *wire.RunSummary) []wire.Finding {
	var out []wire.Finding
	intact := wire.Finding{Kind: wire.FindingSpansRetained}
	for _, cs := range r.Cells {
		switch f := cs.Spans; {
		case f == nil:
		case f.Clipped:
			out = append(out, wire.Finding{Kind: wire.FindingSpansClipped, Cell: cs.Name})
		default:
			intact.Cells = append(intact.Cells, cs.Name)
		}
	}
	if len(intact.Cells) > 0 {
		out = append(out, intact)
	}
	return out
}

// interferenceFinding: the host's state and interference per cell.
func interferenceFinding(r *wire.RunSummary) (wire.Finding, bool) {
	f := wire.Finding{Kind: wire.FindingInterference, Status: wire.StatusLow}
	measured := false
	for _, cs := range r.Cells {
		ci := cs.Interference
		if ci == nil {
			continue
		}
		measured = true
		f.Contended += ci.Contended
		if ci.High {
			f.Status = wire.StatusHigh
			f.Cells = append(f.Cells, cs.Name)
		}
	}
	return f, measured
}

// completenessFinding: valid samples against the plan, arm by arm.
func completenessFinding(r *wire.RunSummary) wire.Finding {
	f := wire.Finding{Kind: wire.FindingCompleteness, Status: wire.StatusComplete}
	for _, cs := range r.Cells {
		for _, a := range cs.Arms {
			f.Discarded += a.Discarded
			if a.Incomplete {
				f.Status = wire.StatusIncomplete
				f.Incomplete = append(f.Incomplete, wire.ArmRef{Cell: cs.Name, Arm: a.Arm})
			}
		}
	}
	if len(r.Cells) > 0 && len(r.Cells[0].Arms) > 0 {
		f.Planned = r.Cells[0].Arms[0].Planned
	}
	return f
}
