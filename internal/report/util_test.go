package report

import "vigil/internal/stats"

func ivOf(est, lo, hi float64) stats.Interval {
	return stats.Interval{Est: est, Lo: lo, Hi: hi, Confidence: 0.95}
}
