package render

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// findingText is a finding in words, as findings.md and report.html show it.
type findingText struct {
	Title     string
	Claim     string
	Evidence  []string
	Scope     string
	NonClaims []string
}

// describe writes finding f of summary s in words.
func describe(s *wire.Summary, f wire.Finding) findingText {
	r := s.Runs[f.Run]
	var t findingText
	conf := s.Options.Confidence
	switch f.Kind {
	case wire.FindingArmCosts:
		t = armCostsText(r, f, conf)
	case wire.FindingDecomposition:
		t = decompositionText(r, f)
	case wire.FindingKernel:
		t = kernelText(r, f)
	case wire.FindingSpansClipped:
		t = spansClippedText(r.CellNamed(f.Cell))
	case wire.FindingSpansRetained:
		t = findingText{Title: "Span events retained in full", Claim: "In the cells below every requested span event was retained.",
			NonClaims: []string{"No claim about span counts above the largest intact cell."}}
		for _, c := range f.Cells {
			t.Evidence = append(t.Evidence, fmt.Sprintf("cell %s: %s", c, spansText(r.CellNamed(c).Spans)))
		}
	case wire.FindingNoiseFloor:
		t = findingText{Title: "Noise floor from the A/A comparison",
			Claim:     "Between two labels running the same arm, " + noiseText(r.Noise, conf) + ".",
			Evidence:  noiseEvidence(r.Noise),
			NonClaims: []string{"The false-difference rate is an observed count over few comparisons, not a calibrated error rate."}}
	case wire.FindingInterference:
		t = interferenceText(r, f)
	case wire.FindingCompleteness:
		t = completenessText(r, f)
	default:
		t = findingText{Title: string(f.Kind), Claim: "(unknown kind of finding)"}
	}
	t.Scope = scope(r)
	if t.Evidence == nil {
		t.Evidence = []string{}
	}
	return t
}

// scope is the one-line scope every finding of a run carries.
func scope(r *wire.RunSummary) string {
	v := ""
	for _, k := range sortedKeys(r.Versions) {
		v += fmt.Sprintf(", %s %s", k, r.Versions[k])
	}
	return fmt.Sprintf("host_class %s (kernel %s, %s, %d CPUs)%s; %d blocks planned, %d warm-up, order %s, seed %d",
		r.HostClass, r.Host.Kernel, r.Host.Arch, r.Host.CPUs, v, r.Blocks, r.Warmup, r.Order, r.Seed)
}

var kindRole = map[wire.ArmKind]string{
	wire.ArmA: "the Runner's cost (A − bare)",
	wire.ArmB: "OpenTelemetry's cost (B − bare)",
	wire.ArmC: "both layers' cost (C − bare)",
}

// minTailSamples is the fewest samples whose p99/median is stated: from
// one or two the ratio says nothing about a tail.
const minTailSamples = 3

// costText renders "+12.3 ms [11.9 ms, 12.8 ms] (Hodges–Lehmann, ...)".
func costText(c wire.Cost) string {
	est, interval := fmtEst(c.Diff, c.Unit, true), fmt.Sprintf("%.0f%% Wilcoxon interval", 100*c.Diff.Confidence)
	if c.Diff.Confidence == 0 {
		// A 0% interval is the estimate itself: no range to print.
		est, interval = fmtSigned(c.Diff.Value, c.Unit), "no interval at this number of pairs"
	}
	s := fmt.Sprintf("%s (Hodges–Lehmann, %s; ratio of medians %s; p %.2g; %d pairs; unpaired Mann–Whitney p %.2g, n %d+%d)",
		est, interval, fmtRatio(c.Ratio), c.P, c.Pairs, c.UTest.P, c.UTest.N2, c.UTest.N1)
	if !c.Achieved {
		s += " — too few pairs for the requested confidence"
	}
	return s
}

