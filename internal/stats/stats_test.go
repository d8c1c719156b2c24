package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Reference values in this file were computed independently with
// python3 3.11 (script summarized next to each table): the statistics
// module for medians, type-7 quantiles (statistics.quantiles with
// method="inclusive") and Pearson correlation; exact distributions by brute
// force enumeration (all 2^n sign vectors for the signed-rank statistic, all
// C(n1+n2, n1) labelings for U); the binomial median interval by summing
// math.comb terms; the t tail by Simpson integration of the t density.

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (±%g)", name, got, want, tol)
	}
}

var refX = []float64{12.1, 9.8, 15.3, 11.0, 10.4, 13.7, 9.9, 14.2, 10.8, 12.6, 11.9}

func TestQuantileType7(t *testing.T) {
	// python: statistics.quantiles(x, n=100, method='inclusive')[k-1]
	for _, c := range []struct{ p, want float64 }{
		{0.25, 10.6}, {0.5, 11.9}, {0.9, 14.2}, {0.95, 14.75}, {0.99, 15.19}, {0, 9.8}, {1, 15.3},
	} {
		near(t, "Quantile", Quantile(refX, c.p), c.want, 1e-9)
	}
	if got := Quantile([]float64{4, 1, 3, 2}, 0.5); got != 2.5 {
		t.Errorf("even median = %v, want 2.5", got)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty sample must give NaN")
	}
}

func TestQuantileFromMax(t *testing.T) {
	// By hand: type 7 puts p at h=(n-1)p; it lies between the two largest
	// order statistics iff (n-1)p > n-2.
	for _, c := range []struct {
		n    int
		p    float64
		want bool
	}{
		{20, 0.95, true}, {21, 0.95, false}, {100, 0.99, true}, {101, 0.99, false}, {5, 0.5, false}, {1, 0.5, true},
	} {
		if got := QuantileFromMax(c.n, c.p); got != c.want {
			t.Errorf("QuantileFromMax(%d, %v) = %v, want %v", c.n, c.p, got, c.want)
		}
	}
	if MinNForQuantile(0.95) != 21 || MinNForQuantile(0.99) != 101 {
		t.Errorf("MinNForQuantile = %d, %d", MinNForQuantile(0.95), MinNForQuantile(0.99))
	}
}

func TestMedianMAD(t *testing.T) {
	// python: statistics.median(x) = 11.9; median(|x - 11.9|) = 1.5
	near(t, "Median", Median(refX), 11.9, 1e-12)
	near(t, "MAD", MAD(refX), 1.5, 1e-12)
}

func TestMedianCI(t *testing.T) {
	// By hand (binomial, K ~ Bin(11, 1/2) = number of observations below
	// the population median; [x(l), x(r)] covers it iff l <= K <= r-1).
	// benchmath takes the fewest K values, most probable first and
	// left-biased on ties: K in 2..8, coverage 1 - (1+11+55+11+1)/2048 =
	// 0.96142578125, i.e. [x(2), x(9)] = [9.9, 13.7]. (The symmetric choice
	// x(2)..x(10) would over-cover at 0.98828125.)
	iv := MedianCI(refX, 0.95)
	near(t, "est", iv.Est, 11.9, 1e-12)
	near(t, "lo", iv.Lo, 9.9, 1e-12)
	near(t, "hi", iv.Hi, 13.7, 1e-12)
	near(t, "confidence", iv.Confidence, 0.96142578125, 1e-9)
	// n=5: even [min, max] covers 1-2/32 = 0.9375 < 0.95, so unbounded.
	if small := MedianCI([]float64{1, 2, 3, 4, 5}, 0.95); small.Bounded() {
		t.Errorf("n=5 interval should be unbounded, got %+v", small)
	}
}

func TestTailBand(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want string
	}{{1.1, BandHealthy}, {1.4999, BandHealthy}, {1.5, BandWarning}, {2.0, BandWarning}, {2.01, BandFail}} {
		if got := TailBand(c.r); got != c.want {
			t.Errorf("TailBand(%v) = %s, want %s", c.r, got, c.want)
		}
	}
	// p99 15.19 / median 11.9 (python values above)
	r, b := TailRatio(refX)
	near(t, "ratio", r, 15.19/11.9, 1e-12)
	if b != BandHealthy {
		t.Errorf("band %s", b)
	}
}

