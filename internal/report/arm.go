package report

import (
	"sort"

	"vigil/internal/wire"

	"vigil/internal/stats"
)

// excluded reports whether a sample is a warm-up (never used for anything
// but a count).
func excluded(s *wire.Sample) bool { return s.Warmup || s.Block < 0 }

// reasonOf names why an invalid sample was discarded.
func reasonOf(s *wire.Sample) string {
	if s.InvalidReason != "" {
		return s.InvalidReason
	}
	return "invalid (no reason recorded)"
}

// buildArm selects the samples of one cell and arm label. For each block
// the valid sample with the lowest attempt is used; invalid samples are
// counted by reason, warm-ups are counted and excluded.
func buildArm(r *run, cell, arm string, kind wire.ArmKind, conf float64) *armData {
	a := &armData{ArmSummary: &wire.ArmSummary{Arm: arm, ArmKind: kind, Planned: r.planned(), ByReason: map[string]int{}, Blocks: []wire.BlockSample{}},
		byBlock: map[int]*wire.Sample{}}
	for i := range r.samples {
		s := &r.samples[i]
		if s.Cell != cell || s.Arm != arm {
			continue
		}
		if excluded(s) {
			a.Warmup++
			continue
		}
		a.Measured++
		if !s.Valid {
			a.Discarded++
			a.ByReason[reasonOf(s)]++
			continue
		}
		if prev, ok := a.byBlock[s.Block]; ok {
			a.Superseded++
			if prev.Attempt <= s.Attempt {
				continue
			}
		}
		a.byBlock[s.Block] = s
	}
	a.Valid = len(a.byBlock)
	a.Incomplete = a.Valid < a.Planned
	if a.Valid == 0 {
		return a
	}
	var wall, cpu, rss, peak, trace, arch, ext, written []float64
	for _, b := range a.blocks() {
		s := a.byBlock[b]
		a.Blocks = append(a.Blocks, wire.BlockSample{Block: b, ID: s.ID, WallNS: s.WallNS, UserNS: s.UserNS, SysNS: s.SysNS, MaxRSSBytes: s.MaxRSSBytes,
			TreePeakBytes: max(s.TreePeakBytes, -1), TraceBytes: s.Artifacts.TraceBytes, ArchiveBytes: s.Artifacts.ArchiveBytes})
		written = append(written, float64(s.Artifacts.TraceBytes+s.Artifacts.ArchiveBytes))
		wall = append(wall, float64(s.WallNS))
		cpu = append(cpu, float64(s.UserNS+s.SysNS))
		rss = append(rss, float64(s.MaxRSSBytes))
		if s.TreePeakBytes >= 0 {
			peak = append(peak, float64(s.TreePeakBytes))
		}
		trace = append(trace, float64(s.Artifacts.TraceBytes))
		arch = append(arch, float64(s.Artifacts.ArchiveBytes))
		ext = append(ext, float64(s.Artifacts.ArchiveExtractedBytes))
	}
	a.Wall = dist(wall, conf)
	a.CPU = dist(cpu, conf)
	a.MaxRSS = mem(rss, conf)
	a.TreePeak = mem(peak, conf)
	a.Artifacts = &wire.Artifacts{TraceBytes: stats.Median(trace), ArchiveBytes: stats.Median(arch), ArchiveExtractedBytes: stats.Median(ext), Written: *mem(written, conf)}
	return a
}

// armData is an arm's summary with the samples behind it, for the
// analysis only.
type armData struct {
	*wire.ArmSummary
	// byBlock maps block index to the chosen valid sample.
	byBlock map[int]*wire.Sample
}

// blocks returns the blocks with a valid sample, ascending.
func (a *armData) blocks() []int {
	out := make([]int, 0, len(a.byBlock))
	for b := range a.byBlock {
		out = append(out, b)
	}
	sort.Ints(out)
	return out
}

func dist(xs []float64, conf float64) *wire.Dist {
	if len(xs) == 0 {
		return nil
	}
	d := &wire.Dist{N: len(xs), Quartiles: quartiles(xs)}
	d.Median = estOf(stats.MedianCI(xs, conf))
	d.P95 = stats.Quantile(xs, 0.95)
	d.P99 = stats.Quantile(xs, 0.99)
	d.P95FromMax = stats.QuantileFromMax(len(xs), 0.95)
	d.P99FromMax = stats.QuantileFromMax(len(xs), 0.99)
	d.MAD = stats.MAD(xs)
	d.Min = stats.Quantile(xs, 0)
	d.Max = stats.Quantile(xs, 1)
	d.TailRatio, d.TailBand = stats.TailRatio(xs)
	return d
}

func mem(xs []float64, conf float64) *wire.MemStat {
	if len(xs) == 0 {
		return nil
	}
	return &wire.MemStat{N: len(xs), Median: estOf(stats.MedianCI(xs, conf)), Max: stats.Quantile(xs, 1), Min: stats.Quantile(xs, 0), Quartiles: quartiles(xs)}
}

func quartiles(xs []float64) [3]float64 {
	return [3]float64{stats.Quantile(xs, 0.25), stats.Quantile(xs, 0.5), stats.Quantile(xs, 0.75)}
}