func armCostsText(r *wire.RunSummary, f wire.Finding, confidence float64) findingText {
	cs := r.CellNamed(f.Cell)
	var parts, ev []string
	for _, a := range cs.Arms {
		if a.Wall == nil {
			parts = append(parts, fmt.Sprintf("%s no valid samples", a.Arm))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", a.Arm, fmtEst(a.Wall.Median, wire.UnitNS, false)))
		tail := fmt.Sprintf("p99/median %.2f (%s)", a.Wall.TailRatio, a.Wall.TailBand)
		switch {
		case a.Wall.N < minTailSamples:
			tail = fmt.Sprintf("no tail from %d sample(s)", a.Wall.N)
		case a.Wall.P99FromMax:
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
			a.Arm, a.ArmKind, a.Wall.N, fmtEst(a.Wall.Median, wire.UnitNS, false), fmtDur(a.Wall.P95), fmtDur(a.Wall.P99), tail, fmtDur(a.CPU.Median.Value), mem))
	}
	claim := fmt.Sprintf("In cell %s, median wall time per arm (%.0f%% order-statistic intervals): %s.", cs.Name, 100*confidence, strings.Join(parts, "; "))
	var costs []string
	for _, c := range f.Costs {
		if c.Achieved {
			costs = append(costs, fmt.Sprintf("%s is %s", kindRole[c.OtherKind], fmtEst(c.Diff, c.Unit, true)))
		} else {
			costs = append(costs, fmt.Sprintf("%s is estimated at %s but %s too few for a %.0f%% interval (at least %d needed)",
				kindRole[c.OtherKind], fmtSigned(c.Diff.Value, c.Unit), plural(c.Pairs, "pair is", "pairs are"), 100*confidence, c.MinPairs))
		}
		ev = append(ev, fmt.Sprintf("wall %s − %s: %s", c.Other, c.Base, costText(c)))
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
		nonClaims = append(nonClaims, "Interference stayed high in this cell ("+interferenceWhy(ci, r.MaxForeignCPUs)+"): these wall times may describe the host, not the arms.")
	}
	return findingText{Title: fmt.Sprintf("Wall time and layer costs in cell %s", cs.Name), Claim: claim, Evidence: ev, NonClaims: nonClaims}
}

func decompositionText(r *wire.RunSummary, f wire.Finding) findingText {
	wall := f.Metric == wire.MetricWall
	var lines []string
	byVerdict := map[wire.Verdict][]string{}
	for _, v := range f.Verdicts {
		it := r.CellNamed(v.Cell).InteractionOf(v.Metric)
		byVerdict[v.Verdict] = append(byVerdict[v.Verdict], v.Cell)
		line := fmt.Sprintf("cell %s: %s — interaction C − A − B + bare = %s over %d complete blocks (p %.2g); tolerance ±%s = %s; %s",
			v.Cell, it.Verdict, fmtEst(it.Estimate, it.Unit, true), it.Blocks, it.P, fmtUnit(it.Tolerance, it.Unit), toleranceRule(it), reasonText(it))
		if it.Stopping != nil {
			line += "; stopping rule: " + stoppingText(it)
		}
		lines = append(lines, line)
	}
	what := "Wall time"
	if !wall {
		what = "Memory (" + string(f.Metric) + ")"
	}
	var parts []string
	for _, v := range []wire.Verdict{wire.Additive, wire.NotAdditive, wire.Inconclusive} {
		if cells := byVerdict[v]; len(cells) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s", v, strings.Join(cells, ", ")))
		}
	}
	nonClaims := []string{
		"\"Additive\" means the interaction lies within the stated tolerance, not that it is exactly zero.",
		"\"Inconclusive\" is not evidence of an interaction; it says this budget cannot decide.",
		"No claim about other cells, workloads or host classes.",
	}
	if sq := sequentialText(r); sq != "" {
		lines = append(lines, sq)
	}
	if wall {
		if hc := highCells(r); len(hc) > 0 {
			nonClaims = append(nonClaims, fmt.Sprintf("Interference stayed high in %s (see Host interference): the verdicts there may describe the host, not the arms.", strings.Join(hc, ", ")))
		}
		lines = append(lines, noiseCitation(r))
	}
	for _, c := range f.Costs {
		lines = append(lines, fmt.Sprintf("cell %s: %s %s − %s = %s", c.Cell, c.Metric, c.OtherKind, c.BaseKind, costText(c)))
	}
	return findingText{
		Title:     fmt.Sprintf("%s decomposition (Runner + OpenTelemetry)", what),
		Claim:     fmt.Sprintf("%s decomposition of the two layers' costs: %s.", what, strings.Join(parts, "; ")),
		Evidence:  lines,
		NonClaims: nonClaims,
	}
}