func TestSignedRankExact(t *testing.T) {
	// python brute force over 2^12 sign vectors: V = 76, p = 0.00146484375;
	// HL = median of 78 Walsh averages = 1.6025; qsignrank(0.025, 12) = 14,
	// interval [W(14), W(65)] = [0.845, 2.11], coverage 0.95751953125.
	d := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30, -0.42, 0.19, 2.11}
	r := SignedRank(d, 0.95)
	if !r.Exact {
		t.Fatal("want exact distribution")
	}
	near(t, "V", r.V, 76, 0)
	near(t, "p", r.P, 0.00146484375, 1e-12)
	near(t, "HL", r.Est, 1.6025, 1e-12)
	near(t, "lo", r.Lo, 0.845, 1e-12)
	near(t, "hi", r.Hi, 2.11, 1e-12)
	near(t, "confidence", r.Confidence, 0.95751953125, 1e-12)
}

func TestSignedRankNormalTies(t *testing.T) {
	// python, R's formula by hand: average ranks of |d|, tie-corrected
	// variance, continuity correction: V = 186, p = 0.0025362236218429146;
	// HL = 2.5; k = floor(210/2 - 1.959964*sqrt(20*21*41/24)) = 52,
	// interval [W(52), W(159)] = [1, 3.5].
	d := []float64{3, -1, 2, 2, 5, -2, 4, 3, 1, 6, 2, -1, 3, 4, 7, 2, 1, 3, 5, -3}
	r := SignedRank(d, 0.95)
	if r.Exact {
		t.Fatal("ties must use the normal approximation")
	}
	near(t, "V", r.V, 186, 0)
	near(t, "p", r.P, 0.0025362236218429146, 1e-9)
	near(t, "HL", r.Est, 2.5, 0)
	near(t, "lo", r.Lo, 1, 0)
	near(t, "hi", r.Hi, 3.5, 0)
}

func TestSignedRankTooSmall(t *testing.T) {
	// n=5: the widest interval covers 1 - 2/32 = 0.9375 (by hand).
	r := SignedRank([]float64{1, 2, 3, 4, 5}, 0.95)
	near(t, "confidence", r.Confidence, 0.9375, 1e-12)
	if r.Achieved() {
		t.Error("0.9375 must not count as achieving 0.95")
	}
	if r.Lo != 1 || r.Hi != 5 {
		t.Errorf("interval [%v, %v], want [1, 5]", r.Lo, r.Hi)
	}
}

func TestMannWhitney(t *testing.T) {
	// python brute force over C(12,7)=792 labelings: U = 25, p = 0.26767676...
	x1 := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91}
	x2 := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r := MannWhitney(x1, x2)
	near(t, "U", r.U, 25, 0)
	near(t, "p", r.P, 0.2676767676767677, 1e-9)
	if same := MannWhitney([]float64{1, 1}, []float64{1, 1}); same.P != 1 {
		t.Errorf("equal samples p = %v", same.P)
	}
}

func TestSpearman(t *testing.T) {
	// python: Pearson of ranks = 0.9515151515151515; t tail by Simpson
	// integration: p = 2.279854920753784e-05.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	y := []float64{2.0, 1.5, 3.5, 3.0, 5.5, 4.0, 6.5, 8.0, 7.0, 9.5}
	rho, p := Spearman(x, y)
	near(t, "rho", rho, 0.9515151515151515, 1e-12)
	near(t, "p", p, 2.279854920753784e-05, 1e-8)
	// Theil–Sen by hand: slopes of y=2x+1 are all 2.
	near(t, "TheilSen", TheilSen(x, []float64{3, 5, 7, 9, 11, 13, 15, 17, 19, 21}), 2, 0)
}

