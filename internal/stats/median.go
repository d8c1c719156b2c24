package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

func sortFloats(xs []float64) { slices.Sort(xs) }

// Median returns the sample median (mean of the two middle values for
// even n); NaN for an empty sample.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return Quantile(xs, 0.5)
}

// MedianCI returns the median and its distribution-free confidence
// interval from order statistics (binomial sampling distribution of the
// number of observations below the population median). It wraps
// benchmath.AssumeNothing, the estimator benchstat uses; the interval is
// unbounded (±Inf) when n is too small for the requested confidence
// (n < 6 at 95%).
func MedianCI(xs []float64, confidence float64) Interval {
	if len(xs) == 0 {
		return Interval{Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	s := benchmath.NewSample(append([]float64(nil), xs...), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return Interval{Est: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence}
}
