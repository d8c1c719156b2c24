package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"vigil/internal/wire"
)

// Table prints the terminal summary: per run and cell, one row per arm,
// then decomposition verdicts and fidelity.
func Table(w io.Writer, s *wire.Summary) error {
	ci := pct(s.Options.Confidence) + " CI"
	for _, r := range s.Runs {
		fmt.Fprintf(w, "== %s  seed %d  blocks %d  samples %d\n", orDash(r.HostClass), r.Seed, r.Blocks, r.Samples)
		for _, cs := range r.Cells {
			fmt.Fprintf(w, "\n-- cell %s (files %d, spans %d, concurrency %d)\n", cs.Name, cs.KernelEvents, cs.SpanEvents, cs.Concurrency)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "arm\tvalid\tdiscarded\twall median [%s]\tp99/median\tCPU\tmax RSS\ttree peak\t\n", ci)
			for _, a := range cs.Arms {
				valid := fmt.Sprintf("%d/%d", a.Valid, a.Planned)
				if a.Incomplete {
					valid += " INCOMPLETE"
				}
				wall, tail, cpu, rss, peak := "-", "-", "-", "-", "-"
				if a.Wall != nil {
					wall = fmtEst(a.Wall.Median, wire.UnitNS, false)
					tail = fmt.Sprintf("%.2f %s", a.Wall.TailRatio, a.Wall.TailBand)
					if a.Wall.P99FromMax {
						tail += "*"
					}
					cpu = fmtDur(a.CPU.Median.Value)
				}
				if a.MaxRSS != nil {
					rss = fmtBytes(a.MaxRSS.Median.Value)
				}
				if a.TreePeak != nil {
					peak = fmtBytes(a.TreePeak.Median.Value)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", a.Arm, valid, a.Discarded, wall, tail, cpu, rss, peak)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, it := range cs.Decomposition {
				fmt.Fprintf(w, "   %s interaction %s: %s (tolerance ±%s)\n", it.Metric, fmtEst(it.Estimate, it.Unit, true), strings.ToUpper(string(it.Verdict)), fmtUnit(it.Tolerance, it.Unit))
				if it.Stopping != nil {
					fmt.Fprintf(w, "     %s\n", stoppingText(it))
				}
			}
			if k := cs.Kernel; k != nil {
				fmt.Fprintf(w, "   kernel calibration %d/%d matched, drops %d, healthy %v\n", k.Matched, k.Samples, k.RingbufDrops, k.Healthy)
			}
			if sp := cs.Spans; sp != nil {
				fmt.Fprintf(w, "   spans: %s\n", spansText(sp))
			}
		}
		if r.Noise != nil {
			fmt.Fprintf(w, "\n   noise floor: %s\n", noiseText(r.Noise, s.Options.Confidence))
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "* p99 is decided by the sample maximum at this n (n < 101)")
	return err
}
