package stats

import (
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// UTestResult is a two-sided Mann–Whitney U test of x against y.
type UTestResult struct {
	N1, N2 int
	U      float64 // pairs with x > y, ties counting 1/2
	P      float64
}

// MannWhitney runs the two-sided Mann–Whitney U test for unpaired samples.
// It wraps the go-moremath test that benchmath's AssumeNothing.Compare
// (benchstat's comparison) uses: exact distribution for small samples,
// normal approximation with tie and continuity correction for large ones.
// Identical samples (or all values equal) give p = 1.
func MannWhitney(x, y []float64) UTestResult {
	r, err := mstats.MannWhitneyUTest(x, y, mstats.LocationDiffers)
	if err != nil {
		u := float64(len(x)*len(y)) / 2
		return UTestResult{N1: len(x), N2: len(y), U: u, P: 1}
	}
	// The two-sided p is doubled from a tail sum and can round to just
	// above 1; a probability is clamped to [0, 1].
	return UTestResult{N1: r.N1, N2: r.N2, U: r.U, P: math.Min(1, math.Max(0, r.P))}
}
