package stats

import (
	"math"
	"sort"
)

// averageRanks returns 1-based ranks of xs, ties sharing their average
// rank, and whether any tie occurred.
func averageRanks(xs []float64) (ranks []float64, tied bool) {
	n := len(xs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		if j > i {
			tied = true
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		i = j + 1
	}
	return ranks, tied
}

// spearmanExactMax is the largest n whose Spearman p-value is computed by
// enumerating all n! orders (40320 at n = 8).
const spearmanExactMax = 8

// Spearman returns Spearman's rank correlation between x and y (Pearson
// correlation of average ranks) and a two-sided p-value: for n <= 8 the
// exact permutation probability of |rho| at least as large (ties kept as
// average ranks); above, the t approximation t = rho*sqrt((n-2)/(1-rho^2))
// with n-2 degrees of freedom, which at small n is far off and at |rho| = 1
// would give p = 0. n < 3 gives rho 0 and p 1.
func Spearman(x, y []float64) (rho, p float64) {
	n := len(x)
	if n != len(y) || n < 3 {
		return 0, 1
	}
	rx, _ := averageRanks(x)
	ry, _ := averageRanks(y)
	rho = pearson(rx, ry)
	if math.IsNaN(rho) {
		return 0, 1
	}
	if n <= spearmanExactMax {
		return rho, spearmanPermP(rx, ry, math.Abs(rho))
	}
	if math.Abs(rho) >= 1 {
		return rho, 0
	}
	df := float64(n - 2)
	t := rho * math.Sqrt(df/(1-rho*rho))
	return rho, 2 * studentTSF(math.Abs(t), df)
}

// spearmanPermP is the share of the n! orders of ry whose |rho| with rx
// reaches obs (within rounding).
func spearmanPermP(rx, ry []float64, obs float64) float64 {
	perm := append([]float64(nil), ry...)
	hits, total := 0, 0
	var walk func(k int)
	walk = func(k int) {
		if k == len(perm) {
			total++
			if r := pearson(rx, perm); !math.IsNaN(r) && math.Abs(r) >= obs-1e-9 {
				hits++
			}
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			walk(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	walk(0)
	return math.Min(1, float64(hits)/float64(total))
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// TheilSen returns the Theil–Sen slope of y against x: the median of the
// pairwise slopes (y_j-y_i)/(x_j-x_i) over pairs with x_i != x_j.
func TheilSen(x, y []float64) float64 {
	var s []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[j] != x[i] {
				s = append(s, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	if len(s) == 0 {
		return 0
	}
	return Median(s)
}
