package render

import (
	"fmt"
	"html/template"
	"math"
	"sort"

	"vigil/internal/wire"
)

// Plots are built as data (element, attributes in order, tooltip, text)
// and written by the page template, which escapes every value.

// svgPlot is one inline SVG figure.
type svgPlot struct {
	W, H  float64
	Title string
	Desc  string
	Elems []svgElem
}

// svgElem is one SVG element: a line, rect, circle or text.
type svgElem struct {
	Tag   string
	Attrs []svgAttr
	Title string // tooltip, if any
	Text  string // content of a text element
}

// svgAttr is one attribute. Names are trusted (template.HTMLAttr): they
// are literals of this file, never data; values are escaped.
type svgAttr struct {
	Name  template.HTMLAttr
	Value string
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

func (p *svgPlot) add(tag, title, text string, kv ...string) {
	e := svgElem{Tag: tag, Title: title, Text: text}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Attrs = append(e.Attrs, svgAttr{template.HTMLAttr(kv[i]), kv[i+1]})
	}
	p.Elems = append(p.Elems, e)
}

func (p *svgPlot) line(x1, y1, x2, y2 float64, title string, kv ...string) {
	p.add("line", title, "", append([]string{"x1", f1(x1), "y1", f1(y1), "x2", f1(x2), "y2", f1(y2)}, kv...)...)
}

func (p *svgPlot) text(x, y float64, text string, kv ...string) {
	p.add("text", "", text, append([]string{"x", f1(x), "y", f1(y)}, kv...)...)
}

func (p *svgPlot) rect(x, y, w, h float64, title string, kv ...string) {
	p.add("rect", title, "", append([]string{"x", f1(x), "y", f1(y), "width", f1(w), "height", f1(h)}, kv...)...)
}

func (p *svgPlot) circle(cx, cy float64, r, title string, kv ...string) {
	p.add("circle", title, "", append([]string{"cx", f1(cx), "cy", f1(cy), "r", r}, kv...)...)
}

// Colours per arm kind, chosen to stay distinct for common colour-vision
// deficiencies.
var kindColor = map[wire.ArmKind]string{
	wire.ArmBare: "#6b7280",
	wire.ArmA:    "#1d4ed8",
	wire.ArmB:    "#d97706",
	wire.ArmC:    "#7c3aed",
}

func colorOf(kind wire.ArmKind) string {
	if c, ok := kindColor[kind]; ok {
		return c
	}
	return "#0f766e"
}

