package evidence

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// HealthInput is what the runner knows at the end of a run. BuildHealth
// turns it into observation-health.json; the health document records every
// input, so verify can recompute the verdicts from it.
type HealthInput struct {
	// CaptureAvailable is false when no kernel capture ran (for example
	// --allow-absent-kernel without BPF); AbsentReason says why.
	CaptureAvailable bool
	AbsentReason     string
	Probes           []wire.Probe
	// Emitted counts, per kind, the events the kernel side reserved and
	// submitted; Drops counts, per kind, the events the kernel could not
	// emit. A nil Emitted means the capture does not report it.
	Emitted, Drops map[wire.Kind]uint64
	// RingFull, SlotsBusy and AfterClose split Drops by cause: a failed
	// ring-buffer reservation; every record slot of the CPU held by other
	// tasks; a task of the run that acted after the capture closed (it was
	// still alive outside the session cgroup). All nil means the capture
	// does not split its drops; otherwise they add up to Drops per kind.
	RingFull, SlotsBusy, AfterClose map[wire.Kind]uint64
	// Compat counts, per kind, 32-bit (compat) syscalls of the run, which
	// the capture does not decode.
	Compat map[wire.Kind]uint64
	// Untracked counts new tasks of the run the kernel could not mark as
	// such (out of memory): what they did was not captured.
	Untracked uint64
	// IOUringUntraced counts io_uring completions of the run the capture
	// never saw (IOSQE_CQE_SKIP_SUCCESS requests, CQ ring overflows).
	IOUringUntraced uint64
	// Coverage is what the capture declares it observes on this host.
	Coverage wire.Coverage
	// DecodeErrors counts ring-buffer records user space could not decode;
	// DecodeDetail describes the first one.
	DecodeErrors uint64
	DecodeDetail string
	// ReadFaults counts archived events with a part missing: a memory read
	// failed, or a path, name or argument list was longer than the
	// capture keeps; IncompleteParts counts them per part (the events'
	// Incomplete). Assemble fills both from the events.
	ReadFaults      uint64
	IncompleteParts map[string]uint64
	// ProgramMisses counts, per probe, runs the kernel skipped because
	// another BPF program was running on that CPU. The kernel counts them
	// before the cgroup filter, so they may or may not concern the session.
	ProgramMisses map[string]uint64
	// DrainProven is true when the ring buffer was shown to be empty after
	// the session cgroup emptied; DrainDetail says how (or why not).
	DrainProven bool
	DrainDetail string
	// ChildPlacedBeforeExec is true when the child joined the session
	// cgroup before it executed the command.
	ChildPlacedBeforeExec bool
	// OutsideEvents counts events whose cgroup was neither the session
	// cgroup nor a descendant. Such events are still written to the archive
	// (and counted in Counts) so nothing is lost silently.
	OutsideEvents uint64
	// StragglersKilled counts processes killed (cgroup.kill) because the
	// session cgroup did not empty within the grace period.
	StragglersKilled int
	// SessionTasks balances the tasks created in the session against
	// those that exited in it. Assemble fills it from the events.
	SessionTasks SessionTasks
	// Counts is the number of events written to the archive per kind;
	// SeqGaps the sequence numbers missing between 0 and the highest one.
	// Assemble fills both from the events.
	Counts  map[wire.Kind]uint64
	SeqGaps uint64
	// SDKPresent is true when the workload wrote an SDK log; SDKProblems
	// are the strict-ingestion problems (ReadSDKLog); SDKEvents is how many
	// events were accepted into layers/sdk.ndjson.
	SDKPresent  bool
	SDKProblems []string
	SDKEvents   int
}

