package stats

import (
	"math"
	"math/rand/v2"
)

// RatioOfMedians returns median(y)/median(x) with a percentile bootstrap
// interval from reps resamples drawn with a PCG generator seeded by seed.
// When paired is true, x and y must have equal length and index i of both
// is resampled together (blocks stay intact); otherwise each sample is
// resampled on its own. Resamples whose median(x) is 0 are skipped.
//
// The interval is unbounded (±Inf, like MedianCI's) when the smaller
// sample has fewer values than a distribution-free median interval needs:
// if even [min, max] covers the median with probability 1 - 2^(1-n) below
// confidence (n < 6 at 95%), the bootstrap percentiles, which lie inside
// that range, cannot cover at the requested level either; at n = 1 every
// resample is identical.
func RatioOfMedians(x, y []float64, paired bool, reps int, seed uint64, confidence float64) Interval {
	nan := Interval{Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if len(x) == 0 || len(y) == 0 || (paired && len(x) != len(y)) || reps <= 0 {
		return nan
	}
	mx := Median(x)
	if mx == 0 {
		return nan
	}
	est := Median(y) / mx
	if n := min(len(x), len(y)); 1-math.Ldexp(1, 1-n) < confidence {
		return Interval{Est: est, Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: confidence}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bx := make([]float64, len(x))
	by := make([]float64, len(y))
	ratios := make([]float64, 0, reps)
	for r := 0; r < reps; r++ {
		if paired {
			for i := range bx {
				k := rng.IntN(len(x))
				bx[i], by[i] = x[k], y[k]
			}
		} else {
			for i := range bx {
				bx[i] = x[rng.IntN(len(x))]
			}
			for i := range by {
				by[i] = y[rng.IntN(len(y))]
			}
		}
		m := Median(bx)
		if m == 0 {
			continue
		}
		ratios = append(ratios, Median(by)/m)
	}
	if len(ratios) == 0 {
		return nan
	}
	a := (1 - confidence) / 2
	s := sortedCopy(ratios)
	return Interval{Est: est, Lo: quantileSorted(s, a), Hi: quantileSorted(s, 1-a), Confidence: confidence}
}
