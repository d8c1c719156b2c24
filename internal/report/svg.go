package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// Colours per arm kind, chosen to stay distinct for common colour-vision
// deficiencies.
var kindColor = map[string]string{
	wire.ArmBare: "#6b7280",
	wire.ArmA:    "#1d4ed8",
	wire.ArmB:    "#d97706",
	wire.ArmC:    "#7c3aed",
}

func colorOf(kind string) string {
	if c, ok := kindColor[kind]; ok {
		return c
	}
	return "#0f766e"
}

// axisUnit picks a display unit for values of unit ("ns" or "bytes") whose
// largest magnitude is maxAbs, returning the divisor and label.
func axisUnit(unit string, maxAbs float64) (float64, string) {
	switch unit {
	case "ns":
		switch {
		case maxAbs >= 10e9:
			return 1e9, "s"
		case maxAbs >= 1e6:
			return 1e6, "ms"
		case maxAbs >= 1e3:
			return 1e3, "µs"
		}
		return 1, "ns"
	case "bytes":
		switch {
		case maxAbs >= 1<<30:
			return 1 << 30, "GiB"
		case maxAbs >= 1<<20:
			return 1 << 20, "MiB"
		case maxAbs >= 1<<10:
			return 1 << 10, "KiB"
		}
		return 1, "B"
	}
	return 1, ""
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

func tickLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e7 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3g", v)
	return s
}

// canvas is a plot area with margins and a linear x scale.
type canvas struct {
	w, h, left, right, top, bottom float64
	x0, x1                         float64
	b                              strings.Builder
}

func newCanvas(w, h, left float64, lo, hi float64) *canvas {
	if hi <= lo {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.06
	return &canvas{w: w, h: h, left: left, right: 16, top: 14, bottom: 34, x0: lo - pad, x1: hi + pad}
}

func (c *canvas) x(v float64) float64 {
	return c.left + (v-c.x0)/(c.x1-c.x0)*(c.w-c.left-c.right)
}

func (c *canvas) open(title, desc string) {
	fmt.Fprintf(&c.b, `<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s"><title>%s</title><desc>%s</desc>`,
		c.w, c.h, html.EscapeString(title), html.EscapeString(title), html.EscapeString(desc))
}

// xAxis draws vertical grid lines and tick labels along the bottom.
func (c *canvas) xAxis(label string) {
	for _, t := range niceTicks(c.x0, c.x1, 6) {
		x := c.x(t)
		if x < c.left-0.5 || x > c.w-c.right+0.5 {
			continue
		}
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, x, c.top, x, c.h-c.bottom)
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="tick" text-anchor="middle">%s</text>`, x, c.h-c.bottom+14, tickLabel(t))
	}
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, c.left, c.h-c.bottom, c.w-c.right, c.h-c.bottom)
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="axislabel" text-anchor="middle">%s</text>`, (c.left+c.w-c.right)/2, c.h-4, html.EscapeString(label))
}

func (c *canvas) close() string {
	c.b.WriteString(`</svg>`)
	return c.b.String()
}

type stripGroup struct {
	label, kind string
	values      []float64
}

