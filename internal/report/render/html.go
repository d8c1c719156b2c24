package render

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"strings"
	"sync"

	"vigil/internal/wire"
)

//go:embed templates/*.html.tmpl
var templateFS embed.FS

// page is report.html: self-contained (inline CSS, inline SVG, one small
// inline script that records load errors), no external requests. It is
// parsed on first use, not at start-up: most commands never render it.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(templateFS, "templates/*.html.tmpl"))
})

type pageView struct {
	Vigil, Inputs, Conf string
	TolerancePct        string
	WallFloor, MemFloor string
	Several             bool
	Findings            []findingView
	Runs                []runView
}

type findingView struct {
	findingText
	HostClass string
}

type runView struct {
	Title, Scope, Shards string
	Samples              int
	Noise                string
	Cells                []cellView
}

type cellView struct {
	ID, Name, Payload, CI                 string
	KernelEvents, SpanEvents, Concurrency int
	Arms                                  []armRow
	Figures                               []figureView
	Decomposition                         *decompositionView
	Fidelity                              []fidelityRow
}

type badgeView struct{ Class, Text string }

func badge(text string) badgeView {
	return badgeView{Class: "b-" + strings.ReplaceAll(text, " ", "-"), Text: text}
}

type reasonCount struct {
	Reason string
	Count  int
}

type armRow struct {
	Arm, Kind, Color                                string
	Valid, Planned, Discarded                       int
	Incomplete, NoSamples                           bool
	Reasons                                         []reasonCount
	WallMedian, P95, P99, TailRatio, CPU, RSS, Peak string
	Artifacts                                       string
	TailBand                                        badgeView
}

type figureView struct {
	Caption string
	Badge   *badgeView
	Plot    *svgPlot
}

type decompositionView struct {
	CI   string
	Rows []decompositionRow
}

type decompositionRow struct {
	Metric, Estimate, Tolerance, Why string
	Verdict                          badgeView
	Blocks                           int
}

type fidelityRow struct {
	What, Detail string
	Status       badgeView
}

// HTML writes report.html.
func HTML(s *wire.Summary) ([]byte, error) {
	v := pageView{Vigil: s.Vigil, Inputs: strings.Join(s.Inputs, ", "), Conf: pct(s.Options.Confidence),
		TolerancePct: fmt.Sprintf("%g", s.Options.TolerancePct), WallFloor: fmtDur(s.Options.WallFloorNS), MemFloor: fmtBytes(s.Options.MemFloorBytes),
		Several: len(s.Runs) > 1}
	for _, f := range s.Findings {
		v.Findings = append(v.Findings, findingView{findingText: describe(s, f), HostClass: f.HostClass})
	}
	for _, r := range s.Runs {
		v.Runs = append(v.Runs, runHTML(s, r))
	}
	var b bytes.Buffer
	if err := page().ExecuteTemplate(&b, "page", v); err != nil {
		return nil, fmt.Errorf("report.html: %v", err)
	}
	return b.Bytes(), nil
}

func runHTML(s *wire.Summary, r *wire.RunSummary) runView {
	rv := runView{Title: orDash(r.HostClass), Scope: scope(r), Shards: strings.Join(r.Shards, ", "), Samples: r.Samples}
	if r.Noise != nil {
		rv.Noise = noiseText(r.Noise, s.Options.Confidence)
	}
	for _, cs := range r.Cells {
		cv := cellView{ID: anchor(r, cs.Name), Name: cs.Name, Payload: fmtBytes(float64(cs.PayloadBytes)), CI: pct(s.Options.Confidence) + " CI",
			KernelEvents: cs.KernelEvents, SpanEvents: cs.SpanEvents, Concurrency: cs.Concurrency}
		for _, a := range cs.Arms {
			cv.Arms = append(cv.Arms, armHTML(a))
		}
		cv.Figures = figures(r, cs)
		if len(cs.Decomposition) > 0 {
			// A sequential run's verdicts are at its last look's level.
			d := &decompositionView{CI: pct(cs.Decomposition[0].Confidence) + " CI"}
			for _, it := range cs.Decomposition {
				why := reasonText(it)
				if it.Stopping != nil {
					why += ". " + stoppingText(it)
				}
				d.Rows = append(d.Rows, decompositionRow{Metric: string(it.Metric), Verdict: badge(string(it.Verdict)), Estimate: fmtEst(it.Estimate, it.Unit, true),
					Tolerance: fmtUnit(it.Tolerance, it.Unit), Blocks: it.Blocks, Why: why})
			}
			cv.Decomposition = d
		}
		if k := cs.Kernel; k != nil {
			st := badge("ok")
			if !k.Healthy {
				st = badgeView{"b-bad", "not healthy"}
			}
			cv.Fidelity = append(cv.Fidelity, fidelityRow{What: "kernel calibration", Status: st,
				Detail: fmt.Sprintf("%d/%d A/C samples matched (write %s/%d, read %s/%d); ringbuf drops %d; kernel_layer complete %d/%d; cgroup clean %d/%d",
					k.Matched, k.Samples, span(k.ObservedWriteMin, k.ObservedWriteMax), k.ExpectedWrite, span(k.ObservedReadMin, k.ObservedReadMax), k.ExpectedRead,
					k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples)})
		}
		if sp := cs.Spans; sp != nil {
			st := badge("ok")
			if sp.Clipped {
				st = badgeView{"b-warning", "clipped"}
			}
			cv.Fidelity = append(cv.Fidelity, fidelityRow{What: "span retention", Status: st, Detail: spansText(sp)})
		}
		rv.Cells = append(rv.Cells, cv)
	}
	return rv
}