// BuildHealth derives observation health from the runner's counters.
// The kernel layer is complete only when capture was available, at least
// one probe is reported and every required probe attached, nothing was
// dropped, nothing failed to decode, no string was read only in part or
// had to be made valid UTF-8, no probe run was skipped, no sequence number is missing, every emitted event
// is accounted for, the drain was proven and the cgroup correlation is
// clean.
func BuildHealth(runID string, in HealthInput) wire.Health {
	h := wire.Health{
		Schema:          wire.HealthSchema,
		RunID:           runID,
		RingbufDrops:    wire.Drops{PerKind: kindMap(in.Drops)},
		DecodeErrors:    in.DecodeErrors,
		DecodeDetail:    oneLine(in.DecodeDetail),
		ReadFaults:      in.ReadFaults,
		IncompleteParts: maps.Clone(in.IncompleteParts),
		CompatSyscalls:  kindMap(in.Compat),
		UntrackedTasks:  in.Untracked,
		IOUringUntraced: in.IOUringUntraced,
		Coverage:        normalizedCoverage(in.Coverage),
		ProgramMisses:   probeMap(in.ProgramMisses),
		SeqGaps:         in.SeqGaps,
		Drain:           wire.Drain{Proven: in.DrainProven, Detail: in.DrainDetail},
		Probes:          sortedProbes(in.Probes),
		Counts:          kindMap(in.Counts),
	}
	if in.Emitted != nil {
		h.Emitted = kindMap(in.Emitted)
	}
	if in.RingFull != nil || in.SlotsBusy != nil || in.AfterClose != nil {
		h.RingbufDrops.Causes = &wire.DropCauses{RingFull: kindMap(in.RingFull), SlotsBusy: kindMap(in.SlotsBusy), AfterClose: kindMap(in.AfterClose)}
	}
	for _, n := range h.RingbufDrops.PerKind {
		h.RingbufDrops.Total += n
	}
	h.CgroupCorrelation = buildCorrelation(in, h.Counts)
	h.KernelLayer = buildKernelLayer(in, h)
	h.SDKLayer = buildSDKLayer(in)
	return h
}

func buildCorrelation(in HealthInput, counts map[wire.Kind]uint64) wire.CgroupCorrelation {
	c := wire.CgroupCorrelation{
		ChildPlacedBeforeExec:  in.ChildPlacedBeforeExec,
		OutsideEvents:          in.OutsideEvents,
		StragglersKilled:       in.StragglersKilled,
		LeftSessionTasks:       in.SessionTasks.Left,
		LeftSessionExamples:    examples(append([]wire.TaskRef{}, in.SessionTasks.LeftExamples...)),
		EnteredSessionTasks:    in.SessionTasks.Entered,
		EnteredSessionExamples: examples(append([]wire.TaskRef{}, in.SessionTasks.EnteredExamples...)),
		MovedOutTasks:          in.SessionTasks.MovedOut,
		MovedOutExamples:       examples(append([]wire.TaskRef{}, in.SessionTasks.MovedOutExamples...)),
		JoinedTasks:            in.SessionTasks.Joined,
		JoinedExamples:         examples(append([]wire.TaskRef{}, in.SessionTasks.JoinedExamples...)),
		Reasons:                []string{},
	}
	failed := false
	if !in.ChildPlacedBeforeExec {
		failed = true
		c.Reasons = append(c.Reasons, "child was not placed in the session cgroup before exec")
	}
	if in.OutsideEvents > 0 {
		total := wire.Total(counts)
		// When nothing recorded belongs to the session, the events describe
		// some other workload: the correlation failed rather than leaked.
		if in.OutsideEvents >= total {
			failed = true
			c.Reasons = append(c.Reasons, fmt.Sprintf("all %d events came from outside the session cgroup", in.OutsideEvents))
		} else {
			c.Reasons = append(c.Reasons, fmt.Sprintf("%d of %d events came from outside the session cgroup", in.OutsideEvents, total))
		}
	}
	if in.StragglersKilled > 0 {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%d straggler process(es) killed after the grace period", in.StragglersKilled))
	}
	if n := in.SessionTasks.MovedOut; n > 0 {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%d move(s) of tasks of the run out of the session cgroup: they stayed captured (tasks are followed by descent), but the cgroup no longer held them for waiting and killing", n))
	}
	if n := in.SessionTasks.Joined; n > 0 {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%d task(s) joined the session cgroup from outside: captured from the moment they joined, not before", n))
	}
	if n := in.SessionTasks.Left; n > 0 {
		// A missing exit means a live task only when the capture lost
		// nothing; otherwise the exit may be among the lost events.
		if kernelLossless(in) {
			c.Reasons = append(c.Reasons, fmt.Sprintf("%d task(s) of the run were not seen exiting: still alive when the capture closed, and what they did afterwards was not captured", n))
		} else {
			c.Reasons = append(c.Reasons, fmt.Sprintf("%d task(s) of the run were not seen exiting: still alive when the capture closed, or their exit was lost", n))
		}
	}
	if n := in.SessionTasks.Entered; n > 0 {
		c.Reasons = append(c.Reasons, fmt.Sprintf("%d task(s) exited that were not seen created or joining: their fork was lost", n))
	}
	switch {
	case failed:
		c.Status = wire.CorrelationFailed
	case len(c.Reasons) > 0:
		c.Status = wire.CorrelationPartial
	default:
		c.Status = wire.CorrelationClean
	}
	return c
}