// stripBox draws one row per group: jittered points, and a box from the
// quartiles with whiskers to the extremes and a median line.
func stripBox(title, axis, unit string, groups []stripGroup) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range groups {
		for _, v := range g.values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	div, ul := axisUnit(unit, math.Max(math.Abs(lo), math.Abs(hi)))
	row := 34.0
	c := newCanvas(560, 14+34+row*float64(len(groups)), 64, lo/div, hi/div)
	c.open(title, fmt.Sprintf("%s: points are samples, boxes span the quartiles, the thick line is the median", title))
	c.xAxis(fmt.Sprintf("%s (%s)", axis, ul))
	for i, g := range groups {
		y := c.top + row*float64(i) + row/2
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="rowlabel" text-anchor="end">%s</text>`, c.left-8, y+4, html.EscapeString(g.label))
		if len(g.values) == 0 {
			fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="note">no valid samples</text>`, c.left+6, y+4)
			continue
		}
		col := colorOf(g.kind)
		q1, med, q3 := stats.Quantile(g.values, 0.25), stats.Quantile(g.values, 0.5), stats.Quantile(g.values, 0.75)
		mn, mx := stats.Quantile(g.values, 0), stats.Quantile(g.values, 1)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.2"/>`, c.x(mn/div), y, c.x(mx/div), y, col)
		fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.14" stroke="%s" stroke-width="1.2" rx="2"/>`,
			c.x(q1/div), y-9, math.Max(c.x(q3/div)-c.x(q1/div), 1), 18.0, col, col)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"><title>median %s</title></line>`,
			c.x(med/div), y-10, c.x(med/div), y+10, col, html.EscapeString(fmtUnit(med, unit)))
		for j, v := range g.values {
			jit := (float64((j*7919)%13)/12 - 0.5) * 14
			fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="2.6" fill="%s" fill-opacity="0.75"><title>%s</title></circle>`,
				c.x(v/div), y+jit, col, html.EscapeString(fmtUnit(v, unit)))
		}
	}
	return c.close()
}

type forestRow struct {
	label, kind string
	est         Est
	note        string
}

// forest draws one estimate with its interval per row and a zero line.
func forest(title, axis, unit string, rows []forestRow) string {
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo = math.Min(lo, math.Min(r.est.Value, finiteOr(r.est.Lo(), r.est.Value)))
		hi = math.Max(hi, math.Max(r.est.Value, finiteOr(r.est.Hi(), r.est.Value)))
	}
	div, ul := axisUnit(unit, math.Max(math.Abs(lo), math.Abs(hi)))
	row := 30.0
	c := newCanvas(560, 14+34+row*float64(len(rows)), 110, lo/div, hi/div)
	c.open(title, title+": Hodges–Lehmann estimate (dot) with its Wilcoxon interval (bar); the dashed line is no difference")
	c.xAxis(fmt.Sprintf("%s (%s)", axis, ul))
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero"/>`, c.x(0), c.top, c.x(0), c.h-c.bottom)
	for i, r := range rows {
		y := c.top + row*float64(i) + row/2
		col := colorOf(r.kind)
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="rowlabel" text-anchor="end">%s</text>`, c.left-8, y+4, html.EscapeString(r.label))
		if r.est.Bounded() {
			fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5" stroke-linecap="round"/>`,
				c.x(r.est.Lo()/div), y, c.x(r.est.Hi()/div), y, col)
		}
		fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s"><title>%s%s</title></circle>`,
			c.x(r.est.Value/div), y, col, html.EscapeString(fmtEst(r.est, unit, true)), html.EscapeString(r.note))
	}
	return c.close()
}

func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}

// interactionPlot draws the per-block interaction against block index with
// the tolerance band, the estimate and its interval.
func interactionPlot(title string, it *Interaction) string {
	if len(it.PerBlock) == 0 {
		return ""
	}
	vals := make([]float64, len(it.PerBlock))
	for i, p := range it.PerBlock {
		vals[i] = p.Value
	}
	sort.Float64s(vals)
	lo := math.Min(vals[0], -it.Tolerance)
	hi := math.Max(vals[len(vals)-1], it.Tolerance)
	lo = math.Min(lo, finiteOr(it.Estimate.Lo(), lo))
	hi = math.Max(hi, finiteOr(it.Estimate.Hi(), hi))
	div, ul := axisUnit(it.Unit, math.Max(math.Abs(lo), math.Abs(hi)))
	w, h := 560.0, 230.0
	left, right, top, bottom := 64.0, 16.0, 14.0, 34.0
	pad := (hi - lo) * 0.08
	y0, y1 := (lo-pad)/div, (hi+pad)/div
	b0, b1 := float64(it.PerBlock[0].Block), float64(it.PerBlock[len(it.PerBlock)-1].Block)
	if b1 == b0 {
		b0, b1 = b0-1, b1+1
	}
	px := func(b float64) float64 { return left + (b-b0)/(b1-b0)*(w-left-right-20) + 10 }
	py := func(v float64) float64 { return top + (y1-v/div)/(y1-y0)*(h-top-bottom) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s"><title>%s</title><desc>per-block interaction C − A − B + bare; shaded band: tolerance; line and band: Hodges–Lehmann estimate and interval</desc>`,
		w, h, html.EscapeString(title), html.EscapeString(title))
	for _, t := range niceTicks(y0, y1, 5) {
		y := top + (y1-t)/(y1-y0)*(h-top-bottom)
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/><text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			left, y, w-right, y, left-6, y+4, tickLabel(t))
	}
	fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="tolband"><title>tolerance ±%s</title></rect>`,
		left, py(it.Tolerance), w-left-right, math.Max(py(-it.Tolerance)-py(it.Tolerance), 0.5), html.EscapeString(fmtUnit(it.Tolerance, it.Unit)))
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero"/>`, left, py(0), w-right, py(0))
	if it.Estimate.Bounded() {
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="ciband"><title>interval %s</title></rect>`,
			left, py(it.Estimate.Hi()), w-left-right, math.Max(py(it.Estimate.Lo())-py(it.Estimate.Hi()), 0.5), html.EscapeString(fmtEst(it.Estimate, it.Unit, true)))
	}
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="estline"/>`, left, py(it.Estimate.Value), w-right, py(it.Estimate.Value))
	for _, p := range it.PerBlock {
		fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="3.2" class="pt"><title>block %d: %s</title></circle>`,
			px(float64(p.Block)), py(p.Value), p.Block, html.EscapeString(fmtSigned(p.Value, it.Unit)))
	}
	for _, t := range niceTicks(b0, b1, 8) {
		if t != math.Trunc(t) {
			continue
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" class="tick" text-anchor="middle">%s</text>`, px(t), h-bottom+14, tickLabel(t))
	}
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" class="axislabel" text-anchor="middle">block (interaction in %s)</text>`, (left+w-right)/2, h-4, ul)
	s.WriteString(`</svg>`)
	return s.String()
}

