package capture

import (
	"context"
	"fmt"
	"slices"

	"vigil/internal/event"
)

// Result is everything one capture observed, with the evidence that it is
// complete.
type Result struct {
	Events []event.Kernel // sorted by Seq
	// Emitted counts, per kind, the records the kernel reserved, numbered
	// and submitted.
	Emitted map[event.Kind]uint64
	// Drops counts, per kind, events the kernel could not emit: failed
	// ring-buffer reservations plus syscalls whose arguments could not be
	// stashed because the in-flight map was full.
	Drops map[event.Kind]uint64
	// RingFull and InflightFull split Drops by cause.
	RingFull     map[event.Kind]uint64
	InflightFull map[event.Kind]uint64
	DecodeErrors uint64
	// DecodeDetail describes the first decode error.
	DecodeDetail string
	// ReadFaults counts records whose path, argv0 or address could not be
	// read from memory by the kernel, or did not fit the capture buffer
	// (the string is empty or partial; open events carry PathTruncated).
	ReadFaults uint64
	// ProgramMisses counts, per probe, runs the kernel skipped because
	// another BPF program was already running on that CPU. The kernel
	// counts these before the cgroup filter, so they may concern tasks
	// outside the session.
	ProgramMisses map[string]uint64
	// Records is the number of ring-buffer records read.
	Records uint64
	// DrainProven is true when the ring was empty and Records equalled the
	// kernel's emission count (and, without decode errors, the sequence
	// numbers were exactly 0..Records-1).
	DrainProven bool
	DrainDetail string // why not proven, when false
}

// Finish is called once the session cgroup is empty (no task of the
// session can emit any more). It drains the ring until provably empty,
// stops reading, starts detaching the probes in the background and returns
// what was captured. Close waits for the detach. ctx bounds the drain; when it expires the result is
// returned with DrainProven false.
func (c *Capture) Finish(ctx context.Context) (*Result, error) {
	c.finishMu.Lock()
	defer c.finishMu.Unlock()
	if c.finished {
		return nil, fmt.Errorf("capture: %w", ErrFinished)
	}
	if c.st == nil {
		return nil, fmt.Errorf("capture: Finish on a capture that did not open")
	}
	c.finished = true

	c.st.finishCh <- drainRequest{ctx: ctx, emitted: c.emittedTotal}
	if err := c.rd.Flush(); err != nil {
		return nil, fmt.Errorf("capture: flush ring buffer reader: %w", err)
	}
	c.st.wait()
	// Nothing of the session can be emitted any more: stop tracing the
	// host now; Close waits for the detach to complete.
	c.startDetach()

	cnt, err := c.readCounters()
	if err != nil {
		return nil, err
	}
	st := c.st
	res := &Result{
		Events:        st.events.all(),
		Emitted:       cnt.perKind(classEmit),
		RingFull:      cnt.perKind(classDrop),
		InflightFull:  cnt.perKind(classInflightFull),
		Drops:         map[event.Kind]uint64{},
		DecodeErrors:  st.decodeErrors,
		ReadFaults:    st.faults,
		Records:       st.records,
		DrainProven:   st.outcome.proven,
		DrainDetail:   st.outcome.detail,
		ProgramMisses: c.programMisses(),
	}
	if st.firstDecode != nil {
		res.DecodeDetail = st.firstDecode.Error()
	}
	for _, k := range event.Kinds {
		res.Drops[k] = res.RingFull[k] + res.InflightFull[k]
	}
	// Records leave the ring in reservation order, which differs from
	// sequence order only where two CPUs raced between reserving and
	// numbering; the check spares the sort in the common case.
	bySeq := func(a, b event.Kernel) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(res.Events, bySeq) {
		slices.SortFunc(res.Events, bySeq)
	}
	if res.DrainProven && res.DecodeErrors == 0 {
		for i, ev := range res.Events {
			if ev.Seq != uint64(i) {
				res.DrainProven = false
				res.DrainDetail = fmt.Sprintf("sequence gap: record %d carries seq %d", i, ev.Seq)
				break
			}
		}
	}
	if res.DrainProven {
		if total := sumKinds(res.Emitted); total != res.Records {
			res.DrainProven = false
			res.DrainDetail = fmt.Sprintf("the kernel emitted %d records but %d were read: a session task emitted after the drain (was the session cgroup empty?)", total, res.Records)
		}
	}
	if res.DrainProven {
		var next uint64
		if err := c.objs.NextSeq.Get(&next); err == nil && next != res.Records {
			res.DrainProven = false
			res.DrainDetail = fmt.Sprintf("kernel sequence counter is %d but %d records were read", next, res.Records)
		}
	}
	return res, nil
}

// programMisses reads each attached program's recursion-miss counter.
func (c *Capture) programMisses() map[string]uint64 {
	out := map[string]uint64{}
	for _, p := range probeTable {
		st, err := p.prog(&c.objs).Stats()
		if err != nil {
			continue
		}
		if st.RecursionMisses > 0 {
			out[p.name] = st.RecursionMisses
		}
	}
	return out
}

func sumKinds(m map[event.Kind]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}