// toleranceRule says how the tolerance of an interaction was chosen.
func toleranceRule(it *wire.Interaction) string {
	return fmt.Sprintf("max(%g%% of the bare median %s, floor %s)", it.TolerancePct, fmtUnit(it.BareMedian, it.Unit), fmtUnit(it.ToleranceFloor, it.Unit))
}

// reasonText says why an interaction got its verdict.
func reasonText(it *wire.Interaction) string {
	tol := fmtUnit(it.Tolerance, it.Unit)
	switch it.Reason {
	case wire.ReasonNoCompleteBlocks:
		return "no block has a valid sample of all four arms"
	case wire.ReasonTooFewBlocks:
		return fmt.Sprintf("%d complete blocks cannot give a %.0f%% interval", it.Blocks, 100*it.Confidence)
	case wire.ReasonDrifting:
		return fmt.Sprintf("the interaction drifts across blocks (Spearman rho %.2f, p %.3g; trend %s over the run, tolerance %s)",
			it.Drift.Rho, it.Drift.P, fmtSigned(it.Drift.SlopePerBlock*float64(it.Drift.BlockSpan), it.Unit), tol)
	case wire.ReasonWithinTolerance:
		return fmt.Sprintf("the %s interval lies within ±%s", pct(it.Estimate.Confidence), tol)
	case wire.ReasonBeyondTolerance:
		return fmt.Sprintf("the %s interval lies entirely beyond ±%s", pct(it.Estimate.Confidence), tol)
	case wire.ReasonStraddles:
		return fmt.Sprintf("the %.0f%% interval straddles the tolerance ±%s", 100*it.Estimate.Confidence, tol)
	}
	return string(it.Reason)
}

// stoppingText says what more sampling would do for an inconclusive
// interaction.
func stoppingText(it *wire.Interaction) string {
	sr := it.Stopping
	tol := fmtUnit(it.Tolerance, it.Unit)
	switch sr.Kind {
	case wire.StopMinBlocks:
		if it.Blocks == 0 {
			return fmt.Sprintf("needs at least %d complete blocks for a %.0f%% interval", sr.BlocksNeeded, 100*it.Confidence)
		}
		return fmt.Sprintf("needs at least %d complete blocks (%d more) for a %.0f%% interval", sr.BlocksNeeded, sr.AdditionalBlocks, 100*it.Confidence)
	case wire.StopNotExchangeable:
		return "more blocks of the same sampling will not settle it: the samples are not exchangeable across blocks; look for the drifting mechanism (warm-up, order, machine state) first"
	case wire.StopOnBoundary:
		return fmt.Sprintf("the estimate sits on the tolerance boundary ±%s; no number of blocks of the same sampling settles it; choose a tolerance or a narrower design", tol)
	case wire.StopBeyondReach:
		return fmt.Sprintf("more than 10^9 complete blocks would be needed for the interval to fall %s ±%s; more of the same sampling is impractical", sr.Side, tol)
	case wire.StopImpractical:
		return fmt.Sprintf("about %d complete blocks (%d more) would be needed for the interval to fall %s ±%s; more of the same sampling is impractical", sr.BlocksNeeded, sr.AdditionalBlocks, sr.Side, tol)
	case wire.StopSettleable:
		return fmt.Sprintf("about %d complete blocks (%d more) should bring the interval %s ±%s, if the spread stays as observed", sr.BlocksNeeded, sr.AdditionalBlocks, sr.Side, tol)
	}
	return string(sr.Kind)
}

// pct prints a confidence level: "95%", or "99.87%" for the strict levels
// of early sequential looks.
func pct(conf float64) string {
	if math.Abs(conf*100-math.Round(conf*100)) < 1e-9 {
		return fmt.Sprintf("%.0f%%", 100*conf)
	}
	return fmt.Sprintf("%.4g%%", 100*conf)
}