// Property: shifting every difference by c moves the HL estimate and both
// interval ends by exactly c.
func TestSignedRankShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 6 + rng.IntN(60)
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.NormFloat64()*3 + rng.ExpFloat64()
		}
		c := float64(rng.IntN(2000)-1000) / 8 // exact binary fraction
		sh := make([]float64, n)
		for i := range d {
			sh[i] = d[i] + c
		}
		a, b := SignedRank(d, 0.95), SignedRank(sh, 0.95)
		near(t, "HL shift", b.Est-a.Est, c, 1e-9)
		near(t, "lo shift", b.Lo-a.Lo, c, 1e-9)
		near(t, "hi shift", b.Hi-a.Hi, c, 1e-9)
	}
}

// Property: the average interval width shrinks as n grows (about 1/sqrt(n)).
func TestIntervalsShrink(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	width := func(n int) (hl, med, boot float64) {
		const trials = 40
		for k := 0; k < trials; k++ {
			x := make([]float64, n)
			y := make([]float64, n)
			for i := range x {
				x[i] = 100 + rng.NormFloat64()*5
				y[i] = 110 + rng.NormFloat64()*5
			}
			r := SignedRank(x, 0.95)
			hl += (r.Hi - r.Lo) / trials
			m := MedianCI(x, 0.95)
			med += (m.Hi - m.Lo) / trials
			b := RatioOfMedians(x, y, true, 400, uint64(k), 0.95)
			boot += (b.Hi - b.Lo) / trials
		}
		return
	}
	h10, m10, b10 := width(10)
	h40, m40, b40 := width(40)
	h160, m160, b160 := width(160)
	if !(h40 < h10 && h160 < h40 && m40 < m10 && m160 < m40 && b40 < b10 && b160 < b40) {
		t.Fatalf("widths do not shrink: HL %v %v %v, median %v %v %v, boot %v %v %v", h10, h40, h160, m10, m40, m160, b10, b40, b160)
	}
	// Quadrupling n should roughly halve the width (0.35..0.7 allows for
	// discreteness of the order statistics).
	if r := h160 / h40; r < 0.35 || r > 0.7 {
		t.Errorf("HL width ratio n=160/n=40 = %.2f, want about 0.5", r)
	}
}

// Property: in a seeded simulation the median interval covers the true
// median at about (at least) its nominal rate, and the HL interval covers
// the true center of a symmetric distribution likewise.
func TestCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const trials = 2000
	for _, n := range []int{10, 25, 60} {
		covMed, covHL := 0, 0
		for k := 0; k < trials; k++ {
			x := make([]float64, n)
			d := make([]float64, n)
			for i := range x {
				x[i] = rng.ExpFloat64() // median ln 2
				d[i] = rng.NormFloat64() + 2
			}
			if m := MedianCI(x, 0.95); m.Lo <= math.Ln2 && math.Ln2 <= m.Hi {
				covMed++
			}
			if r := SignedRank(d, 0.95); r.Lo <= 2 && 2 <= r.Hi {
				covHL++
			}
		}
		cm, ch := float64(covMed)/trials, float64(covHL)/trials
		if cm < 0.93 || cm > 0.995 {
			t.Errorf("n=%d median CI coverage %.3f, want about 0.95", n, cm)
		}
		if ch < 0.93 || ch > 0.975 {
			t.Errorf("n=%d HL CI coverage %.3f, want about 0.95", n, ch)
		}
	}
}

func TestRatioOfMediansSeeded(t *testing.T) {
	x := []float64{10, 11, 9, 10.5, 10.2, 9.8, 10.1, 10.3}
	y := []float64{20, 22, 19, 21, 20.5, 19.5, 20.2, 20.8}
	a := RatioOfMedians(x, y, true, 1000, 42, 0.95)
	b := RatioOfMedians(x, y, true, 1000, 42, 0.95)
	if a != b {
		t.Fatalf("same seed, different result: %+v vs %+v", a, b)
	}
	// Estimate by hand: median(y)=20.35, median(x)=10.15.
	near(t, "ratio", a.Est, 20.35/10.15, 1e-12)
	if !(a.Lo <= a.Est && a.Est <= a.Hi) || a.Lo < 1.8 || a.Hi > 2.2 {
		t.Errorf("interval %+v", a)
	}
}
