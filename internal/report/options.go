package report

import (
	"fmt"
	"math"
)

// Options tune the statistics. The zero value is not useful; start from
// DefaultOptions.
type Options struct {
	// Confidence is the level of every interval (default 0.95).
	Confidence float64
	// TolerancePct is the additivity tolerance as a percentage of the bare
	// arm's median for the same metric and cell (default 5).
	TolerancePct float64
	// WallFloorNS and MemFloorBytes are absolute floors for the tolerance,
	// so that a very fast or very small bare arm does not demand a
	// tolerance below what the clock or the page allocator can resolve
	// (defaults 1 ms and 1 MiB). The tolerance is max(pct*bare, floor).
	WallFloorNS   float64
	MemFloorBytes float64
	// BootstrapReps is the number of bootstrap resamples for ratio
	// intervals (default 2000); the bootstrap is seeded from the plan seed.
	BootstrapReps int
	// Alpha is the significance level of the drift test (default 0.05).
	Alpha float64
	// Version is the vigil version recorded in summary.json.
	Version string
	// Inputs are the directories the data came from (recorded only).
	Inputs []string
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		Confidence:    0.95,
		TolerancePct:  5,
		WallFloorNS:   1e6,
		MemFloorBytes: 1 << 20,
		BootstrapReps: 2000,
		Alpha:         0.05,
		Version:       "dev",
	}
}

func (o Options) check() error {
	// NaN fails no comparison below, so non-finite values are refused
	// first, by name.
	for _, v := range []struct {
		name string
		v    float64
	}{{"confidence", o.Confidence}, {"tolerance", o.TolerancePct}, {"tolerance wall floor", o.WallFloorNS}, {"tolerance memory floor", o.MemFloorBytes}, {"alpha", o.Alpha}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return fmt.Errorf("%s %v: must be a finite number", v.name, v.v)
		}
	}
	switch {
	case o.Confidence <= 0 || o.Confidence >= 1:
		return fmt.Errorf("confidence %v: must be between 0 and 1", o.Confidence)
	case o.TolerancePct < 0:
		return fmt.Errorf("tolerance %v%%: must not be negative", o.TolerancePct)
	case o.WallFloorNS < 0 || o.MemFloorBytes < 0:
		return fmt.Errorf("tolerance floors must not be negative")
	case o.BootstrapReps < 100:
		return fmt.Errorf("bootstrap reps %d: need at least 100", o.BootstrapReps)
	case o.Alpha <= 0 || o.Alpha >= 1:
		return fmt.Errorf("alpha %v: must be between 0 and 1", o.Alpha)
	}
	return nil
}
