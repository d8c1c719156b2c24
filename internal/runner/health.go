//go:build linux

package runner

import (
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// healthInput gathers the runner's counters for observation health.
// ids are the cgroup ids of the session tree; an event from any other
// cgroup is counted as outside the session (and still archived).
func healthInput(absent string, probes []wire.Probe, cov wire.Coverage, cr *CaptureResult, d *evidence.Digest, ids map[uint64]bool, killed int) evidence.HealthInput {
	in := evidence.HealthInput{
		CaptureAvailable:      absent == "" && cr != nil,
		AbsentReason:          absent,
		Probes:                probes,
		ChildPlacedBeforeExec: true, // clone3(CLONE_INTO_CGROUP) or no child at all
		StragglersKilled:      killed,
		Coverage:              cov,
	}
	if cr == nil {
		return in
	}
	in.Emitted = cr.Emitted
	in.Drops = cr.Drops
	in.RingFull = cr.RingFull
	in.SlotsBusy = cr.SlotsBusy
	in.AfterClose = cr.AfterClose
	in.Compat = cr.Compat
	in.Untracked = cr.Untracked
	in.IOUringUntraced = cr.IOUringUntraced
	in.DecodeErrors = cr.DecodeErrors
	in.DecodeDetail = cr.DecodeDetail
	in.ProgramMisses = cr.ProgramMisses
	in.DrainProven = cr.DrainProven
	in.DrainDetail = cr.DrainDetail
	in.OutsideEvents = d.OutsideOf(ids)
	return in
}
