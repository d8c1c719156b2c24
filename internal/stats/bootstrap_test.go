package stats

import "testing"

// A percentile bootstrap of a median cannot cover at the requested level
// when even [min, max] of the sample would not: with one pair every
// resample is identical and the "interval" is a point. Such samples get an
// unbounded interval, as MedianCI and SignedRank report them, rather than a
// point or near-point range presented as 95%.
func TestRatioOfMediansTooFewForConfidence(t *testing.T) {
	x := []float64{10, 11, 9, 10.5, 10.2, 9.8, 10.1}
	y := []float64{20, 22, 19, 21, 20.5, 19.5, 20.2}
	for n := 1; n <= 7; n++ {
		r := RatioOfMedians(x[:n], y[:n], true, 500, 1, 0.95)
		// [min, max] covers the median with probability 1 - 2^(1-n):
		// 0.9375 at n=5, 0.96875 at n=6.
		want := n >= 6
		if r.Bounded() != want {
			t.Errorf("n=%d: interval %+v bounded %v, want %v", n, r, r.Bounded(), want)
		}
		if n == 1 && r.Est != 2 {
			t.Errorf("n=1: estimate %v, want 2", r.Est)
		}
	}
	// Unpaired: the smaller sample decides.
	if r := RatioOfMedians(x, y[:3], false, 500, 1, 0.95); r.Bounded() {
		t.Errorf("unpaired with 3 values bounded: %+v", r)
	}
	if r := RatioOfMedians(x, y[:6], false, 500, 1, 0.95); !r.Bounded() {
		t.Errorf("unpaired 7+6 unbounded: %+v", r)
	}
}

// With few points the t approximation is far off, and at |rho| = 1 it
// gives p = 0: a perfectly monotone run of 4 blocks happens by chance in
// 2 of the 4! orders (p = 1/12), of 5 blocks in 2 of 120.
func TestSpearmanSmallNExact(t *testing.T) {
	for _, c := range []struct {
		y    []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 2.0 / 24},
		{[]float64{4, 3, 2, 1}, 2.0 / 24},
		{[]float64{1, 2, 3, 4, 5}, 2.0 / 120},
		// rho = 0.8 at n=4: permutations with |rho| >= 0.8 are the two
		// monotone ones and the 3+3 one swap away: 8 of 24.
		{[]float64{1, 2, 4, 3}, 8.0 / 24},
	} {
		x := make([]float64, len(c.y))
		for i := range x {
			x[i] = float64(i)
		}
		_, p := Spearman(x, c.y)
		near(t, "exact p", p, c.want, 1e-12)
	}
}

// BenchmarkSpearmanExact8 is the worst case of the exact permutation
// p-value (8! orders), paid once per decomposition with 8 blocks.
func BenchmarkSpearmanExact8(b *testing.B) {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	y := []float64{3, 1, 4, 1.5, 9, 2, 6, 5}
	for i := 0; i < b.N; i++ {
		Spearman(x, y)
	}
}
