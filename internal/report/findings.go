package report

import (
	"sort"

	"vigil/internal/report/model"
	"vigil/internal/wire"
)

// findCost returns other − base for metric in one cell, whichever order
// the comparison was computed in (a reversed comparison is negated and its
// ratio inverted); ok is false when the cell has no such comparison.
func findCost(cs *CellSummary, base, other *ArmSummary, metric model.Metric) (model.Cost, bool) {
	c := model.Cost{Cell: cs.Name, Base: base.Arm, Other: other.Arm, BaseKind: base.ArmKind, OtherKind: other.ArmKind, Metric: metric, Unit: model.UnitOf(metric)}
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

func negated(e Est) Est {
	d := Est{Value: -e.Value, Confidence: e.Confidence}
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

func inverted(e Est) Est {
	r := Est{Confidence: e.Confidence}
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
func findings(s *Summary) []Finding {
	out := []Finding{}
	for i, r := range s.Runs {
		var fs []Finding
		fs = append(fs, armFindings(r, s.Options.Confidence)...)
		fs = append(fs, decompositionFindings(r)...)
		if f, ok := kernelFinding(r); ok {
			fs = append(fs, f)
		}
		fs = append(fs, spanFindings(r)...)
		if r.Noise != nil {
			fs = append(fs, Finding{Kind: model.FindingNoiseFloor})
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
func armFindings(r *Run, conf float64) []Finding {
	var out []Finding
	for _, cs := range r.Cells {
		f := Finding{Kind: model.FindingArmCosts, Cell: cs.Name, Metric: model.MetricWall}
		kinds := armsByKind(cs.Arms)
		if bare := kinds[wire.ArmBare]; bare != nil {
			for _, k := range []string{wire.ArmA, wire.ArmB, wire.ArmC} {
				if a := kinds[k]; a != nil {
					if c, ok := findCost(cs, bare, a, model.MetricWall); ok && c.Pairs > 0 {
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
func decompositionFindings(r *Run) []Finding {
	wall := Finding{Kind: model.FindingDecomposition, Metric: model.MetricWall}
	mem := Finding{Kind: model.FindingDecomposition}
	for _, cs := range r.Cells {
		for _, it := range cs.Decomposition {
			v := model.CellVerdict{Cell: cs.Name, Metric: it.Metric, Verdict: it.Verdict}
			if it.Metric == model.MetricWall {
				wall.Verdicts = append(wall.Verdicts, v)
				continue
			}
			mem.Metric = it.Metric
			mem.Verdicts = append(mem.Verdicts, v)
			k := armsByKind(cs.Arms)
			pairs := [][2]string{{wire.ArmA, wire.ArmC}, {wire.ArmBare, wire.ArmA}, {wire.ArmBare, wire.ArmB}}
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
	var out []Finding
	for _, f := range []Finding{wall, mem} {
		if len(f.Verdicts) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// kernelFinding: kernel capture health over the cells, smallest first.
func kernelFinding(r *Run) (Finding, bool) {
	var cells []*CellSummary
	for _, cs := range r.Cells {
		if cs.Kernel != nil {
			cells = append(cells, cs)
		}
	}
	if len(cells) == 0 {
		return Finding{}, false
	}
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].KernelEvents < cells[j].KernelEvents })
	f := Finding{Kind: model.FindingKernel}
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
		f.Status = model.StatusHealthy
	case f.HealthyThrough != "":
		f.Status = model.StatusHealthyThrough
	case len(f.Unhealthy) > 0:
		f.Status = model.StatusNotHealthy
	default:
		f.Status = model.StatusUncalibrated
	}
	return f, true
}

// spanFindings: one finding per cell whose span events were clipped, one
// for the cells that kept them all.
func spanFindings(r *Run) []Finding {
	var out []Finding
	intact := Finding{Kind: model.FindingSpansRetained}
	for _, cs := range r.Cells {
		switch f := cs.Spans; {
		case f == nil:
		case f.Clipped:
			out = append(out, Finding{Kind: model.FindingSpansClipped, Cell: cs.Name})
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
func interferenceFinding(r *Run) (Finding, bool) {
	f := Finding{Kind: model.FindingInterference, Status: model.StatusLow}
	measured := false
	for _, cs := range r.Cells {
		ci := cs.Interference
		if ci == nil {
			continue
		}
		measured = true
		f.Contended += ci.Contended
		if ci.High {
			f.Status = model.StatusHigh
			f.Cells = append(f.Cells, cs.Name)
		}
	}
	return f, measured
}

// completenessFinding: valid samples against the plan, arm by arm.
func completenessFinding(r *Run) Finding {
	f := Finding{Kind: model.FindingCompleteness, Status: model.StatusComplete}
	for _, cs := range r.Cells {
		for _, a := range cs.Arms {
			f.Discarded += a.Discarded
			if a.Incomplete {
				f.Status = model.StatusIncomplete
				f.Incomplete = append(f.Incomplete, model.ArmRef{Cell: cs.Name, Arm: a.Arm})
			}
		}
	}
	if len(r.Cells) > 0 && len(r.Cells[0].Arms) > 0 {
		f.Planned = r.Cells[0].Arms[0].Planned
	}
	return f
}
