package report

import (
	"fmt"
	"sort"
	"strings"

	"vigil/internal/interference"

	"vigil/internal/stats"
)

// highShare is the share of contended samples, and highForeign the
// fraction of the gate reached by the median foreign load of the samples
// used, past which a cell's interference counts as high: its verdicts may
// describe the host rather than the arms.
const (
	highShare   = 0.25
	highForeign = 0.5
)

// CellInterference is what the host did besides one cell's samples.
type CellInterference struct {
	// Measured counts the cell's non-warm-up samples with an interference
	// record; Contended those that failed the gate (and were re-measured).
	Measured  int `json:"measured"`
	Contended int `json:"contended"`
	// UsedOver counts samples the statistics use whose foreign load was
	// over the gate anyway (the gate was off, or looser than the default).
	UsedOver int `json:"used_over_gate"`
	// UsedMedianForeignCPUs and UsedMaxForeignCPUs describe the valid
	// samples the statistics use (-1: no figure).
	UsedMedianForeignCPUs float64 `json:"used_median_foreign_cpus"`
	UsedMaxForeignCPUs    float64 `json:"used_max_foreign_cpus"`
	// High says the cell's interference stayed high (see Why).
	High bool   `json:"high"`
	Why  string `json:"why,omitempty"`
	// Points are every measured sample in time order, for the plot.
	Points []InterferencePoint `json:"points"`
}

// InterferencePoint is one sample on the interference-over-time plot.
type InterferencePoint struct {
	Seconds     float64  `json:"t_s"` // since the run's first sample
	Arm         string   `json:"arm"`
	ArmKind     string   `json:"arm_kind"`
	WallNS      int64    `json:"wall_ns"`
	ForeignCPUs *float64 `json:"foreign_cpus"`
	Contended   bool     `json:"contended"`
	Valid       bool     `json:"valid"`
}

// cellInterference summarizes the interference records of a cell's
// samples; nil when none has one (samples of older versions).
func cellInterference(r *run, cell string, arms []*ArmSummary, gate float64) *CellInterference {
	var t0 int64
	for i := range r.samples {
		if s := &r.samples[i]; t0 == 0 || s.StartUnixNS < t0 {
			t0 = s.StartUnixNS
		}
	}
	ci := &CellInterference{Points: []InterferencePoint{}, UsedMedianForeignCPUs: -1, UsedMaxForeignCPUs: -1}
	for i := range r.samples {
		s := &r.samples[i]
		if s.Cell != cell || excluded(s) || s.Interference == nil {
			continue
		}
		ci.Measured++
		if s.Contended {
			ci.Contended++
		}
		ci.Points = append(ci.Points, InterferencePoint{Seconds: float64(s.StartUnixNS-t0) / 1e9, Arm: s.Arm, ArmKind: s.ArmKind,
			WallNS: s.WallNS, ForeignCPUs: s.Interference.ForeignCPUs, Contended: s.Contended, Valid: s.Valid})
	}
	if ci.Measured == 0 {
		return nil
	}
	sort.SliceStable(ci.Points, func(i, j int) bool { return ci.Points[i].Seconds < ci.Points[j].Seconds })
	var used []float64
	limit := gate
	if limit <= 0 || limit > interference.DefaultMaxForeignCPUs {
		limit = interference.DefaultMaxForeignCPUs
	}
	for _, a := range arms {
		for _, b := range a.blocks() {
			if in := a.byBlock[b].Interference; in != nil && in.ForeignCPUs != nil {
				used = append(used, *in.ForeignCPUs)
				if interference.Over(in, limit) {
					ci.UsedOver++
				}
			}
		}
	}
	if len(used) > 0 {
		ci.UsedMedianForeignCPUs = stats.Median(used)
		sort.Float64s(used)
		ci.UsedMaxForeignCPUs = used[len(used)-1]
	}
	share := float64(ci.Contended) / float64(ci.Measured)
	switch {
	case share > highShare:
		ci.High = true
		ci.Why = fmt.Sprintf("%d of %d samples were contended (more than %.0f%%)", ci.Contended, ci.Measured, 100*highShare)
	case len(used) > 0 && float64(ci.UsedOver)/float64(len(used)) > highShare:
		ci.High = true
		ci.Why = fmt.Sprintf("%d of the %d samples used ran beside more than %.2f CPUs of other work", ci.UsedOver, len(used), limit)
	case gate > 0 && ci.UsedMedianForeignCPUs > highForeign*gate:
		ci.High = true
		ci.Why = fmt.Sprintf("the samples used ran beside a median %.2f CPUs of other work (over half the gate of %.2f)", ci.UsedMedianForeignCPUs, gate)
	case gate == 0 && ci.UsedMedianForeignCPUs > highForeign:
		ci.High = true
		ci.Why = fmt.Sprintf("the samples used ran beside a median %.2f CPUs of other work, with the interference gate off", ci.UsedMedianForeignCPUs)
	}
	return ci
}

// interferenceFinding reports the host's state and interference per cell.
func interferenceFinding(r *Run) (Finding, bool) {
	var ev, high []string
	if h := r.HostState; h != nil {
		for _, w := range h.Warnings {
			ev = append(ev, "host before the run: "+w)
		}
	}
	any := false
	contended := 0
	for _, cs := range r.Cells {
		ci := cs.Interference
		if ci == nil {
			continue
		}
		any = true
		contended += ci.Contended
		line := fmt.Sprintf("cell %s: %d of %d measured samples contended and re-measured; samples used: median %s, max %s CPUs busy outside them, %d over the gate",
			cs.Name, ci.Contended, ci.Measured, figureOr(ci.UsedMedianForeignCPUs), figureOr(ci.UsedMaxForeignCPUs), ci.UsedOver)
		if ci.High {
			line += " — HIGH: " + ci.Why
			high = append(high, cs.Name)
		}
		ev = append(ev, line)
	}
	if !any {
		return Finding{}, false
	}
	gate := "off"
	if r.MaxForeignCPUs > 0 {
		gate = fmt.Sprintf("%.2f CPUs", r.MaxForeignCPUs)
	}
	claim := fmt.Sprintf("Host interference (gate %s): %s contended and re-measured; interference stayed low in every cell.", gate, plural(contended, "sample was", "samples were"))
	if len(high) > 0 {
		claim = fmt.Sprintf("Host interference (gate %s): %s contended; interference stayed HIGH in %s, so wall-time verdicts there may describe the host rather than the arms.", gate, plural(contended, "sample was", "samples were"), strings.Join(high, ", "))
	}
	return Finding{
		Title:    "Host interference",
		Claim:    claim,
		Evidence: ev,
		NonClaims: []string{
			"Foreign CPU is host busy time (10 ms ticks) minus the sample's own CPU: it sees other processes, not cache, memory-bandwidth or thermal effects.",
		},
	}, true
}

// highCells lists the cells whose interference stayed high.
func highCells(r *Run) []string {
	var out []string
	for _, cs := range r.Cells {
		if cs.Interference != nil && cs.Interference.High {
			out = append(out, cs.Name)
		}
	}
	return out
}

func figureOr(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}