// axisUnit picks a display unit for values of unit ("ns" or "bytes") whose
// largest magnitude is maxAbs, returning the divisor and label.
func axisUnit(unit wire.Unit, maxAbs float64) (float64, string) {
	switch unit {
	case wire.UnitNS:
		switch {
		case maxAbs >= 10e9:
			return 1e9, "s"
		case maxAbs >= 1e6:
			return 1e6, "ms"
		case maxAbs >= 1e3:
			return 1e3, "µs"
		}
		return 1, "ns"
	case wire.UnitBytes:
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
	p                              *svgPlot
}

func newCanvas(w, h, left float64, lo, hi float64) *canvas {
	if hi <= lo {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.06
	return &canvas{w: w, h: h, left: left, right: 16, top: 14, bottom: 34, x0: lo - pad, x1: hi + pad, p: &svgPlot{W: w, H: h}}
}

func (c *canvas) x(v float64) float64 {
	return c.left + (v-c.x0)/(c.x1-c.x0)*(c.w-c.left-c.right)
}

func (c *canvas) open(title, desc string) {
	c.p.Title, c.p.Desc = title, desc
}

// xAxis draws vertical grid lines and tick labels along the bottom.
func (c *canvas) xAxis(label string) {
	for _, t := range niceTicks(c.x0, c.x1, 6) {
		x := c.x(t)
		if x < c.left-0.5 || x > c.w-c.right+0.5 {
			continue
		}
		c.p.line(x, c.top, x, c.h-c.bottom, "", "class", "grid")
		c.p.text(x, c.h-c.bottom+14, tickLabel(t), "class", "tick", "text-anchor", "middle")
	}
	c.p.line(c.left, c.h-c.bottom, c.w-c.right, c.h-c.bottom, "", "class", "axis")
	c.p.text((c.left+c.w-c.right)/2, c.h-4, label, "class", "axislabel", "text-anchor", "middle")
}

type stripGroup struct {
	label    string
	kind     wire.ArmKind
	values   []float64 // per block
	q        [3]float64
	min, max float64
}

// stripBox draws one row per group: jittered points, and a box from the
// quartiles with whiskers to the extremes and a median line.
func stripBox(title, axis string, unit wire.Unit, groups []stripGroup) *svgPlot {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range groups {
		for _, v := range g.values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return nil
	}
	div, ul := axisUnit(unit, math.Max(math.Abs(lo), math.Abs(hi)))
	row := 34.0
	c := newCanvas(560, 14+34+row*float64(len(groups)), 64, lo/div, hi/div)
	c.open(title, fmt.Sprintf("%s: points are samples, boxes span the quartiles, the thick line is the median", title))
	c.xAxis(fmt.Sprintf("%s (%s)", axis, ul))
	for i, g := range groups {
		y := c.top + row*float64(i) + row/2
		c.p.text(c.left-8, y+4, g.label, "class", "rowlabel", "text-anchor", "end")
		if len(g.values) == 0 {
			c.p.text(c.left+6, y+4, "no valid samples", "class", "note")
			continue
		}
		col := colorOf(g.kind)
		q1, med, q3 := g.q[0], g.q[1], g.q[2]
		c.p.line(c.x(g.min/div), y, c.x(g.max/div), y, "", "stroke", col, "stroke-width", "1.2")
		c.p.rect(c.x(q1/div), y-9, math.Max(c.x(q3/div)-c.x(q1/div), 1), 18.0, "", "fill", col, "fill-opacity", "0.14", "stroke", col, "stroke-width", "1.2", "rx", "2")
		c.p.line(c.x(med/div), y-10, c.x(med/div), y+10, "median "+fmtUnit(med, unit), "stroke", col, "stroke-width", "3")
		for j, v := range g.values {
			jit := (float64((j*7919)%13)/12 - 0.5) * 14
			c.p.circle(c.x(v/div), y+jit, "2.6", fmtUnit(v, unit), "fill", col, "fill-opacity", "0.75")
		}
	}
	return c.p
}

type forestRow struct {
	label string
	kind  wire.ArmKind
	est   wire.Est
	note  string
}

// forest draws one estimate with its interval per row and a zero line.
func forest(title, axis string, unit wire.Unit, rows []forestRow) *svgPlot {
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
	c.p.line(c.x(0), c.top, c.x(0), c.h-c.bottom, "", "class", "zero")
	for i, r := range rows {
		y := c.top + row*float64(i) + row/2
		col := colorOf(r.kind)
		c.p.text(c.left-8, y+4, r.label, "class", "rowlabel", "text-anchor", "end")
		if r.est.Bounded() {
			c.p.line(c.x(r.est.Lo()/div), y, c.x(r.est.Hi()/div), y, "", "stroke", col, "stroke-width", "2.5", "stroke-linecap", "round")
		}
		c.p.circle(c.x(r.est.Value/div), y, "4.5", fmtEst(r.est, unit, true)+r.note, "fill", col)
	}
	return c.p
}

func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}

// interactionPlot draws the per-block interaction against block index with
// the tolerance band, the estimate and its interval.
func interactionPlot(title string, it *wire.Interaction) *svgPlot {
	if len(it.PerBlock) == 0 {
		return nil
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
	p := &svgPlot{W: w, H: h, Title: title,
		Desc: "per-block interaction C − A − B + bare; shaded band: tolerance; line and band: Hodges–Lehmann estimate and interval"}
	for _, t := range niceTicks(y0, y1, 5) {
		y := top + (y1-t)/(y1-y0)*(h-top-bottom)
		p.line(left, y, w-right, y, "", "class", "grid")
		p.text(left-6, y+4, tickLabel(t), "class", "tick", "text-anchor", "end")
	}
	p.rect(left, py(it.Tolerance), w-left-right, math.Max(py(-it.Tolerance)-py(it.Tolerance), 0.5), "tolerance ±"+fmtUnit(it.Tolerance, it.Unit), "class", "tolband")
	p.line(left, py(0), w-right, py(0), "", "class", "zero")
	if it.Estimate.Bounded() {
		p.rect(left, py(it.Estimate.Hi()), w-left-right, math.Max(py(it.Estimate.Lo())-py(it.Estimate.Hi()), 0.5), "interval "+fmtEst(it.Estimate, it.Unit, true), "class", "ciband")
	}
	p.line(left, py(it.Estimate.Value), w-right, py(it.Estimate.Value), "", "class", "estline")
	for _, b := range it.PerBlock {
		p.circle(px(float64(b.Block)), py(b.Value), "3.2", fmt.Sprintf("block %d: %s", b.Block, fmtSigned(b.Value, it.Unit)), "class", "pt")
	}
	for _, t := range niceTicks(b0, b1, 8) {
		if t != math.Trunc(t) {
			continue
		}
		p.text(px(t), h-bottom+14, tickLabel(t), "class", "tick", "text-anchor", "middle")
	}
	p.line(left, h-bottom, w-right, h-bottom, "", "class", "axis")
	p.text((left+w-right)/2, h-4, "block (interaction in "+ul+")", "class", "axislabel", "text-anchor", "middle")
	return p
}

// interferencePlot draws two panels over the run's time: wall time of
// each sample (top) and the CPUs busy outside it (bottom), with the gate
// as a line; contended samples are marked, so a hog shows as a band of
// both.
func interferencePlot(title string, ci *wire.CellInterference, gate float64) *svgPlot {
	if ci == nil || len(ci.Points) == 0 {
		return nil
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
	div, ul := axisUnit(wire.UnitNS, wmax)
	w, h := 560.0, 300.0
	left, right, top, mid, bottom := 64.0, 16.0, 14.0, 150.0, 34.0
	px := func(t float64) float64 { return left + (t-t0)/(t1-t0)*(w-left-right-20) + 10 }
	wy := func(v float64) float64 { return top + (1-v/(wmax*1.08))*(mid-top-18) }
	fy := func(v float64) float64 { return mid + (1-v/(fmax*1.08))*(h-bottom-mid) }
	p := &svgPlot{W: w, H: h, Title: title,
		Desc: "top: wall time per sample; bottom: CPUs busy outside the sample, dashed line the gate; hollow points are contended samples (re-measured)"}
	for _, t := range niceTicks(0, wmax*1.08/div, 3) {
		p.line(left, wy(t*div), w-right, wy(t*div), "", "class", "grid")
		p.text(left-6, wy(t*div)+4, tickLabel(t), "class", "tick", "text-anchor", "end")
	}
	for _, t := range niceTicks(0, fmax*1.08, 3) {
		p.line(left, fy(t), w-right, fy(t), "", "class", "grid")
		p.text(left-6, fy(t)+4, tickLabel(t), "class", "tick", "text-anchor", "end")
	}
	p.text(left+4, top+8, "wall ("+ul+")", "class", "tick")
	p.text(left+4, mid+8, "foreign CPUs", "class", "tick")
	if gate > 0 {
		p.line(left, fy(gate), w-right, fy(gate), fmt.Sprintf("gate %.2f CPUs", gate), "class", "zero", "stroke-dasharray", "4 3")
	}
	for _, pt := range ci.Points {
		fill := colorOf(pt.ArmKind)
		style := []string{"fill", fill}
		if pt.Contended {
			style = []string{"fill", "none", "stroke", fill, "stroke-width", "1.5"}
		}
		label := fmt.Sprintf("%s at %.1f s: %s", pt.Arm, pt.Seconds, fmtUnit(float64(pt.WallNS), wire.UnitNS))
		p.circle(px(pt.Seconds), wy(float64(pt.WallNS)), "2.8", label, style...)
		if pt.ForeignCPUs != nil {
			p.circle(px(pt.Seconds), fy(*pt.ForeignCPUs), "2.8", fmt.Sprintf("%s; %.2f foreign CPUs", label, *pt.ForeignCPUs), style...)
		}
	}
	p.line(left, h-bottom, w-right, h-bottom, "", "class", "axis")
	for _, t := range niceTicks(t0, t1, 6) {
		p.text(px(t), h-bottom+14, tickLabel(t), "class", "tick", "text-anchor", "middle")
	}
	p.text((left+w-right)/2, h-4, "seconds since the run's first sample", "class", "axislabel", "text-anchor", "middle")
	return p
}
