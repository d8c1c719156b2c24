package stats

import (
	"math"
	"testing"
)

func TestOBFSpent(t *testing.T) {
	for _, c := range []struct{ t, want float64 }{
		{0, 0},
		{1, 0.05},
		// Known values of the O'Brien–Fleming-type spending at alpha 0.05.
		{0.5, 0.00557},
		{0.25, 0.0000889},
	} {
		if got := OBFSpent(0.05, c.t); math.Abs(got-c.want) > 2e-5 {
			t.Errorf("OBFSpent(0.05, %v) = %.6f, want %.6f", c.t, got, c.want)
		}
	}
	prev := 0.0
	for k := 1; k <= 20; k++ {
		s := OBFSpent(0.05, float64(k)/20)
		if s <= prev {
			t.Fatalf("spending not rising at %d/20: %v after %v", k, s, prev)
		}
		prev = s
	}
}

func TestLookAlphas(t *testing.T) {
	a, err := LookAlphas(0.05, []int{6, 12, 18, 24}, 24)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i, v := range a {
		if v <= 0 || (i > 0 && v <= a[i-1]) {
			t.Errorf("look %d level %v: want positive and rising (OBF spends late)", i+1, v)
		}
		sum += v
	}
	if math.Abs(sum-0.05) > 1e-9 {
		t.Errorf("levels sum to %v, want 0.05 at the last look", sum)
	}
	for _, bad := range [][]int{{6, 6}, {12, 6}, {6, 30}} {
		if _, err := LookAlphas(0.05, bad, 24); err == nil {
			t.Errorf("looks %v accepted", bad)
		}
	}
	if _, err := LookAlphas(0, []int{6}, 24); err == nil {
		t.Error("alpha 0 accepted")
	}
}
