package report

import (
	"encoding/json"
	"fmt"

	"vigil/internal/stats"
)

// BMFMeasure is one Bencher Metric Format measure.
type BMFMeasure struct {
	Value      float64 `json:"value"`
	LowerValue float64 `json:"lower_value"`
	UpperValue float64 `json:"upper_value"`
}

// bmfOf turns a median interval into a BMF measure; an unbounded end
// (too few samples) falls back to the sample minimum or maximum so that
// lower_value <= value <= upper_value always holds.
func bmfOf(xs []float64, conf float64) BMFMeasure {
	iv := stats.MedianCI(xs, conf)
	lo, hi := iv.Lo, iv.Hi
	if !iv.Bounded() {
		lo, hi = stats.Quantile(xs, 0), stats.Quantile(xs, 1)
	}
	return BMFMeasure{Value: iv.Est, LowerValue: min(lo, iv.Est), UpperValue: max(hi, iv.Est)}
}

// benchName names a cell/arm; runs are prefixed when there are several so
// that names never collide across host classes.
func benchName(s *Summary, r *Run, cell, arm string) string {
	if len(s.Runs) == 1 {
		return cell + "/" + arm
	}
	return fmt.Sprintf("%s/seed=%d/%s/%s", r.HostClass, r.Seed, cell, arm)
}

// renderBMF writes bmf.json: benchmark -> measure -> {value, lower_value,
// upper_value}. latency is wall time in ns, file-size the artifacts
// written per sample (trace + archive) in bytes, peak-rss the largest
// single process in bytes; each is the median with its interval.
func renderBMF(s *Summary) ([]byte, error) {
	out := map[string]map[string]BMFMeasure{}
	for _, r := range s.Runs {
		for _, cs := range r.Cells {
			for _, a := range cs.Arms {
				if a.Valid == 0 {
					continue
				}
				var size []float64
				for _, b := range a.blocks() {
					sm := a.byBlock[b]
					size = append(size, float64(sm.Artifacts.TraceBytes+sm.Artifacts.ArchiveBytes))
				}
				out[benchName(s, r, cs.Name, a.Arm)] = map[string]BMFMeasure{
					"latency":   bmfOf(a.Wall.values, s.Options.Confidence),
					"file-size": bmfOf(size, s.Options.Confidence),
					"peak-rss":  bmfOf(a.MaxRSS.values, s.Options.Confidence),
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