// kernelLossless reports whether the kernel layer lost nothing the capture
// could count: no drops, decode errors, skipped probe runs or sequence
// gaps, and a proven drain.
func kernelLossless(in HealthInput) bool {
	return wire.Total(in.Drops) == 0 && in.DecodeErrors == 0 && sumProbes(in.ProgramMisses) == 0 &&
		in.SeqGaps == 0 && in.DrainProven
}

func buildKernelLayer(in HealthInput, h wire.Health) wire.KernelLayer {
	k := wire.KernelLayer{CaptureAvailable: in.CaptureAvailable, Reasons: []string{}}
	if !in.CaptureAvailable {
		k.AbsentReason = in.AbsentReason
	}
	if !in.CaptureAvailable {
		k.Status = wire.LayerAbsent
		r := "kernel capture unavailable"
		if in.AbsentReason != "" {
			r += ": " + in.AbsentReason
		}
		k.Reasons = append(k.Reasons, r)
		return k
	}
	if len(h.Probes) == 0 {
		k.Reasons = append(k.Reasons, "no probes reported")
	}
	for _, p := range h.Probes {
		if p.Required && !p.Attached {
			r := "required probe " + p.Name + " did not attach"
			if p.Error != "" {
				r += ": " + p.Error
			}
			k.Reasons = append(k.Reasons, r)
		}
	}
	if d := h.RingbufDrops; d.Total > 0 {
		r := fmt.Sprintf("ring buffer dropped %d events (%s)", d.Total, nonZero(d.PerKind))
		if c := d.Causes; c != nil {
			r += fmt.Sprintf("; causes: ring buffer full %d, record slots busy %d, after the capture closed %d", wire.Total(c.RingFull), wire.Total(c.SlotsBusy), wire.Total(c.AfterClose))
		}
		k.Reasons = append(k.Reasons, r)
	}
	if c := h.RingbufDrops.Causes; c != nil {
		if bad := causeMismatch(h.RingbufDrops.PerKind, c); bad != "" {
			k.Reasons = append(k.Reasons, "drop causes do not add up to the drops: "+bad)
		}
	}
	if h.DecodeErrors > 0 {
		r := fmt.Sprintf("%d ring buffer records failed to decode", h.DecodeErrors)
		if h.DecodeDetail != "" {
			r += " (first: " + h.DecodeDetail + ")"
		}
		k.Reasons = append(k.Reasons, r)
	}
	if h.ReadFaults > 0 {
		k.Reasons = append(k.Reasons, readFaultReason(h.ReadFaults, h.IncompleteParts))
	}
	if n := wire.Total(h.CompatSyscalls); n > 0 {
		k.Reasons = append(k.Reasons, fmt.Sprintf("%d 32-bit (compat) syscalls of the run were counted but not decoded (%s)", n, nonZero(h.CompatSyscalls)))
	}
	if h.IOUringUntraced > 0 {
		k.Reasons = append(k.Reasons, fmt.Sprintf("%d io_uring request(s) of the run were submitted with IOSQE_CQE_SKIP_SUCCESS, completed past a full CQ ring, completed by a task not the run's (a ring torn down unreaped) or still open at the end: their completion was not recorded, so what they did may not be", h.IOUringUntraced))
	}
	if h.UntrackedTasks > 0 {
		k.Reasons = append(k.Reasons, fmt.Sprintf("%d new task(s) of the run could not be marked as such in the kernel: what they did was not captured", h.UntrackedTasks))
	}
	for _, c := range h.Coverage.Covered {
		if !c.Attached {
			k.Reasons = append(k.Reasons, "covered class "+c.Class+" has no attached hook ("+c.Hook+")")
		}
	}
	if n := sumProbes(h.ProgramMisses); n > 0 {
		k.Reasons = append(k.Reasons, fmt.Sprintf("the kernel skipped %d probe runs (%s) because another BPF program was running on the CPU; they may or may not concern the session", n, nonZeroProbes(h.ProgramMisses)))
	}
	if h.SeqGaps > 0 {
		k.Reasons = append(k.Reasons, fmt.Sprintf("%d sequence numbers missing from the archive", h.SeqGaps))
	}
	if h.Emitted != nil {
		emitted, archived := wire.Total(h.Emitted), wire.Total(h.Counts)
		if emitted != archived+h.DecodeErrors {
			k.Reasons = append(k.Reasons, fmt.Sprintf("kernel emitted %d events but the archive holds %d and %d failed to decode", emitted, archived, h.DecodeErrors))
		}
	}
	if !h.Drain.Proven {
		r := "ring buffer drain not proven empty"
		if h.Drain.Detail != "" {
			r += ": " + h.Drain.Detail
		}
		k.Reasons = append(k.Reasons, r)
	}
	if h.CgroupCorrelation.Status != wire.CorrelationClean {
		k.Reasons = append(k.Reasons, "cgroup correlation "+string(h.CgroupCorrelation.Status))
	}
	if len(k.Reasons) == 0 {
		k.Status = wire.LayerComplete
	} else {
		k.Status = wire.LayerPartial
	}
	return k
}

