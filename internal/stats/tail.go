package stats

// Tail band names for the p99/median ratio.
const (
	BandHealthy = "healthy" // ratio < 1.5
	BandWarning = "warning" // 1.5 <= ratio <= 2.0
	BandFail    = "fail"    // ratio > 2.0
)

// TailRatio returns p99/median of xs (type-7 quantiles) and its band.
func TailRatio(xs []float64) (ratio float64, band string) {
	m := Median(xs)
	if len(xs) == 0 || m == 0 {
		return 0, ""
	}
	ratio = Quantile(xs, 0.99) / m
	return ratio, TailBand(ratio)
}

// TailBand classifies a p99/median ratio: healthy below 1.5, warning from
// 1.5 to 2.0 inclusive, fail above 2.0.
func TailBand(ratio float64) string {
	switch {
	case ratio < 1.5:
		return BandHealthy
	case ratio <= 2.0:
		return BandWarning
	default:
		return BandFail
	}
}