func kernelText(r *wire.RunSummary, f wire.Finding) findingText {
	var ev []string
	for _, name := range f.Cells {
		cs := r.CellNamed(name)
		k := cs.Kernel
		if k.Evaluated == 0 {
			ev = append(ev, fmt.Sprintf("cell %s: %d A/C samples without calibration data; ringbuf_drops %d; kernel_layer complete %d/%d; cgroup_correlation clean %d/%d",
				cs.Name, k.Samples, k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples))
			continue
		}
		ev = append(ev, fmt.Sprintf("cell %s (%d worker files, concurrency %d): %d/%d A/C samples matched calibration (write opens %s of %d expected, read opens %s of %d); ringbuf_drops %d; kernel_layer complete %d/%d; cgroup_correlation clean %d/%d",
			cs.Name, cs.KernelEvents, cs.Concurrency, k.Matched, k.Samples, span(k.ObservedWriteMin, k.ObservedWriteMax), k.ExpectedWrite,
			span(k.ObservedReadMin, k.ObservedReadMax), k.ExpectedRead, k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples))
	}
	var claim string
	switch f.Status {
	case wire.StatusHealthy:
		t := r.CellNamed(f.HealthyThrough)
		claim = fmt.Sprintf("Kernel capture is healthy through %s (%d worker files, concurrency %d): every A/C sample in every calibrated cell matched its calibration exactly, with ringbuf_drops = 0, kernel_layer complete and cgroup_correlation clean.",
			t.Name, t.KernelEvents, t.Concurrency)
	case wire.StatusHealthyThrough:
		t := r.CellNamed(f.HealthyThrough)
		claim = fmt.Sprintf("Kernel capture is healthy through %s (%d worker files) but not in %s.", t.Name, t.KernelEvents, strings.Join(f.Unhealthy, ", "))
	case wire.StatusNotHealthy:
		claim = fmt.Sprintf("Kernel capture is not healthy in %s.", strings.Join(f.Unhealthy, ", "))
	default:
		claim = "No cell has kernel calibration data, so capture completeness is not established by calibration."
	}
	if len(f.Uncalibrated) > 0 && f.Status != wire.StatusUncalibrated {
		claim += fmt.Sprintf(" Cells without calibration data: %s.", strings.Join(f.Uncalibrated, ", "))
	}
	return findingText{
		Title:    "Kernel capture fidelity",
		Claim:    claim,
		Evidence: ev,
		NonClaims: []string{
			"Calibration covers the workload's worker-file opens only; it is not a proof that every other event kind was captured.",
			"No claim beyond the largest measured cell.",
		},
	}
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// spansText describes the span retention of a cell.
func spansText(f *wire.SpanFidelity) string {
	retained, dropped := span(f.RetainedMin, f.RetainedMax), span(f.DroppedMin, f.DroppedMax)
	var t string
	switch f.DroppedEnd {
	case wire.DroppedNone:
		t = fmt.Sprintf("all %d requested span events retained in %d samples", f.Requested, f.Samples)
	case wire.DroppedOldest:
		t = fmt.Sprintf("retained %s/%d span events, dropped %s; the oldest events were dropped, the newest %s kept", retained, f.Requested, dropped, retained)
	case wire.DroppedNewest:
		t = fmt.Sprintf("retained %s/%d span events, dropped %s; the newest events were dropped, the oldest %s kept", retained, f.Requested, dropped, retained)
	default:
		t = fmt.Sprintf("retained %s/%d span events, dropped %s; which events were dropped differs between samples or is not a contiguous end", retained, f.Requested, dropped)
	}
	if f.Limit > 0 {
		t += fmt.Sprintf(" (span event limit %d)", f.Limit)
	}
	if f.WithoutSpanData > 0 {
		t += fmt.Sprintf("; %d B/C samples without span numbers (no agent result) are not counted", f.WithoutSpanData)
	}
	return t
}

func spansClippedText(cs *wire.CellSummary) findingText {
	f := cs.Spans
	claim := fmt.Sprintf("At %s, OpenTelemetry span events are clipped: %s.", cs.Name, spansText(f))
	if f.DroppedEnd == wire.DroppedOldest {
		claim = fmt.Sprintf("At %s, OpenTelemetry retained %s/%d span events: the oldest events were dropped; the newest %s kept.",
			cs.Name, span(f.RetainedMin, f.RetainedMax), f.Requested, span(f.RetainedMin, f.RetainedMax))
	}
	ev := []string{fmt.Sprintf("cell %s: %d B/C samples; requested %d, retained %s, dropped %s, span event limit %d, dropped end: %s",
		cs.Name, f.Samples, f.Requested, span(f.RetainedMin, f.RetainedMax), span(f.DroppedMin, f.DroppedMax), f.Limit, f.DroppedEnd)}
	return findingText{
		Title:    fmt.Sprintf("Span events clipped at %s (limit %d)", cs.Name, f.Limit),
		Claim:    claim,
		Evidence: ev,
		NonClaims: []string{
			fmt.Sprintf("Timing in cell %s is not span-event throughput at %d events: the input is clipped to %s.", cs.Name, f.Requested, span(f.RetainedMin, f.RetainedMax)),
			"This is the SDK's configured event limit, not a loss in vigil's trace writer or archive.",
		},
	}
}

// noiseText states the A/A noise floor.
func noiseText(nf *wire.NoiseFloor, conf float64) string {
	t := fmt.Sprintf("%d of %d A/A intervals exclude 0 (false-difference rate %.0f%%, nominal %.0f%%); the median A/A interval half-width is %.1f%% of the median, so differences smaller than that are not distinguishable from noise at this budget",
		nf.ExcludingZero, nf.Comparisons, 100*nf.FalseRate, 100*nf.NominalRate, 100*nf.MedianRelHalfWidth)
	if nf.Uncounted > 0 {
		t += fmt.Sprintf(" (%d comparisons with too few pairs for a %.0f%% interval are not counted)", nf.Uncounted, 100*conf)
	}
	return t
}

func noiseEvidence(n *wire.NoiseFloor) []string {
	var ev []string
	for _, it := range n.Items {
		if it.Diff.Confidence < 1-n.NominalRate-1e-9 {
			// Not counted in the noise floor.
			ev = append(ev, fmt.Sprintf("cell %s, %s − %s, %s: %s over %d pairs; too few pairs for a %.0f%% interval, not counted",
				it.Cell, it.Other, it.Base, it.Metric, fmtSigned(it.Diff.Value, it.Unit), it.Pairs, 100*(1-n.NominalRate)))
			continue
		}
		ev = append(ev, fmt.Sprintf("cell %s, %s − %s, %s: %s over %d pairs; half-width %.1f%% of the median; excludes 0: %v",
			it.Cell, it.Other, it.Base, it.Metric, fmtEst(it.Diff, it.Unit, true), it.Pairs, 100*it.RelHalfWidth, it.ExcludesZero))
	}
	return ev
}

// noiseCitation is the A/A false-difference rate of this run, cited
// beside wall-time claims, or a note that none was measured.
func noiseCitation(r *wire.RunSummary) string {
	if r.Noise == nil {
		return "A/A noise floor: not measured in this run (vigil bench --aa measures it beside the arms)"
	}
	return "A/A noise floor on this host: " + noiseText(r.Noise, 1-r.Noise.NominalRate)
}

// interferenceWhy says why a cell's interference counts as high; gate is
// the run's interference gate (0: off).
func interferenceWhy(ci *wire.CellInterference, gate float64) string {
	switch ci.HighReason {
	case wire.HighContendedShare:
		return fmt.Sprintf("%d of %d samples were contended (more than %.0f%%)", ci.Contended, ci.Measured, 100*wire.InterferenceHighShare)
	case wire.HighUsedOverLimit:
		return fmt.Sprintf("%d of the %d samples used ran beside more than %.2f CPUs of other work", ci.UsedOver, ci.Used, ci.Limit)
	case wire.HighMedianNearGate:
		return fmt.Sprintf("the samples used ran beside a median %.2f CPUs of other work (over half the gate of %.2f)", ci.UsedMedianForeignCPUs, gate)
	case wire.HighMedianGateOff:
		return fmt.Sprintf("the samples used ran beside a median %.2f CPUs of other work, with the interference gate off", ci.UsedMedianForeignCPUs)
	}
	return string(ci.HighReason)
}

func interferenceText(r *wire.RunSummary, f wire.Finding) findingText {
	var ev []string
	if h := r.HostState; h != nil {
		for _, w := range h.Warnings {
			ev = append(ev, "host before the run: "+w)
		}
	}
	for _, cs := range r.Cells {
		ci := cs.Interference
		if ci == nil {
			continue
		}
		line := fmt.Sprintf("cell %s: %d of %d measured samples contended and re-measured; samples used: median %s, max %s CPUs busy outside them, %d over the gate",
			cs.Name, ci.Contended, ci.Measured, figureOr(ci.UsedMedianForeignCPUs), figureOr(ci.UsedMaxForeignCPUs), ci.UsedOver)
		if ci.High {
			line += " — HIGH: " + interferenceWhy(ci, r.MaxForeignCPUs)
		}
		ev = append(ev, line)
	}
	gate := "off"
	if r.MaxForeignCPUs > 0 {
		gate = fmt.Sprintf("%.2f CPUs", r.MaxForeignCPUs)
	}
	claim := fmt.Sprintf("Host interference (gate %s): %s contended and re-measured; interference stayed low in every cell.", gate, plural(f.Contended, "sample was", "samples were"))
	if f.Status == wire.StatusHigh {
		claim = fmt.Sprintf("Host interference (gate %s): %s contended; interference stayed HIGH in %s, so wall-time verdicts there may describe the host rather than the arms.", gate, plural(f.Contended, "sample was", "samples were"), strings.Join(f.Cells, ", "))
	}
	return findingText{
		Title:    "Host interference",
		Claim:    claim,
		Evidence: ev,
		NonClaims: []string{
			"Foreign CPU is host busy time (10 ms ticks) minus the sample's own CPU: it sees other processes, not cache, memory-bandwidth or thermal effects.",
		},
	}
}

// highCells lists the cells whose interference stayed high.
func highCells(r *wire.RunSummary) []string {
	var out []string
	for _, cs := range r.Cells {
		if cs.Interference != nil && cs.Interference.High {
			out = append(out, cs.Name)
		}
	}
	return out
}

func figureOr(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

func completenessText(r *wire.RunSummary, f wire.Finding) findingText {
	var ev []string
	for _, cs := range r.Cells {
		for _, a := range cs.Arms {
			line := fmt.Sprintf("cell %s arm %s: %d valid of %d planned; %d discarded; %d warm-up excluded", cs.Name, a.Arm, a.Valid, a.Planned, a.Discarded, a.Warmup)
			for _, reason := range sortedKeys(a.ByReason) {
				line += fmt.Sprintf("; %q ×%d", reason, a.ByReason[reason])
			}
			if a.Superseded > 0 {
				line += fmt.Sprintf("; %d extra valid samples for covered blocks ignored", a.Superseded)
			}
			if a.Incomplete {
				line += " — INCOMPLETE"
			}
			ev = append(ev, line)
		}
	}
	claim := fmt.Sprintf("Every cell (%s) reached its planned %d valid samples per arm; %s discarded (counted by reason below) and none entered the statistics.",
		plural(len(r.Cells), "cell", "cells"), f.Planned, plural(f.Discarded, "sample was", "samples were"))
	if f.Status == wire.StatusIncomplete {
		var names []string
		for _, a := range f.Incomplete {
			names = append(names, a.Cell+"/"+a.Arm)
		}
		claim = fmt.Sprintf("Incomplete (fewer valid samples than the %d planned blocks): %s. Their statistics use only the valid samples; %s discarded and none entered the statistics.",
			f.Planned, strings.Join(names, ", "), plural(f.Discarded, "sample was", "samples were"))
	}
	return findingText{
		Title:     "Sample completeness",
		Claim:     claim,
		Evidence:  ev,
		NonClaims: []string{"Discarded samples are not re-weighted or imputed."},
	}
}

// sequentialText names the group-sequential design of a run and its
// looks, or "" for a fixed-size run.
func sequentialText(r *wire.RunSummary) string {
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

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orDash(s string) string {
	if s == "" {
		return "(unknown host class)"
	}
	return s
}
