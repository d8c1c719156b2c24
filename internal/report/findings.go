package report

import (
	"fmt"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// armCost is the paired difference and ratio of one arm kind against bare.
type armCost struct {
	label string
	diff  Est
	ratio Est
	p     float64
	pairs int
	ok    bool
	u     UTest
}

// findCmp returns other − base for metric, whichever order it was
// computed in (a reversed comparison is negated / inverted).
func findCmp(cs *CellSummary, base, other, metric string) armCost {
	for _, c := range cs.Comparisons {
		if c.Metric != metric {
			continue
		}
		if c.Base == base && c.Other == other {
			return armCost{label: other, diff: c.Diff, ratio: c.Ratio, p: c.P, pairs: c.Pairs, ok: c.Achieved, u: c.UTest}
		}
		if c.Base == other && c.Other == base {
			d := Est{Value: -c.Diff.Value, Confidence: c.Diff.Confidence}
			if c.Diff.Upper != nil {
				v := -*c.Diff.Upper
				d.Lower = &v
			}
			if c.Diff.Lower != nil {
				v := -*c.Diff.Lower
				d.Upper = &v
			}
			r := Est{Confidence: c.Ratio.Confidence}
			if c.Ratio.Value != 0 {
				r.Value = 1 / c.Ratio.Value
			}
			if c.Ratio.Upper != nil && *c.Ratio.Upper != 0 {
				v := 1 / *c.Ratio.Upper
				r.Lower = &v
			}
			if c.Ratio.Lower != nil && *c.Ratio.Lower != 0 {
				v := 1 / *c.Ratio.Lower
				r.Upper = &v
			}
			return armCost{label: other, diff: d, ratio: r, p: c.P, pairs: c.Pairs, ok: c.Achieved, u: c.UTest}
		}
	}
	return armCost{}
}

// costText renders "+12.3 ms [11.9 ms, 12.8 ms] (ratio 1.245× [..], p 0.0001, 20 pairs)".
func costText(c armCost, unit string) string {
	s := fmt.Sprintf("%s (Hodges–Lehmann, %.0f%% Wilcoxon interval; ratio of medians %s; p %.2g; %d pairs; unpaired Mann–Whitney p %.2g, n %d+%d)",
		fmtEst(c.diff, unit, true), 100*c.diff.Confidence, fmtRatio(c.ratio), c.p, c.pairs, c.u.P, c.u.N2, c.u.N1)
	if !c.ok {
		s += " — too few pairs for the requested confidence"
	}
	return s
}

var kindRole = map[string]string{
	wire.ArmA: "the Runner's cost (A − bare)",
	wire.ArmB: "OpenTelemetry's cost (B − bare)",
	wire.ArmC: "both layers' cost (C − bare)",
}

func findings(s *Summary) []Finding {
	var out []Finding
	add := func(f Finding) {
		f.N = len(out) + 1
		if f.NonClaims == nil {
			f.NonClaims = []string{}
		}
		if f.Evidence == nil {
			f.Evidence = []string{}
		}
		out = append(out, f)
	}
	for _, r := range s.Runs {
		scope := r.scope()
		base := Finding{HostClass: r.HostClass, Scope: scope}
		for _, f := range armFindings(r, s.Options.Confidence) {
			add(withBase(base, f))
		}
		for _, f := range decompositionFindings(r) {
			add(withBase(base, f))
		}
		if f, ok := kernelFinding(r); ok {
			add(withBase(base, f))
		}
		for _, f := range spanFindings(r) {
			add(withBase(base, f))
		}
		if r.Noise != nil {
			add(withBase(base, Finding{
				Title:    "Noise floor from the A/A comparison",
				Claim:    "Between two labels running the same arm, " + r.Noise.Text + ".",
				Evidence: noiseEvidence(r.Noise),
				NonClaims: []string{
					"The false-difference rate is an observed count over few comparisons, not a calibrated error rate.",
				},
			}))
		}
		if f, ok := interferenceFinding(r); ok {
			add(withBase(base, f))
		}
		add(withBase(base, completenessFinding(r)))
	}
	return out
}

func withBase(b, f Finding) Finding {
	f.HostClass, f.Scope = b.HostClass, b.Scope
	return f
}

func armFindings(r *Run, confidence float64) []Finding {
	var out []Finding
	for _, cs := range r.Cells {
		var parts, ev []string
		for _, a := range cs.Arms {
			if a.Wall == nil {
				parts = append(parts, fmt.Sprintf("%s no valid samples", a.Arm))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s", a.Arm, fmtEst(a.Wall.Median, "ns", false)))
			tail := fmt.Sprintf("p99/median %.2f (%s)", a.Wall.TailRatio, a.Wall.TailBand)
			if a.Wall.P99FromMax {
				tail += ", p99 is about the maximum at this n"
			}
			mem := ""
			if a.TreePeak != nil {
				mem = fmt.Sprintf("; tree peak median %s (max %s)", fmtBytes(a.TreePeak.Median.Value), fmtBytes(a.TreePeak.Max))
			}
			if a.MaxRSS != nil {
				mem += fmt.Sprintf("; max RSS median %s", fmtBytes(a.MaxRSS.Median.Value))
			}
			ev = append(ev, fmt.Sprintf("%s (%s): n %d valid; wall median %s; p95 %s, p99 %s; %s; CPU median %s%s",
				a.Arm, a.ArmKind, a.Wall.N, fmtEst(a.Wall.Median, "ns", false), fmtDur(a.Wall.P95), fmtDur(a.Wall.P99), tail, fmtDur(a.CPU.Median.Value), mem))
		}
		claim := fmt.Sprintf("In cell %s, median wall time per arm (%.0f%% order-statistic intervals): %s.", cs.Name, 100*confidence, strings.Join(parts, "; "))
		kinds := armsByKind(cs.Arms)
		var costs []string
		if bare := kinds[wire.ArmBare]; bare != nil {
			for _, k := range []string{wire.ArmA, wire.ArmB, wire.ArmC} {
				a := kinds[k]
				if a == nil {
					continue
				}
				c := findCmp(cs, bare.Arm, a.Arm, metricWall.name)
				if c.pairs == 0 {
					continue
				}
				if c.ok {
					costs = append(costs, fmt.Sprintf("%s is %s", kindRole[k], fmtEst(c.diff, "ns", true)))
				} else {
					costs = append(costs, fmt.Sprintf("%s is estimated at %s but %s too few for a %.0f%% interval (at least %d needed)",
						kindRole[k], fmtSigned(c.diff.Value, "ns"), plural(c.pairs, "pair is", "pairs are"), 100*confidence, minBlocks(confidence)))
				}
				ev = append(ev, fmt.Sprintf("wall %s − %s: %s", a.Arm, bare.Arm, costText(c, "ns")))
			}
		}
		if len(costs) > 0 {
			claim += " Paired by block, " + strings.Join(costs, "; ") + "."
		}
		ev = append(ev, noiseCitation(r))
		nonClaims := []string{
			"Not a ranking of the Runner against OpenTelemetry in general: one deterministic workload, one cell, this host class.",
			"Percentiles flagged as \"about the maximum\" are not tail estimates.",
		}
		if ci := cs.Interference; ci != nil && ci.High {
			nonClaims = append(nonClaims, "Interference stayed high in this cell ("+ci.Why+"): these wall times may describe the host, not the arms.")
		}
		out = append(out, Finding{
			Title:     fmt.Sprintf("Wall time and layer costs in cell %s", cs.Name),
			Claim:     claim,
			Evidence:  ev,
			NonClaims: nonClaims,
		})
	}
	return out
}

func decompositionFindings(r *Run) []Finding {
	type acc struct {
		lines   []string
		verdict map[string][]string
		metric  string
		extra   []string
	}
	by := map[string]*acc{"wall": {verdict: map[string][]string{}}, "memory": {verdict: map[string][]string{}}}
	for _, cs := range r.Cells {
		for _, it := range cs.Decomposition {
			key := "memory"
			if it.Metric == metricWall.name {
				key = "wall"
			}
			a := by[key]
			a.metric = it.Metric
			a.verdict[it.Verdict] = append(a.verdict[it.Verdict], cs.Name)
			line := fmt.Sprintf("cell %s: %s — interaction C − A − B + bare = %s over %d complete blocks (p %.2g); tolerance ±%s = %s; %s",
				cs.Name, it.Verdict, fmtEst(it.Estimate, it.Unit, true), it.Blocks, it.P, fmtUnit(it.Tolerance, it.Unit), it.ToleranceRule, it.Reason)
			if it.Stopping != nil {
				line += "; stopping rule: " + it.Stopping.Text
			}
			a.lines = append(a.lines, line)
			if key == "memory" {
				k := armsByKind(cs.Arms)
				if k[wire.ArmA] != nil && k[wire.ArmC] != nil {
					c := findCmp(cs, k[wire.ArmA].Arm, k[wire.ArmC].Arm, it.Metric)
					if c.pairs > 0 {
						a.extra = append(a.extra, fmt.Sprintf("cell %s: %s C − A = %s", cs.Name, it.Metric, costText(c, it.Unit)))
					}
				}
				for _, kk := range []string{wire.ArmA, wire.ArmB} {
					if k[wire.ArmBare] != nil && k[kk] != nil {
						c := findCmp(cs, k[wire.ArmBare].Arm, k[kk].Arm, it.Metric)
						if c.pairs > 0 {
							a.extra = append(a.extra, fmt.Sprintf("cell %s: %s %s = %s", cs.Name, it.Metric, strings.TrimSuffix(strings.SplitN(kindRole[kk], "(", 2)[1], ")"), costText(c, it.Unit)))
						}
					}
				}
			}
		}
	}
	var out []Finding
	for _, key := range []string{"wall", "memory"} {
		a := by[key]
		if len(a.lines) == 0 {
			continue
		}
		what := "Wall time"
		if key == "memory" {
			what = "Memory (" + a.metric + ")"
		}
		var parts []string
		for _, v := range []string{Additive, NotAdditive, Inconclusive} {
			if cells := a.verdict[v]; len(cells) > 0 {
				parts = append(parts, fmt.Sprintf("%s in %s", v, strings.Join(cells, ", ")))
			}
		}
		nonClaims := []string{
			"\"Additive\" means the interaction lies within the stated tolerance, not that it is exactly zero.",
			"\"Inconclusive\" is not evidence of an interaction; it says this budget cannot decide.",
			"No claim about other cells, workloads or host classes.",
		}
		if sq := sequentialText(r); sq != "" {
			a.lines = append(a.lines, sq)
		}
		if key == "wall" {
			if hc := highCells(r); len(hc) > 0 {
				nonClaims = append(nonClaims, fmt.Sprintf("Interference stayed high in %s (see Host interference): the verdicts there may describe the host, not the arms.", strings.Join(hc, ", ")))
			}
			a.lines = append(a.lines, noiseCitation(r))
		}
		out = append(out, Finding{
			Title:     fmt.Sprintf("%s decomposition (Runner + OpenTelemetry)", what),
			Claim:     fmt.Sprintf("%s decomposition of the two layers' costs: %s.", what, strings.Join(parts, "; ")),
			Evidence:  append(a.lines, a.extra...),
			NonClaims: nonClaims,
		})
	}
	return out
}

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
	var ev, bad, uncal []string
	var through *CellSummary
	broken := false
	for _, cs := range cells {
		k := cs.Kernel
		if k.Evaluated == 0 {
			// A custom command has no worker-file calibration; health alone
			// cannot show that capture was complete.
			ev = append(ev, fmt.Sprintf("cell %s: %d A/C samples without calibration data; ringbuf_drops %d; kernel_layer complete %d/%d; cgroup_correlation clean %d/%d",
				cs.Name, k.Samples, k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples))
			uncal = append(uncal, cs.Name)
			continue
		}
		ev = append(ev, fmt.Sprintf("cell %s (%d worker files, concurrency %d): %d/%d A/C samples matched calibration (write opens %s of %d expected, read opens %s of %d); ringbuf_drops %d; kernel_layer complete %d/%d; cgroup_correlation clean %d/%d",
			cs.Name, cs.KernelEvents, cs.Concurrency, k.Matched, k.Samples, span(k.ObservedWriteMin, k.ObservedWriteMax), k.ExpectedWrite,
			span(k.ObservedReadMin, k.ObservedReadMax), k.ExpectedRead, k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples))
		if !k.Healthy {
			bad = append(bad, cs.Name)
			broken = true
		} else if !broken {
			through = cs
		}
	}
	var claim string
	switch {
	case len(bad) == 0 && through != nil:
		claim = fmt.Sprintf("Kernel capture is healthy through %s (%d worker files, concurrency %d): every A/C sample in every calibrated cell matched its calibration exactly, with ringbuf_drops = 0, kernel_layer complete and cgroup_correlation clean.",
			through.Name, through.KernelEvents, through.Concurrency)
	case through != nil:
		claim = fmt.Sprintf("Kernel capture is healthy through %s (%d worker files) but not in %s.", through.Name, through.KernelEvents, strings.Join(bad, ", "))
	case len(bad) > 0:
		claim = fmt.Sprintf("Kernel capture is not healthy in %s.", strings.Join(bad, ", "))
	default:
		claim = "No cell has kernel calibration data, so capture completeness is not established by calibration."
	}
	if len(uncal) > 0 && (len(bad) > 0 || through != nil) {
		claim += fmt.Sprintf(" Cells without calibration data: %s.", strings.Join(uncal, ", "))
	}
	return Finding{
		Title:    "Kernel capture fidelity",
		Claim:    claim,
		Evidence: ev,
		NonClaims: []string{
			"Calibration covers the workload's worker-file opens only; it is not a proof that every other event kind was captured.",
			"No claim beyond the largest measured cell.",
		},
	}, true
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func spanFindings(r *Run) []Finding {
	var out []Finding
	var intact []string
	for _, cs := range r.Cells {
		f := cs.Spans
		if f == nil {
			continue
		}
		if !f.Clipped {
			intact = append(intact, fmt.Sprintf("cell %s: %s", cs.Name, f.Text))
			continue
		}
		claim := fmt.Sprintf("At %s, OpenTelemetry span events are clipped: %s.", cs.Name, f.Text)
		if f.DroppedEnd == "oldest" {
			claim = fmt.Sprintf("At %s, OpenTelemetry retained %s/%d span events: the oldest events were dropped; the newest %s kept.",
				cs.Name, span(f.RetainedMin, f.RetainedMax), f.Requested, span(f.RetainedMin, f.RetainedMax))
		}
		ev := []string{fmt.Sprintf("cell %s: %d B/C samples; requested %d, retained %s, dropped %s, span event limit %d, dropped end: %s",
			cs.Name, f.Samples, f.Requested, span(f.RetainedMin, f.RetainedMax), span(f.DroppedMin, f.DroppedMax), f.Limit, f.DroppedEnd)}
		out = append(out, Finding{
			Title:    fmt.Sprintf("Span events clipped at %s (limit %d)", cs.Name, f.Limit),
			Claim:    claim,
			Evidence: ev,
			NonClaims: []string{
				fmt.Sprintf("Timing in cell %s is not span-event throughput at %d events: the input is clipped to %s.", cs.Name, f.Requested, span(f.RetainedMin, f.RetainedMax)),
				"This is the SDK's configured event limit, not a loss in vigil's trace writer or archive.",
			},
		})
	}
	if len(intact) > 0 {
		out = append(out, Finding{
			Title:     "Span events retained in full",
			Claim:     "In the cells below every requested span event was retained.",
			Evidence:  intact,
			NonClaims: []string{"No claim about span counts above the largest intact cell."},
		})
	}
	return out
}

func noiseEvidence(n *NoiseFloor) []string {
	var ev []string
	for _, it := range n.Items {
		unit := "ns"
		if strings.HasSuffix(it.Metric, "bytes") {
			unit = "bytes"
		}
		if it.Diff.Confidence < 1-n.NominalRate-1e-9 {
			// Not counted in the noise floor (see noiseFloor).
			ev = append(ev, fmt.Sprintf("cell %s, %s − %s, %s: %s over %d pairs; too few pairs for a %.0f%% interval, not counted",
				it.Cell, it.Other, it.Base, it.Metric, fmtSigned(it.Diff.Value, unit), it.Pairs, 100*(1-n.NominalRate)))
			continue
		}
		ev = append(ev, fmt.Sprintf("cell %s, %s − %s, %s: %s over %d pairs; half-width %.1f%% of the median; excludes 0: %v",
			it.Cell, it.Other, it.Base, it.Metric, fmtEst(it.Diff, unit, true), it.Pairs, 100*it.RelHalfWidth, it.ExcludesZero))
	}
	return ev
}

func completenessFinding(r *Run) Finding {
	var ev, incomplete []string
	discarded := 0
	for _, cs := range r.Cells {
		for _, a := range cs.Arms {
			discarded += a.Discarded
			line := fmt.Sprintf("cell %s arm %s: %d valid of %d planned; %d discarded; %d warm-up excluded", cs.Name, a.Arm, a.Valid, a.Planned, a.Discarded, a.Warmup)
			for _, reason := range sortedKeys(a.ByReason) {
				line += fmt.Sprintf("; %q ×%d", reason, a.ByReason[reason])
			}
			if a.Superseded > 0 {
				line += fmt.Sprintf("; %d extra valid samples for covered blocks ignored", a.Superseded)
			}
			if a.Incomplete {
				line += " — INCOMPLETE"
				incomplete = append(incomplete, cs.Name+"/"+a.Arm)
			}
			ev = append(ev, line)
		}
	}
	planned := 0
	if len(r.Cells) > 0 && len(r.Cells[0].Arms) > 0 {
		planned = r.Cells[0].Arms[0].Planned
	}
	claim := fmt.Sprintf("Every cell (%s) reached its planned %d valid samples per arm; %s discarded (counted by reason below) and none entered the statistics.", plural(len(r.Cells), "cell", "cells"), planned, plural(discarded, "sample was", "samples were"))
	if len(incomplete) > 0 {
		claim = fmt.Sprintf("Incomplete (fewer valid samples than the %d planned blocks): %s. Their statistics use only the valid samples; %s discarded and none entered the statistics.", planned, strings.Join(incomplete, ", "), plural(discarded, "sample was", "samples were"))
	}
	return Finding{
		Title:     "Sample completeness",
		Claim:     claim,
		Evidence:  ev,
		NonClaims: []string{"Discarded samples are not re-weighted or imputed."},
	}
}

// sequentialText names the group-sequential design of a run and its
// looks, or "" for a fixed-size run.
func sequentialText(r *Run) string {
	sq := r.Sequential
	if sq == nil || len(sq.Looks) == 0 {
		return ""
	}
	var at []string
	for _, l := range sq.Looks {
		at = append(at, fmt.Sprint(l.Blocks))
	}
	last := sq.Looks[len(sq.Looks)-1]
	return fmt.Sprintf("group-sequential design (%s): O'Brien–Fleming-type alpha spending (Lan–DeMets) over at most %d blocks, a look every %d blocks, each look tested at the alpha it spent (union bound: overall alpha %g); %s at %s blocks; verdicts at the last look's level %.4g (interval confidence %s)",
		sq.Design, sq.MaxBlocks, sq.LookEvery, sq.Alpha, plural(len(sq.Looks), "look", "looks"), strings.Join(at, ", "), last.Alpha, pct(1-last.Alpha))
}

// noiseCitation is the A/A false-difference rate of this run, cited
// beside wall-time claims, or a note that none was measured.
func noiseCitation(r *Run) string {
	if r.Noise == nil {
		return "A/A noise floor: not measured in this run (vigil bench --aa measures it beside the arms)"
	}
	return "A/A noise floor on this host: " + r.Noise.Text
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// renderFindings writes findings.md.
func renderFindings(s *Summary) []byte {
	var b strings.Builder
	b.WriteString("# vigil findings\n\n")
	fmt.Fprintf(&b, "Generated by vigil %s from %s. Intervals are %.0f%%; paired differences are Hodges–Lehmann estimates with Wilcoxon signed-rank intervals over blocks; medians use order-statistic intervals.\n\n",
		s.Vigil, strings.Join(s.Inputs, ", "), 100*s.Options.Confidence)
	if len(s.Runs) > 1 {
		b.WriteString("Several runs (host classes or plan seeds) are reported side by side. Numbers from different runs are never subtracted or pooled.\n\n")
	}
	cur := ""
	for _, f := range s.Findings {
		if f.HostClass != cur || f.N == 1 {
			cur = f.HostClass
			fmt.Fprintf(&b, "## %s\n\n", orDash(cur))
		}
		fmt.Fprintf(&b, "### %d. %s\n\n", f.N, f.Title)
		fmt.Fprintf(&b, "**Claim.** %s\n\n", f.Claim)
		if len(f.Evidence) > 0 {
			b.WriteString("**Numbers.**\n\n")
			for _, e := range f.Evidence {
				fmt.Fprintf(&b, "- %s\n", e)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**Scope.** %s.\n\n", f.Scope)
		if len(f.NonClaims) > 0 {
			b.WriteString("**Not claimed.**\n\n")
			for _, n := range f.NonClaims {
				fmt.Fprintf(&b, "- %s\n", n)
			}
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "(unknown host class)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
