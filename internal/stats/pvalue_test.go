package stats

import (
	"math/rand"
	"testing"
)

// TestPValuesAreProbabilities guards against tail sums that round past 1
// (seen with the doubled two-sided U-test p on tied, near-identical data).
func TestPValuesAreProbabilities(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := 0; trial < 2000; trial++ {
		n1, n2 := 3+rng.Intn(20), 3+rng.Intn(20)
		x := make([]float64, n1)
		y := make([]float64, n2)
		for i := range x {
			x[i] = float64(rng.Intn(5))
		}
		for i := range y {
			y[i] = float64(rng.Intn(5))
		}
		if p := MannWhitney(x, y).P; p < 0 || p > 1 {
			t.Fatalf("trial %d: Mann-Whitney p = %v outside [0,1] for %v vs %v", trial, p, x, y)
		}
		d := make([]float64, n1)
		for i := range d {
			d[i] = float64(rng.Intn(7) - 3)
		}
		if p := SignedRank(d, 0.95).P; p < 0 || p > 1 {
			t.Fatalf("trial %d: signed-rank p = %v outside [0,1] for %v", trial, p, d)
		}
	}
}
