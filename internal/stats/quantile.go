package stats

import "math"

// Quantile returns the p-quantile of xs by linear interpolation between
// order statistics, Hyndman & Fan (1996) definition 7 (R's default, numpy's
// "linear", Python's statistics.quantiles method="inclusive"):
// h = (n-1)p, Q = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
func Quantile(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	s := sortedCopy(xs)
	return quantileSorted(s, p)
}

func quantileSorted(s []float64, p float64) float64 {
	n := len(s)
	if p <= 0 {
		return s[0]
	}
	if p >= 1 {
		return s[n-1]
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return s[n-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// QuantileFromMax reports whether, at sample size n, the type-7 p-quantile
// is interpolated between the two largest observations, i.e. it is decided
// by the sample maximum rather than by the tail shape. That holds when
// (n-1)p > n-2, i.e. n < (2-p)/(1-p): n < 21 for p95 and n < 101 for p99.
// Such a percentile must be read as "about the maximum", not as a tail
// estimate.
func QuantileFromMax(n int, p float64) bool {
	if n <= 1 {
		return true
	}
	return float64(n-1)*p > float64(n-2)
}

// MinNForQuantile is the smallest n at which QuantileFromMax(n, p) is false.
func MinNForQuantile(p float64) int {
	n := 2
	for QuantileFromMax(n, p) {
		n++
	}
	return n
}

// MAD is the median absolute deviation from the median, unscaled (multiply
// by 1.4826 for a normal-consistent estimate of sigma).
func MAD(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := Median(xs)
	d := make([]float64, len(xs))
	for i, x := range xs {
		d[i] = math.Abs(x - m)
	}
	return Median(d)
}
