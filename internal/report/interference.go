package report

import (
	"sort"

	"vigil/internal/interference"
	"vigil/internal/stats"
	"vigil/internal/wire"
)

// highForeign is the fraction of the gate reached by the median foreign
// load of the samples used past which a cell's interference counts as
// high (as does a share of contended samples over
// wire.InterferenceHighShare): its verdicts may describe the host rather
// than the arms.
const highForeign = 0.5

// cellInterference summarizes the interference records of a cell's
// samples; nil when none has one (samples of older versions).
func cellInterference(r *run, cell string, arms []*armData, gate float64) *wire.CellInterference {
	var t0 int64
	for i := range r.samples {
		if s := &r.samples[i]; t0 == 0 || s.StartUnixNS < t0 {
			t0 = s.StartUnixNS
		}
	}
	ci := &wire.CellInterference{Points: []wire.InterferencePoint{}, UsedMedianForeignCPUs: -1, UsedMaxForeignCPUs: -1}
	for i := range r.samples {
		s := &r.samples[i]
		if s.Cell != cell || excluded(s) || s.Interference == nil {
			continue
		}
		ci.Measured++
		if s.Contended {
			ci.Contended++
		}
		ci.Points = append(ci.Points, wire.InterferencePoint{Seconds: float64(s.StartUnixNS-t0) / 1e9, Arm: s.Arm, ArmKind: s.ArmKind,
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
	ci.Used, ci.Limit = len(used), limit
	if len(used) > 0 {
		ci.UsedMedianForeignCPUs = stats.Median(used)
		sort.Float64s(used)
		ci.UsedMaxForeignCPUs = used[len(used)-1]
	}
	share := float64(ci.Contended) / float64(ci.Measured)
	switch {
	case share > wire.InterferenceHighShare:
		ci.High, ci.HighReason = true, wire.HighContendedShare
	case len(used) > 0 && float64(ci.UsedOver)/float64(len(used)) > wire.InterferenceHighShare:
		ci.High, ci.HighReason = true, wire.HighUsedOverLimit
	case gate > 0 && ci.UsedMedianForeignCPUs > highForeign*gate:
		ci.High, ci.HighReason = true, wire.HighMedianNearGate
	case gate == 0 && ci.UsedMedianForeignCPUs > highForeign:
		ci.High, ci.HighReason = true, wire.HighMedianGateOff
	}
	return ci
}
