//go:build linux

package bench

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"vigil/internal/wire"
)

// WriteSummary prints a short table per cell and arm: valid and discarded
// counts, and medians of the valid, non-warm-up samples. It is the at-a-
// glance view; intervals and comparisons are the report's job.
func WriteSummary(w io.Writer, p wire.Plan, samples []wire.Sample) {
	type acc struct {
		valid, discarded         int
		wall, cpu, rss, peak     []float64
		kernelOK, kernelN        int
		spanRet, spanDrop, spanN int
		artifact                 []float64
	}
	accs := map[cellArm]*acc{}
	for _, s := range samples {
		if s.Warmup {
			continue
		}
		k := cellArm{s.Cell, s.Arm}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		if !s.Valid {
			a.discarded++
			continue
		}
		a.valid++
		a.wall = append(a.wall, float64(s.WallNS))
		a.cpu = append(a.cpu, float64(s.UserNS+s.SysNS))
		a.rss = append(a.rss, float64(s.MaxRSSBytes))
		if s.TreePeakBytes >= 0 {
			a.peak = append(a.peak, float64(s.TreePeakBytes))
		}
		a.artifact = append(a.artifact, float64(s.Artifacts.ArchiveBytes+s.Artifacts.TraceBytes))
		if s.Calibration.KernelMatch != nil {
			a.kernelN++
			if *s.Calibration.KernelMatch {
				a.kernelOK++
			}
		}
		if s.Calibration.SpanMatch != nil {
			a.spanN++
			a.spanRet = s.Calibration.SpanRetained
			a.spanDrop = s.Calibration.SpanDropped
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\tarm\tvalid\tdiscarded\twall p50\tcpu p50\tmax_rss p50\ttree_peak p50\tartifacts p50\tkernel calib\tspans kept/dropped\t")
	for _, c := range p.Cells {
		for _, arm := range p.Arms {
			a := accs[cellArm{c.Name, arm}]
			if a == nil {
				a = &acc{}
			}
			kern, span := "-", "-"
			if a.kernelN > 0 {
				kern = fmt.Sprintf("%d/%d ok", a.kernelOK, a.kernelN)
			}
			if a.spanN > 0 {
				span = fmt.Sprintf("%d/%d", a.spanRet, a.spanDrop)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, arm, a.valid, a.discarded,
				durText(median(a.wall)), durText(median(a.cpu)), mibText(median(a.rss)), mibText(median(a.peak)),
				kibText(median(a.artifact)), kern, span)
		}
	}
	tw.Flush()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return -1
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func durText(ns float64) string {
	if ns < 0 {
		return "-"
	}
	return time.Duration(ns).Round(100 * time.Microsecond).String()
}

func mibText(b float64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fMiB", b/(1<<20))
}

func kibText(b float64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fKiB", b/1024)
}
