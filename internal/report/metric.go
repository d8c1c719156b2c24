package report

import (
	"vigil/internal/report/model"
	"vigil/internal/wire"
)

// metric extracts one number from a sample for paired statistics.
type metric struct {
	name model.Metric
	unit model.Unit
	get  func(*wire.Sample) (float64, bool)
}

var (
	metricWall = metric{model.MetricWall, model.UnitNS, func(s *wire.Sample) (float64, bool) { return float64(s.WallNS), true }}
	metricCPU  = metric{model.MetricCPU, model.UnitNS, func(s *wire.Sample) (float64, bool) { return float64(s.UserNS + s.SysNS), true }}
	metricRSS  = metric{model.MetricMaxRSS, model.UnitBytes, func(s *wire.Sample) (float64, bool) { return float64(s.MaxRSSBytes), true }}
	metricPeak = metric{model.MetricTreePeak, model.UnitBytes, func(s *wire.Sample) (float64, bool) {
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
