package stats_test

import (
	"fmt"

	"vigil/internal/stats"
)

func ExampleMedian() {
	fmt.Println(stats.Median([]float64{50, 53, 51, 70, 52}))
	// Output: 52
}

// A median with a distribution-free interval from order statistics: the
// achieved confidence is at least the requested one.
func ExampleMedianCI() {
	wallMS := []float64{50.2, 50.9, 51.1, 50.4, 52.8, 50.7, 51.3, 50.5, 50.8, 51.0}
	iv := stats.MedianCI(wallMS, 0.95)
	fmt.Printf("median %.2f ms, [%.2f, %.2f] at %.1f%%\n", iv.Est, iv.Lo, iv.Hi, 100*iv.Confidence)
	// Output: median 50.85 ms, [50.40, 51.30] at 97.9%
}

func ExampleTailRatio() {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = 10
	}
	for i := 95; i < 100; i++ {
		xs[i] = 25 // one slow run in twenty
	}
	ratio, band := stats.TailRatio(xs)
	fmt.Printf("p99/median %.1f (%s)\n", ratio, band)
	// Output: p99/median 2.5 (fail)
}

func ExampleMannWhitney() {
	bare := []float64{50, 51, 52, 53, 54, 55}
	observed := []float64{56, 57, 58, 59, 60, 61}
	r := stats.MannWhitney(observed, bare)
	fmt.Printf("U=%.0f of %d pairs, p=%.4f\n", r.U, r.N1*r.N2, r.P)
	// Output: U=36 of 36 pairs, p=0.0022
}
