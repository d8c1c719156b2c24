package stats

import (
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// SignedRankExactLimit is the largest number of non-zero differences for
// which the exact signed-rank distribution is used (as in R's wilcox.test);
// above it, or when |differences| are tied or zero, the normal approximation
// with tie and continuity correction is used.
const SignedRankExactLimit = 50

// SignedRankResult is the Hodges–Lehmann estimate of the location of
// paired differences with its Wilcoxon signed-rank confidence interval and
// the two-sided signed-rank p-value for "location = 0".
type SignedRankResult struct {
	Interval
	N       int     // differences used for the estimate and interval
	NonZero int     // differences used for the test (zeros removed)
	V       float64 // sum of ranks of the positive differences
	P       float64 // two-sided p-value
	Exact   bool    // exact distribution (else normal approximation)
	// Requested is the confidence asked for; Interval.Confidence is what
	// the chosen order statistics achieve. When n is so small that even
	// the widest interval [min, max] of the Walsh averages covers less
	// than Requested, that is reported rather than hidden.
	Requested float64
}

// Achieved reports whether the interval reaches the requested confidence.
func (r SignedRankResult) Achieved() bool { return r.Confidence >= r.Requested-1e-9 }

// SignedRank computes the Hodges–Lehmann estimate (median of the Walsh
// averages (d_i+d_j)/2, i<=j), its Wilcoxon signed-rank interval and the
// signed-rank test for the differences d.
//
// Interval: with M = n(n+1)/2 sorted Walsh averages W, the interval is
// [W_(k), W_(M+1-k)] where k is the lower alpha/2 quantile of the
// signed-rank statistic (exact distribution; for large n or ties,
// k = floor(M/2 - z_{1-alpha/2} sqrt(n(n+1)(2n+1)/24))). Zeros take part in
// the estimate and interval (Hodges–Lehmann on all differences) but are
// dropped from the test statistic (Wilcoxon's zero method, as R does).
func SignedRank(d []float64, confidence float64) SignedRankResult {
	n := len(d)
	res := SignedRankResult{N: n, Requested: confidence, P: 1}
	if n == 0 {
		res.Interval = Interval{Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
		return res
	}
	w := walshAverages(d)
	m := len(w)
	res.Est = medianSorted(w)

	nz, ranks, tied := rankAbsNonZero(d)
	res.NonZero = len(nz)
	for i, x := range nz {
		if x > 0 {
			res.V += ranks[i]
		}
	}
	res.Exact = len(nz) == n && !tied && n <= SignedRankExactLimit

	alpha := 1 - confidence
	var k int // 1-based lower order statistic
	if res.Exact {
		cdf := signedRankCDF(n)
		// Smallest q with P(T <= q) >= alpha/2, as R's qsignrank.
		q := 0
		for q < len(cdf) && cdf[q] < alpha/2 {
			q++
		}
		if q == 0 {
			q = 1
		}
		k = q
		res.Confidence = 1 - 2*cdf[k-1]
		lo := cdf[int(res.V)]
		hi := 1.0
		if int(res.V) > 0 {
			hi = 1 - cdf[int(res.V)-1]
		}
		res.P = math.Min(1, 2*math.Min(lo, hi))
	} else {
		nn := float64(n)
		z := mstats.StdNormal.InvCDF(1 - alpha/2)
		k = int(math.Floor(float64(m)/2 - z*math.Sqrt(nn*(nn+1)*(2*nn+1)/24)))
		if k < 1 {
			k = 1
		}
		res.Confidence = confidence
		if k == 1 {
			// The widest interval; its coverage under the approximation.
			res.Confidence = math.Min(confidence, approxCoverage(n, m))
		}
		res.P = signedRankNormalP(res.V, len(nz), ranks)
	}
	res.Lo, res.Hi = w[k-1], w[m-k]
	return res
}

// approxCoverage is the normal-approximation coverage of [W_(1), W_(M)].
func approxCoverage(n, m int) float64 {
	nn := float64(n)
	sd := math.Sqrt(nn * (nn + 1) * (2*nn + 1) / 24)
	z := (float64(m)/2 - 0.5) / sd
	return 1 - 2*mstats.StdNormal.CDF(-z)
}

// signedRankNormalP is R's normal approximation: tie-corrected variance
// and a continuity correction of 0.5 toward the mean.
func signedRankNormalP(v float64, n int, ranks []float64) float64 {
	if n == 0 {
		return 1
	}
	nn := float64(n)
	z := v - nn*(nn+1)/4
	ties := map[float64]float64{}
	for _, r := range ranks {
		ties[r]++
	}
	var tc float64
	for _, t := range ties {
		tc += t*t*t - t
	}
	sigma := math.Sqrt(nn*(nn+1)*(2*nn+1)/24 - tc/48)
	if sigma == 0 {
		return 1
	}
	corr := 0.0
	if z > 0 {
		corr = 0.5
	} else if z < 0 {
		corr = -0.5
	}
	z = (z - corr) / sigma
	p := 2 * math.Min(mstats.StdNormal.CDF(z), 1-mstats.StdNormal.CDF(z))
	return math.Min(1, p)
}

// signedRankCDF returns P(T <= t) for t = 0..n(n+1)/2 under the null, by
// counting the subsets of {1..n} with each rank sum (exact in float64 for
// n <= 50 since 2^50 < 2^53).
func signedRankCDF(n int) []float64 {
	m := n * (n + 1) / 2
	cnt := make([]float64, m+1)
	cnt[0] = 1
	for r := 1; r <= n; r++ {
		for s := m; s >= r; s-- {
			cnt[s] += cnt[s-r]
		}
	}
	total := math.Ldexp(1, n)
	cdf := make([]float64, m+1)
	acc := 0.0
	for s := range cnt {
		acc += cnt[s]
		cdf[s] = acc / total
	}
	return cdf
}

func walshAverages(d []float64) []float64 {
	n := len(d)
	w := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	sortFloats(w)
	return w
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rankAbsNonZero drops zeros and returns the remaining values with the
// average ranks of their absolute values, and whether any ranks are tied.
func rankAbsNonZero(d []float64) (nz, ranks []float64, tied bool) {
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	abs := make([]float64, len(nz))
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	ranks, tied = averageRanks(abs)
	return nz, ranks, tied
}

// HodgesLehmann returns the median of the Walsh averages of d.
func HodgesLehmann(d []float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	return medianSorted(walshAverages(d))
}
