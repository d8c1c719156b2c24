package stats

import "math"

// Interval is a point estimate with a confidence interval. Lo or Hi is
// -Inf/+Inf when the sample is too small for the requested confidence;
// Confidence is the coverage the interval actually achieves, which for
// order-statistic intervals is at least the requested level (or, where
// noted, lower when it cannot be reached).
type Interval struct {
	Est        float64
	Lo, Hi     float64
	Confidence float64
}

// Bounded reports whether both ends of the interval are finite.
func (iv Interval) Bounded() bool {
	return !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi)
}

// HalfWidth is the larger distance from the estimate to either end, the
// quantity a stopping rule scales by 1/sqrt(n).
func (iv Interval) HalfWidth() float64 {
	return math.Max(iv.Hi-iv.Est, iv.Est-iv.Lo)
}

// Excludes reports whether v lies strictly outside the interval.
func (iv Interval) Excludes(v float64) bool { return v < iv.Lo || v > iv.Hi }

func sortedCopy(xs []float64) []float64 {
	c := append([]float64(nil), xs...)
	sortFloats(c)
	return c
}