func buildSDKLayer(in HealthInput) wire.SDKLayer {
	s := wire.SDKLayer{Events: in.SDKEvents, Problems: append([]string{}, in.SDKProblems...)}
	switch {
	case len(in.SDKProblems) > 0:
		s.Status = wire.SDKInvalid
	case in.SDKEvents > 0:
		s.Status = wire.SDKComplete
	default:
		// An SDK log that exists but holds no events says nothing: absent.
		s.Status = wire.SDKAbsent
	}
	return s
}

// InputOf recovers the HealthInput a health document was built from, so
// the document's verdicts can be recomputed and compared.
func InputOf(h wire.Health) HealthInput {
	in := HealthInput{
		CaptureAvailable:      h.KernelLayer.CaptureAvailable,
		AbsentReason:          h.KernelLayer.AbsentReason,
		Probes:                h.Probes,
		Drops:                 copyKinds(h.RingbufDrops.PerKind),
		DecodeErrors:          h.DecodeErrors,
		DecodeDetail:          h.DecodeDetail,
		ReadFaults:            h.ReadFaults,
		IncompleteParts:       maps.Clone(h.IncompleteParts),
		Compat:                copyKinds(h.CompatSyscalls),
		Untracked:             h.UntrackedTasks,
		IOUringUntraced:       h.IOUringUntraced,
		Coverage:              h.Coverage,
		ProgramMisses:         copyProbes(h.ProgramMisses),
		DrainProven:           h.Drain.Proven,
		DrainDetail:           h.Drain.Detail,
		ChildPlacedBeforeExec: h.CgroupCorrelation.ChildPlacedBeforeExec,
		OutsideEvents:         h.CgroupCorrelation.OutsideEvents,
		StragglersKilled:      h.CgroupCorrelation.StragglersKilled,
		SessionTasks: SessionTasks{
			Left:             h.CgroupCorrelation.LeftSessionTasks,
			Entered:          h.CgroupCorrelation.EnteredSessionTasks,
			LeftExamples:     h.CgroupCorrelation.LeftSessionExamples,
			EnteredExamples:  h.CgroupCorrelation.EnteredSessionExamples,
			MovedOut:         h.CgroupCorrelation.MovedOutTasks,
			Joined:           h.CgroupCorrelation.JoinedTasks,
			MovedOutExamples: h.CgroupCorrelation.MovedOutExamples,
			JoinedExamples:   h.CgroupCorrelation.JoinedExamples,
		},
		Counts:      copyKinds(h.Counts),
		SeqGaps:     h.SeqGaps,
		SDKPresent:  h.SDKLayer.Status != wire.SDKAbsent,
		SDKProblems: h.SDKLayer.Problems,
		SDKEvents:   h.SDKLayer.Events,
	}
	if h.Emitted != nil {
		in.Emitted = copyKinds(h.Emitted)
	}
	if c := h.RingbufDrops.Causes; c != nil {
		// Never nil: a document that records causes keeps recording them.
		in.RingFull = kindMap(c.RingFull)
		in.SlotsBusy = kindMap(c.SlotsBusy)
		in.AfterClose = kindMap(c.AfterClose)
	}
	return in
}