// interferencePlot draws two panels over the run's time: wall time of
// each sample (top) and the CPUs busy outside it (bottom), with the gate
// as a line; contended samples are marked, so a hog shows as a band of
// both.
func interferencePlot(title string, ci *CellInterference, gate float64) string {
	if ci == nil || len(ci.Points) == 0 {
		return ""
	}
	t0, t1 := ci.Points[0].Seconds, ci.Points[len(ci.Points)-1].Seconds
	if t1 <= t0 {
		t0, t1 = t0-1, t1+1
	}
	wmax, fmax := 0.0, math.Max(gate, 0.1)
	for _, p := range ci.Points {
		wmax = math.Max(wmax, float64(p.WallNS))
		if p.ForeignCPUs != nil {
			fmax = math.Max(fmax, *p.ForeignCPUs)
		}
	}
	div, ul := axisUnit("ns", wmax)
	w, h := 560.0, 300.0
	left, right, top, mid, bottom := 64.0, 16.0, 14.0, 150.0, 34.0
	px := func(t float64) float64 { return left + (t-t0)/(t1-t0)*(w-left-right-20) + 10 }
	wy := func(v float64) float64 { return top + (1-v/(wmax*1.08))*(mid-top-18) }
	fy := func(v float64) float64 { return mid + (1-v/(fmax*1.08))*(h-bottom-mid) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s"><title>%s</title><desc>top: wall time per sample; bottom: CPUs busy outside the sample, dashed line the gate; hollow points are contended samples (re-measured)</desc>`,
		w, h, html.EscapeString(title), html.EscapeString(title))
	for _, t := range niceTicks(0, wmax*1.08/div, 3) {
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/><text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			left, wy(t*div), w-right, wy(t*div), left-6, wy(t*div)+4, tickLabel(t))
	}
	for _, t := range niceTicks(0, fmax*1.08, 3) {
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/><text x="%.1f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			left, fy(t), w-right, fy(t), left-6, fy(t)+4, tickLabel(t))
	}
	fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" class="tick">wall (%s)</text><text x="%.1f" y="%.1f" class="tick">foreign CPUs</text>`, left+4, top+8, ul, left+4, mid+8)
	if gate > 0 {
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="zero" stroke-dasharray="4 3"><title>gate %.2f CPUs</title></line>`, left, fy(gate), w-right, fy(gate), gate)
	}
	for _, p := range ci.Points {
		fill := colorOf(p.ArmKind)
		style := fmt.Sprintf(`fill="%s"`, fill)
		if p.Contended {
			style = fmt.Sprintf(`fill="none" stroke="%s" stroke-width="1.5"`, fill)
		}
		label := fmt.Sprintf("%s at %.1f s: %s", p.Arm, p.Seconds, fmtUnit(float64(p.WallNS), "ns"))
		fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="2.8" %s><title>%s</title></circle>`, px(p.Seconds), wy(float64(p.WallNS)), style, html.EscapeString(label))
		if p.ForeignCPUs != nil {
			fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="2.8" %s><title>%s; %.2f foreign CPUs</title></circle>`, px(p.Seconds), fy(*p.ForeignCPUs), style, html.EscapeString(label), *p.ForeignCPUs)
		}
	}
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, h-bottom, w-right, h-bottom)
	for _, t := range niceTicks(t0, t1, 6) {
		fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" class="tick" text-anchor="middle">%s</text>`, px(t), h-bottom+14, tickLabel(t))
	}
	fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" class="axislabel" text-anchor="middle">seconds since the run's first sample</text>`, (left+w-right)/2, h-4)
	s.WriteString(`</svg>`)
	return s.String()
}
