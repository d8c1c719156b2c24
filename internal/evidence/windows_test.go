package evidence

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The window index finds exactly the windows a plain scan finds, for
// windows nested, overlapping, open-ended, empty (completed before they
// started) and sharing ends, at times on and between their ends.
func TestWindowIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for round := range 200 {
		calls := make([]ToolCall, r.IntN(300))
		for i := range calls {
			start := uint64(r.IntN(1000))
			calls[i] = ToolCall{StartedMonoNS: start}
			switch r.IntN(4) {
			case 0: // open to the end of the run
			case 1: // completed before it started (or at 0 both): at most [0, 0]
				calls[i].Completed, calls[i].CompletedMonoNS = true, start-min(start, uint64(1+r.IntN(5)))
			default:
				calls[i].Completed, calls[i].CompletedMonoNS = true, start+uint64(r.IntN(200))
			}
		}
		x := newWindowIndex(calls)
		for range 300 {
			ts := uint64(r.IntN(1300))
			var got, want []int
			x.each(ts, func(c int) { got = append(got, c) })
			for i, c := range calls {
				end := ^uint64(0)
				if c.Completed {
					end = c.CompletedMonoNS
				}
				if c.StartedMonoNS <= ts && ts <= end && c.StartedMonoNS <= end {
					want = append(want, i)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %d windows, time %d: found %v, want %v", round, len(calls), ts, got, want)
			}
		}
	}
}