// causeMismatch names the kinds whose drop causes do not add up to the
// drops, as "kind: ring full + slots busy + after close != drops, ...",
// or "".
func causeMismatch(perKind map[wire.Kind]uint64, c *wire.DropCauses) string {
	var parts []string
	for _, k := range sortedKinds(perKind, c.RingFull, c.SlotsBusy, c.AfterClose) {
		if r, b, a := c.RingFull[k], c.SlotsBusy[k], c.AfterClose[k]; r+b+a != perKind[k] {
			parts = append(parts, fmt.Sprintf("%s: %d + %d + %d != %d", k, r, b, a, perKind[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// probeMap copies m; never nil, so the document always says how many
// probe runs were skipped, zero or not.
func probeMap(m map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyProbes(m map[string]uint64) map[string]uint64 {
	if m == nil {
		return nil
	}
	return probeMap(m)
}

func sumProbes(m map[string]uint64) uint64 {
	var t uint64
	for _, v := range m {
		t += v
	}
	return t
}

// nonZeroProbes renders the non-zero entries of m as "probe: n, ..." in
// name order.
func nonZeroProbes(m map[string]uint64) string {
	names := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// oneLine keeps a detail on one line, as health reasons must be.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// kindMap copies m, adding every known kind as zero.
func kindMap(m map[wire.Kind]uint64) map[wire.Kind]uint64 {
	out := zeroKinds()
	for k, v := range m {
		out[k] += v
	}
	return out
}

func copyKinds(m map[wire.Kind]uint64) map[wire.Kind]uint64 {
	if m == nil {
		return nil
	}
	out := make(map[wire.Kind]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// nonZero renders the non-zero entries of m as "k: n, ..." in key order.
func nonZero(m map[wire.Kind]uint64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, string(k))
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[wire.Kind(k)])
	}
	return strings.Join(parts, ", ")
}

func sortedProbes(p []wire.Probe) []wire.Probe {
	out := append([]wire.Probe{}, p...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// readFaultParts says what each part an event can lack is, for reasons.
var readFaultParts = map[string]string{
	wire.IncompleteReadFailed: "a memory read that failed",
	wire.IncompletePath:       "a path longer than the capture keeps",
	wire.IncompleteName:       "a name longer than the capture keeps",
	wire.IncompleteArgv:       "exec arguments longer than the capture keeps",
}

// readFaultReason says how many events lack a part and, when the health
// document counts them per part, which parts.
func readFaultReason(n uint64, causes map[string]uint64) string {
	if len(causes) == 0 {
		// An archive written before the events said which part they lack.
		return fmt.Sprintf("%d events have a part missing: a memory read failed, or a path or argument list was longer than the capture keeps", n)
	}
	var parts []string
	for _, part := range wire.IncompleteOrder {
		if c := causes[part]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d with %s (%s)", c, readFaultParts[part], part))
		}
	}
	r := fmt.Sprintf("%d events have a part missing: %s", n, strings.Join(parts, "; "))
	if n == 1 {
		r = "1 event has a part missing: " + strings.Join(parts, "; ")
	}
	var sum uint64
	for _, c := range causes {
		sum += c
	}
	if sum > n {
		r += " (an event can lack several)"
	}
	return r
}