func armHTML(a *wire.ArmSummary) armRow {
	row := armRow{Arm: a.Arm, Color: colorOf(a.ArmKind), Valid: a.Valid, Planned: a.Planned, Incomplete: a.Incomplete, Discarded: a.Discarded}
	if string(a.ArmKind) != a.Arm {
		row.Kind = string(a.ArmKind)
	}
	for _, k := range sortedKeys(a.ByReason) {
		row.Reasons = append(row.Reasons, reasonCount{k, a.ByReason[k]})
	}
	if a.Wall == nil {
		row.NoSamples = true
		return row
	}
	row.WallMedian = fmtEst(a.Wall.Median, wire.UnitNS, false)
	row.P95, row.P99 = fmtDur(a.Wall.P95), fmtDur(a.Wall.P99)
	if a.Wall.P95FromMax {
		row.P95 += "†"
	}
	if a.Wall.P99FromMax {
		row.P99 += "†"
	}
	row.TailRatio, row.TailBand = fmt.Sprintf("%.2f", a.Wall.TailRatio), badge(a.Wall.TailBand)
	row.CPU = fmtDur(a.CPU.Median.Value)
	row.RSS, row.Peak = "–", "–"
	if a.MaxRSS != nil {
		row.RSS = fmtBytes(a.MaxRSS.Median.Value) + " / " + fmtBytes(a.MaxRSS.Max)
	}
	if a.TreePeak != nil {
		row.Peak = fmtBytes(a.TreePeak.Median.Value) + " / " + fmtBytes(a.TreePeak.Max)
	}
	row.Artifacts = fmtBytes(a.Artifacts.TraceBytes) + " / " + fmtBytes(a.Artifacts.ArchiveBytes)
	return row
}

// figures are a cell's plots: wall time by arm, paired differences, the
// interactions, memory by arm and interference over time.
func figures(r *wire.RunSummary, cs *wire.CellSummary) []figureView {
	var out []figureView
	add := func(caption string, b *badgeView, p *svgPlot) {
		if p != nil {
			out = append(out, figureView{Caption: caption, Badge: b, Plot: p})
		}
	}
	var wall, mem []stripGroup
	memLabel := "tree peak"
	if cs.MemoryMetric == wire.MetricMaxRSS {
		memLabel = "max RSS"
	}
	for _, a := range cs.Arms {
		w := stripGroup{label: a.Arm, kind: a.ArmKind}
		m := w
		if a.Wall != nil {
			w.values, w.q, w.min, w.max = wallValues(a), a.Wall.Quartiles, a.Wall.Min, a.Wall.Max
		}
		if st := a.TreePeak; cs.MemoryMetric == wire.MetricTreePeak && st != nil {
			m.values, m.q, m.min, m.max = treePeakValues(a), st.Quartiles, st.Min, st.Max
		} else if st := a.MaxRSS; st != nil {
			m.values, m.q, m.min, m.max = maxRSSValues(a), st.Quartiles, st.Min, st.Max
		}
		wall = append(wall, w)
		mem = append(mem, m)
	}
	add("Wall time by arm", nil, stripBox("Wall time by arm, cell "+cs.Name, "wall time", wire.UnitNS, wall))
	var rows []forestRow
	for _, c := range cs.Comparisons {
		if c.Metric != wire.MetricWall || c.Pairs == 0 {
			continue
		}
		kind := wire.ArmKind("")
		if a := cs.ArmNamed(c.Other); a != nil {
			kind = a.ArmKind
		}
		rows = append(rows, forestRow{label: c.Other + " − " + c.Base, kind: kind, est: c.Diff, note: fmt.Sprintf(" (%d pairs, p %.2g)", c.Pairs, c.P)})
	}
	if len(rows) > 0 {
		add("Paired wall-time differences", nil, forest("Paired wall-time differences, cell "+cs.Name, "difference", wire.UnitNS, rows))
	}
	for _, it := range cs.Decomposition {
		what := "Wall-time"
		if it.Unit == wire.UnitBytes {
			what = "Memory"
		}
		b := badge(string(it.Verdict))
		add(what+" interaction C − A − B + bare", &b, interactionPlot(what+" interaction per block, cell "+cs.Name, it))
	}
	add("Memory by arm ("+memLabel+")", nil, stripBox("Memory by arm, cell "+cs.Name, memLabel, wire.UnitBytes, mem))
	if ci := cs.Interference; ci != nil {
		var b *badgeView
		if ci.High {
			hb := badge("high")
			b = &hb
		}
		add(fmt.Sprintf("Interference over time: %d of %d samples contended", ci.Contended, ci.Measured), b,
			interferencePlot("Wall time and foreign CPU over time, cell "+cs.Name, ci, r.MaxForeignCPUs))
	}
	return out
}

func wallValues(a *wire.ArmSummary) []float64 {
	var out []float64
	for _, b := range a.Blocks {
		out = append(out, float64(b.WallNS))
	}
	return out
}

func treePeakValues(a *wire.ArmSummary) []float64 {
	var out []float64
	for _, b := range a.Blocks {
		if b.HasTreePeak() {
			out = append(out, float64(b.TreePeakBytes))
		}
	}
	return out
}

func maxRSSValues(a *wire.ArmSummary) []float64 {
	var out []float64
	for _, b := range a.Blocks {
		out = append(out, float64(b.MaxRSSBytes))
	}
	return out
}

// anchor is the element id of a cell section.
func anchor(r *wire.RunSummary, cell string) string {
	return cfgKey(fmt.Sprintf("cell-%s-%d-%s", r.HostClass, r.Seed, cell))
}
