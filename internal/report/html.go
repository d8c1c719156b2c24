package report

import (
	"fmt"
	"html"
	"strings"
)

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>vigil report</title>
<script>
(function () {
  var root = document.documentElement;
  window.addEventListener('error', function (e) {
    root.setAttribute('data-js-errors', (root.getAttribute('data-js-errors') || '') + (e.message || 'error') + ';');
  });
  document.addEventListener('DOMContentLoaded', function () {
    root.setAttribute('data-plots', String(document.querySelectorAll('svg.plot').length));
    root.setAttribute('data-js-ok', '1');
  });
})();
</script>
<style>
:root { --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f8fafc; --card:#ffffff; --ok:#15803d; --warn:#b45309; --bad:#b91c1c; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--fg); background:var(--bg); }
header { background:#0f172a; color:#f8fafc; padding:20px 32px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:650; letter-spacing:.2px; }
header p { margin:0; color:#cbd5e1; font-size:13px; }
main { max-width:1280px; margin:0 auto; padding:24px 24px 48px; }
h2 { font-size:18px; margin:28px 0 10px; }
h3 { font-size:16px; margin:0 0 8px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 20px; margin:16px 0; box-shadow:0 1px 2px rgba(0,0,0,.03); }
.meta { color:var(--muted); font-size:12.5px; }
table { border-collapse:collapse; width:100%; font-size:12.5px; font-variant-numeric:tabular-nums; }
.tablewrap { overflow-x:auto; }
th, td { text-align:left; padding:5px 6px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; color:#374151; background:#f9fafb; }
td.num { text-align:right; white-space:nowrap; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit, minmax(470px, 1fr)); gap:14px; margin-top:14px; }
figure { margin:0; border:1px solid var(--line); border-radius:8px; padding:10px 12px 6px; background:#fff; }
figcaption { font-weight:600; font-size:13px; margin-bottom:4px; }
svg.plot { width:100%; height:auto; display:block; font-family:inherit; }
svg .grid { stroke:#eef0f3; stroke-width:1; }
svg .axis { stroke:#9ca3af; stroke-width:1; }
svg .zero { stroke:#374151; stroke-width:1; stroke-dasharray:4 3; }
svg .tick { font-size:10.5px; fill:#6b7280; }
svg .axislabel { font-size:11px; fill:#374151; }
svg .rowlabel { font-size:12px; fill:#111827; font-weight:600; }
svg .note { font-size:11px; fill:#9ca3af; font-style:italic; }
svg .tolband { fill:#16a34a; fill-opacity:.10; stroke:#16a34a; stroke-opacity:.35; stroke-dasharray:3 3; }
svg .ciband { fill:#7c3aed; fill-opacity:.16; }
svg .estline { stroke:#7c3aed; stroke-width:1.6; }
svg .pt { fill:#111827; fill-opacity:.75; }
.badge { display:inline-block; white-space:nowrap; padding:1px 8px; border-radius:999px; font-size:12px; font-weight:600; }
.b-additive, .b-healthy, .b-ok { background:#dcfce7; color:var(--ok); }
.b-not-additive, .b-fail, .b-bad { background:#fee2e2; color:var(--bad); }
.b-inconclusive-at-this-budget, .b-warning { background:#fef3c7; color:var(--warn); }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; vertical-align:baseline; }
ol.findings { padding-left:22px; }
ol.findings li { margin:0 0 10px; }
ol.findings .title { font-weight:600; }
details summary { cursor:pointer; color:#374151; }
details ul { margin:6px 0 0; padding-left:18px; color:#374151; font-size:13px; }
.flag { color:var(--warn); font-weight:600; }
footer { color:var(--muted); font-size:12px; margin-top:32px; }
</style>
</head>
`

func esc(s string) string { return html.EscapeString(s) }

func badge(text string) string {
	cls := "b-" + strings.ReplaceAll(text, " ", "-")
	return fmt.Sprintf(`<span class="badge %s">%s</span>`, esc(cls), esc(text))
}

// renderHTML writes report.html: self-contained (inline CSS, inline SVG,
// one small inline script that records load errors), no external requests.
func renderHTML(s *Summary) ([]byte, error) {
	var b strings.Builder
	b.WriteString(htmlHead)
	b.WriteString("<body>\n<header><h1>vigil report</h1>")
	fmt.Fprintf(&b, "<p>vigil %s · inputs: %s · %.0f%% intervals · tolerance %g%% of the bare median (floors %s, %s)</p></header>\n<main>\n",
		esc(s.Vigil), esc(strings.Join(s.Inputs, ", ")), 100*s.Options.Confidence, s.Options.TolerancePct, esc(fmtDur(s.Options.WallFloorNS)), esc(fmtBytes(s.Options.MemFloorBytes)))
	if len(s.Runs) > 1 {
		b.WriteString(`<p class="meta">Several runs are shown side by side; numbers from different host classes or plans are never subtracted or pooled.</p>`)
	}
	b.WriteString(`<section class="card"><h2 style="margin-top:0">Findings</h2><ol class="findings">`)
	for _, f := range s.Findings {
		fmt.Fprintf(&b, `<li><span class="title">%s</span> <span class="meta">[%s]</span><br>%s<details><summary>numbers, scope and non-claims</summary><ul>`, esc(f.Title), esc(f.HostClass), esc(f.Claim))
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "<li>%s</li>", esc(e))
		}
		fmt.Fprintf(&b, "<li><b>Scope:</b> %s</li>", esc(f.Scope))
		for _, n := range f.NonClaims {
			fmt.Fprintf(&b, "<li><b>Not claimed:</b> %s</li>", esc(n))
		}
		b.WriteString("</ul></details></li>")
	}
	b.WriteString("</ol></section>\n")
	for _, r := range s.Runs {
		renderRunHTML(&b, r)
	}
	b.WriteString(`<footer>Medians: order-statistic intervals. Paired differences: Hodges–Lehmann estimate, Wilcoxon signed-rank interval over blocks. Ratios: paired percentile bootstrap, seeded from the plan seed. p95/p99 by linear interpolation (Hyndman–Fan type 7); † marks a percentile decided by the sample maximum at this n.</footer>`)
	b.WriteString("\n</main>\n</body>\n</html>\n")
	return []byte(b.String()), nil
}

func renderRunHTML(b *strings.Builder, r *Run) {
	fmt.Fprintf(b, `<h2>%s</h2><p class="meta">%s · shards: %s · %d samples</p>`, esc(orDash(r.HostClass)), esc(r.scope()), esc(strings.Join(r.Shards, ", ")), r.Samples)
	if r.Noise != nil {
		fmt.Fprintf(b, `<div class="card"><h3>Noise floor (A/A)</h3><p>%s.</p></div>`, esc(r.Noise.Text))
	}
	for _, cs := range r.Cells {
		fmt.Fprintf(b, `<section class="card" id="%s"><h3>Cell %s</h3>`, esc(anchor(r, cs.Name)), esc(cs.Name))
		fmt.Fprintf(b, `<p class="meta">%d worker files · %d span events · concurrency %d · payload %s</p>`,
			cs.KernelEvents, cs.SpanEvents, cs.Concurrency, esc(fmtBytes(float64(cs.PayloadBytes))))
		armTableHTML(b, cs)
		b.WriteString(`<div class="grid2">`)
		var wall, memv []stripGroup
		memLabel := "tree peak"
		mm := memoryMetric(cs.Arms)
		if mm.name == metricRSS.name {
			memLabel = "max RSS"
		}
		for _, a := range cs.Arms {
			var wv, mv []float64
			if a.Wall != nil {
				wv = a.Wall.values
			}
			if mm.name == metricPeak.name && a.TreePeak != nil {
				mv = a.TreePeak.values
			} else if a.MaxRSS != nil {
				mv = a.MaxRSS.values
			}
			wall = append(wall, stripGroup{a.Arm, a.ArmKind, wv})
			memv = append(memv, stripGroup{a.Arm, a.ArmKind, mv})
		}
		figure(b, "Wall time by arm", stripBox("Wall time by arm, cell "+cs.Name, "wall time", "ns", wall))
		var rows []forestRow
		for _, c := range cs.Comparisons {
			if c.Metric != metricWall.name || c.Pairs == 0 {
				continue
			}
			kind := ""
			if a := armNamed(cs.Arms, c.Other); a != nil {
				kind = a.ArmKind
			}
			rows = append(rows, forestRow{label: c.Other + " − " + c.Base, kind: kind, est: c.Diff, note: fmt.Sprintf(" (%d pairs, p %.2g)", c.Pairs, c.P)})
		}
		if len(rows) > 0 {
			figure(b, "Paired wall-time differences", forest("Paired wall-time differences, cell "+cs.Name, "difference", "ns", rows))
		}
		for _, it := range cs.Decomposition {
			what := "Wall-time"
			if it.Unit == "bytes" {
				what = "Memory"
			}
			cap := fmt.Sprintf("%s interaction C − A − B + bare %s", what, badge(it.Verdict))
			figure(b, cap, interactionPlot(what+" interaction per block, cell "+cs.Name, it))
		}
		figure(b, "Memory by arm ("+memLabel+")", stripBox("Memory by arm, cell "+cs.Name, memLabel, "bytes", memv))
		if ci := cs.Interference; ci != nil {
			cap := fmt.Sprintf("Interference over time: %d of %d samples contended", ci.Contended, ci.Measured)
			if ci.High {
				cap += " " + badge("high")
			}
			figure(b, cap, interferencePlot("Wall time and foreign CPU over time, cell "+cs.Name, ci, r.MaxForeignCPUs))
		}
		b.WriteString(`</div>`)
		decompositionHTML(b, cs)
		fidelityHTML(b, cs)
		b.WriteString(`</section>`)
	}
}

func figure(b *strings.Builder, caption, svg string) {
	if svg == "" {
		return
	}
	fmt.Fprintf(b, `<figure><figcaption>%s</figcaption>%s</figure>`, caption, svg)
}

func armTableHTML(b *strings.Builder, cs *CellSummary) {
	b.WriteString(`<div class="tablewrap"><table><thead><tr><th>arm</th><th>valid / planned</th><th>discarded</th><th class="num">wall median [95% CI]</th><th class="num">p95 / p99</th><th>p99/median</th><th class="num">CPU</th><th class="num">max RSS med / max</th><th class="num">tree peak med / max</th><th class="num">trace / archive</th></tr></thead><tbody>`)
	for _, a := range cs.Arms {
		valid := fmt.Sprintf("%d / %d", a.Valid, a.Planned)
		if a.Incomplete {
			valid += ` <span class="badge b-bad">incomplete</span>`
		}
		disc := fmt.Sprint(a.Discarded)
		for _, k := range sortedKeys(a.ByReason) {
			disc += fmt.Sprintf(`<br><span class="meta">%s ×%d</span>`, esc(k), a.ByReason[k])
		}
		kind := ""
		if a.ArmKind != a.Arm {
			kind = fmt.Sprintf(` <span class="meta">(%s)</span>`, esc(a.ArmKind))
		}
		fmt.Fprintf(b, `<tr><td style="white-space:nowrap"><span class="swatch" style="background:%s"></span><b>%s</b>%s</td><td>%s</td><td>%s</td>`,
			colorOf(a.ArmKind), esc(a.Arm), kind, valid, disc)
		if a.Wall == nil {
			b.WriteString(`<td colspan="7" class="meta">no valid samples</td></tr>`)
			continue
		}
		p95, p99 := esc(fmtDur(a.Wall.P95)), esc(fmtDur(a.Wall.P99))
		if a.Wall.P95FromMax {
			p95 += "†"
		}
		if a.Wall.P99FromMax {
			p99 += "†"
		}
		rss, peak := "–", "–"
		if a.MaxRSS != nil {
			rss = esc(fmtBytes(a.MaxRSS.Median.Value) + " / " + fmtBytes(a.MaxRSS.Max))
		}
		if a.TreePeak != nil {
			peak = esc(fmtBytes(a.TreePeak.Median.Value) + " / " + fmtBytes(a.TreePeak.Max))
		}
		fmt.Fprintf(b, `<td class="num">%s</td><td class="num">%s / %s</td><td style="white-space:nowrap">%.2f %s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td></tr>`,
			esc(fmtEst(a.Wall.Median, "ns", false)), p95, p99, a.Wall.TailRatio, badge(a.Wall.TailBand), esc(fmtDur(a.CPU.Median.Value)), rss, peak,
			esc(fmtBytes(a.Artifacts.TraceBytes)+" / "+fmtBytes(a.Artifacts.ArchiveBytes)))
	}
	b.WriteString(`</tbody></table></div>`)
}

func decompositionHTML(b *strings.Builder, cs *CellSummary) {
	if len(cs.Decomposition) == 0 {
		return
	}
	b.WriteString(`<table style="margin-top:14px"><thead><tr><th>decomposition</th><th>verdict</th><th class="num">interaction [95% CI]</th><th class="num">tolerance</th><th>blocks</th><th>why / stopping rule</th></tr></thead><tbody>`)
	for _, it := range cs.Decomposition {
		why := it.Reason
		if it.Stopping != nil {
			why += ". " + it.Stopping.Text
		}
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">±%s</td><td>%d</td><td>%s</td></tr>`,
			esc(it.Metric), badge(it.Verdict), esc(fmtEst(it.Estimate, it.Unit, true)), esc(fmtUnit(it.Tolerance, it.Unit)), it.Blocks, esc(why))
	}
	b.WriteString(`</tbody></table>`)
}

func fidelityHTML(b *strings.Builder, cs *CellSummary) {
	if cs.Kernel == nil && cs.Spans == nil {
		return
	}
	b.WriteString(`<table style="margin-top:14px"><thead><tr><th>fidelity</th><th>status</th><th>detail</th></tr></thead><tbody>`)
	if k := cs.Kernel; k != nil {
		st := badge("ok")
		if !k.Healthy {
			st = `<span class="badge b-bad">not healthy</span>`
		}
		fmt.Fprintf(b, `<tr><td>kernel calibration</td><td>%s</td><td>%d/%d A/C samples matched (write %s/%d, read %s/%d); ringbuf drops %d; kernel_layer complete %d/%d; cgroup clean %d/%d</td></tr>`,
			st, k.Matched, k.Samples, span(k.ObservedWriteMin, k.ObservedWriteMax), k.ExpectedWrite, span(k.ObservedReadMin, k.ObservedReadMax), k.ExpectedRead,
			k.RingbufDrops, k.KernelComplete, k.Samples, k.CgroupClean, k.Samples)
	}
	if sp := cs.Spans; sp != nil {
		st := badge("ok")
		if sp.Clipped {
			st = `<span class="badge b-warning">clipped</span>`
		}
		fmt.Fprintf(b, `<tr><td>span retention</td><td>%s</td><td>%s</td></tr>`, st, esc(sp.Text))
	}
	b.WriteString(`</tbody></table>`)
}

// anchor is the element id of a cell section.
func anchor(r *Run, cell string) string {
	return cfgKey(fmt.Sprintf("cell-%s-%d-%s", r.HostClass, r.Seed, cell))
}
