package render

import (
	"encoding/json"
	"fmt"

	"vigil/internal/wire"
)

// bmfMeasure is one Bencher Metric Format measure.
type bmfMeasure struct {
	Value      float64 `json:"value"`
	LowerValue float64 `json:"lower_value"`
	UpperValue float64 `json:"upper_value"`
}

// bmfOf turns a median with its interval into a BMF measure; an unbounded
// end (too few samples) falls back to the sample minimum or maximum so
// that lower_value <= value <= upper_value always holds.
func bmfOf(m wire.MemStat) bmfMeasure {
	lo, hi := m.Min, m.Max
	if m.Median.Bounded() {
		lo, hi = m.Median.Lo(), m.Median.Hi()
	}
	return bmfMeasure{Value: m.Median.Value, LowerValue: min(lo, m.Median.Value), UpperValue: max(hi, m.Median.Value)}
}

// benchName names a cell/arm; runs are prefixed when there are several so
// that names never collide across host classes.
func benchName(s *wire.Summary, r *wire.RunSummary, cell, arm string) string {
	if len(s.Runs) == 1 {
		return cell + "/" + arm
	}
	return fmt.Sprintf("%s/seed=%d/%s/%s", r.HostClass, r.Seed, cell, arm)
}

// BMF writes bmf.json: benchmark -> measure -> {value, lower_value,
// upper_value}. latency is wall time in ns, file-size the artifacts
// written per sample (trace + archive) in bytes, peak-rss the largest
// single process in bytes; each is the median with its interval.
func BMF(s *wire.Summary) ([]byte, error) {
	out := map[string]map[string]bmfMeasure{}
	for _, r := range s.Runs {
		for _, cs := range r.Cells {
			for _, a := range cs.Arms {
				if a.Valid == 0 {
					continue
				}
				w := a.Wall
				out[benchName(s, r, cs.Name, a.Arm)] = map[string]bmfMeasure{
					"latency":   bmfOf(wire.MemStat{N: w.N, Median: w.Median, Min: w.Min, Max: w.Max}),
					"file-size": bmfOf(a.Artifacts.Written),
					"peak-rss":  bmfOf(*a.MaxRSS),
				}
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bmf.json: %v", err)
	}
	return append(b, '\n'), nil
}
