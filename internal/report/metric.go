package report

import (
	"vigil/internal/wire"
)

// metric extracts one number from a sample for paired statistics.
type metric struct {
	name wire.Metric
	unit wire.Unit
	get  func(*wire.Sample) (float64, bool)
}

var (
	metricWall = metric{wire.MetricWall, wire.UnitNS, func(s *wire.Sample) (float64, bool) { return float64(s.WallNS), true }}
	metricCPU  = metric{wire.MetricCPU, wire.UnitNS, func(s *wire.Sample) (float64, bool) { return float64(s.UserNS + s.SysNS), true }}
	metricRSS  = metric{wire.MetricMaxRSS, wire.UnitBytes, func(s *wire.Sample) (float64, bool) { return float64(s.MaxRSSBytes), true }}
	metricPeak = metric{wire.MetricTreePeak, wire.UnitBytes, func(s *wire.Sample) (float64, bool) {
		return float64(s.TreePeakBytes), s.TreePeakBytes >= 0
	}}
)

// memoryMetric is tree_peak_bytes when every valid sample of the cell has
// it, else max_rss_bytes (the single-process peak from wait4).
func memoryMetric(arms []*armData) metric {
	for _, a := range arms {
		for _, s := range a.byBlock {
			if s.TreePeakBytes < 0 {
				return metricRSS
			}
		}
	}
	return metricPeak
}
