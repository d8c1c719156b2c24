package stats

import (
	"fmt"
	"math"
)

// OBFSpent is the Lan–DeMets O'Brien–Fleming-type alpha-spending
// function: the share of a two-sided alpha spent by information fraction
// t in (0, 1], 2 − 2Φ(z_{1−α/2} / √t). It spends almost nothing early and
// all of alpha at t = 1.
func OBFSpent(alpha, t float64) float64 {
	if t <= 0 {
		return 0
	}
	t = math.Min(t, 1)
	z := normQuantile(1 - alpha/2)
	// 2 − 2Φ(x) = erfc(x/√2), without the cancellation near 0.
	return math.Erfc(z / math.Sqrt(t) / math.Sqrt2)
}

// LookAlphas returns the nominal two-sided level of each look of a
// group-sequential design: look k at n[k] blocks of at most max gets the
// alpha spent between the previous look and it. Testing each look at its
// level keeps the chance of any false verdict over all looks at or below
// alpha by the union bound, whatever the correlation between looks
// (conservative: an exact boundary would spend a little more). The last
// look spends what is left, so the levels sum to alpha when the run
// reaches max; looks must rise strictly and stay within max.
func LookAlphas(alpha float64, n []int, max int) ([]float64, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("alpha %v: want 0 < alpha < 1", alpha)
	}
	out := make([]float64, len(n))
	spent, prev := 0.0, 0
	for i, k := range n {
		if k <= prev || k > max {
			return nil, fmt.Errorf("look %d at %d blocks: looks must rise strictly and stay within %d", i+1, k, max)
		}
		s := OBFSpent(alpha, float64(k)/float64(max))
		out[i] = s - spent
		spent, prev = s, k
	}
	return out, nil
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normQuantile inverts normCDF by bisection (ample for levels used here).
func normQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if normCDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
