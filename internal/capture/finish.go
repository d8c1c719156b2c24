//go:build linux

package capture

import (
	"context"
	"fmt"

	"vigil/internal/wire"
)

// Result is everything one capture observed, with the evidence that it is
// complete.
type Result struct {
	// Events are the events in seq order; nil when Config.Sink took them.
	Events []wire.Kernel
	// Emitted counts, per kind, the records the kernel reserved, numbered
	// and submitted.
	Emitted map[wire.Kind]uint64
	// Drops counts, per kind, events the kernel could not emit, whatever
	// the cause; the maps below split it.
	Drops map[wire.Kind]uint64
	// RingFull: the ring buffer had no room.
	RingFull map[wire.Kind]uint64
	// SlotsBusy: every record slot of the CPU was held by another task.
	SlotsBusy map[wire.Kind]uint64
	// Late counts events of tracked tasks after the capture closed (tasks
	// still alive outside the session cgroup when the run ended).
	Late map[wire.Kind]uint64
	// Untracked counts tasks the kernel could not mark as the run's (out
	// of memory): their later events are missing.
	Untracked uint64
	// Compat counts, per kind, 32-bit (compat) syscalls of the run, which
	// the capture does not decode.
	Compat map[wire.Kind]uint64
	// IOUringUntraced counts io_uring requests of the run whose
	// completion was not recorded: requests submitted with
	// IOSQE_CQE_SKIP_SUCCESS, completions past a full CQ ring, completions
	// posted by a task not the run's (a kworker tearing the ring down
	// after the run's tasks exited without reaping), requests still open
	// when the capture ended, and requests beyond the in-flight table.
	IOUringUntraced uint64
	// LiveTasks is the number of tracked tasks still alive when the
	// capture closed; 0 when every task of the run had exited.
	LiveTasks    int64
	DecodeErrors uint64
	// DecodeDetail describes the first decode error.
	DecodeDetail string
	// ReadFaults counts records with a part missing: a memory read
	// failed, or a path, name or argument list was longer than the
	// capture keeps. Each such event says which (Incomplete), and health
	// counts them from the archived events; this is the reader's own
	// count, the same by construction.
	ReadFaults uint64
	// ProgramMisses counts, per probe, runs the kernel skipped because
	// another BPF program was already running on that CPU. The kernel
	// counts these before any filter, so they may concern tasks outside
	// the run.
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
// what was captured; with a Sink, once the sink has every event (ctx does
// not bound the sink's work). Close waits for the detach. ctx bounds the
// drain; when it expires the result is returned with DrainProven false.
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

	// From here on a task of the run still alive (one that left the
	// session cgroup) is counted, not recorded, so the emission count the
	// drain is proven against is final.
	if err := c.objs.session.close(); err != nil {
		return nil, fmt.Errorf("capture: close the capture: %w", err)
	}
	live, err := c.objs.session.liveTasks()
	if err != nil {
		return nil, fmt.Errorf("capture: read live task count: %w", err)
	}

	c.st.finishCh <- drainRequest{ctx: ctx, emitted: c.emittedTotal}
	if err := c.rd.Flush(); err != nil {
		return nil, fmt.Errorf("capture: flush ring buffer reader: %w", err)
	}
	c.interruptWait()
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
		Emitted:         cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_EMIT),
		RingFull:        cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_DROP),
		SlotsBusy:       cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_BUSY),
		Late:            cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_LATE),
		Untracked:       wire.Total(cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_UNTRACKED)),
		LiveTasks:       live,
		Compat:          cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_COMPAT),
		IOUringUntraced: wire.Total(cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_UNTRACED)) + ringOpen(cnt),
		Drops:           map[wire.Kind]uint64{},
		DecodeErrors:    st.decodeErrors,
		ReadFaults:      st.faults,
		Records:         st.records,
		DrainProven:     st.outcome.proven,
		DrainDetail:     st.outcome.detail,
		ProgramMisses:   c.programMisses(),
	}
	if c.sink == nil {
		res.Events = st.pass.events()
	}
	if st.firstDecode != nil {
		res.DecodeDetail = st.firstDecode.Error()
	}
	for _, k := range wire.Kinds {
		res.Drops[k] = res.RingFull[k] + res.SlotsBusy[k] + res.Late[k]
	}
	if st.order.late > 0 {
		// Counted with the records that could not be decoded: they are
		// read but not in the layer.
		res.DecodeErrors += st.order.late
		if res.DecodeDetail == "" {
			res.DecodeDetail = st.order.firstLate
		}
	}
	if res.DrainProven && res.DecodeErrors == 0 && st.pass.firstGap != "" {
		res.DrainProven = false
		res.DrainDetail = st.pass.firstGap
	}
	if res.DrainProven {
		if total := wire.Total(res.Emitted); total != res.Records {
			res.DrainProven = false
			res.DrainDetail = fmt.Sprintf("the kernel emitted %d records but %d were read: a session task emitted after the drain (was the session cgroup empty?)", total, res.Records)
		}
	}
	if res.DrainProven {
		if next, err := c.objs.session.nextSeq(); err == nil && next != res.Records {
			res.DrainProven = false
			res.DrainDetail = fmt.Sprintf("kernel sequence counter is %d but %d records were read", next, res.Records)
		}
	}
	if release := c.objs.release; release != nil {
		// Nothing of the set is read any more: once the programs are
		// detached the next capture may take it, while this one's caller
		// writes its archive.
		detached := c.detached
		go func() {
			<-detached
			release()
		}()
	}
	return res, nil
}

// programMisses reads, per probe, the runs the kernel skipped because
// another BPF program was already running on that CPU, since the capture
// started.
func (c *Capture) programMisses() map[string]uint64 {
	out := map[string]uint64{}
	for hook, n := range c.recursionMisses() {
		if n > c.missBase[hook] {
			out[hook] = n - c.missBase[hook]
		}
	}
	return out
}

// recursionMisses reads each program's count of recursion misses.
func (c *Capture) recursionMisses() map[string]uint64 {
	out := map[string]uint64{}
	for _, p := range probeTable {
		prog := c.objs.programs[p.prog]
		if prog == nil {
			continue
		}
		if st, err := prog.Stats(); err == nil && st.RecursionMisses > 0 {
			out[p.hook] = st.RecursionMisses
		}
	}
	return out
}
