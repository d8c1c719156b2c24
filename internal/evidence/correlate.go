package evidence

import (
	"cmp"
	"slices"
	"sort"

	"vigil/internal/wire"
)

// CorrelationReport is correlation-report.json: for each tool call the
// workload reported, the kernel events whose monotonic timestamp falls in
// the call's closed window [started.mono_ns, completed.mono_ns]. Windows of
// concurrent calls may overlap, so one event can belong to several calls;
// Unattributed counts the events that belong to none.
type CorrelationReport struct {
	Schema       string     `json:"schema"` // CorrelationSchema
	RunID        string     `json:"run_id"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	Unattributed EventSet   `json:"unattributed"`
}

// ToolCall is one tool call and the kernel events inside its window.
type ToolCall struct {
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	PID        int    `json:"pid"`
	// TraceID and SpanID are the tool call's span (from its
	// tool_call_started event); empty when the workload does not trace.
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Completed is false when the log has no tool_call_completed for this
	// id; the window then stays open to the end of the run.
	Completed     bool        `json:"completed"`
	Status        wire.Status `json:"status"`
	StartedSeq    uint64      `json:"started_seq"` // SDK seq of tool_call_started
	StartedMonoNS uint64      `json:"started_mono_ns"`
	// CompletedSeq and CompletedMonoNS are zero when Completed is false.
	CompletedSeq    uint64   `json:"completed_seq"`
	CompletedMonoNS uint64   `json:"completed_mono_ns"`
	Kernel          EventSet `json:"kernel_events"`
}

// EventSet is a set of kernel events: how many, per kind, and which, as
// ascending closed ranges of sequence numbers ([[first, last], ...]).
type EventSet struct {
	Total     uint64               `json:"total"`
	ByKind    map[wire.Kind]uint64 `json:"by_kind"`
	SeqRanges [][2]uint64          `json:"seq_ranges"`
}

// Seqs expands SeqRanges.
func (s EventSet) Seqs() []uint64 {
	var out []uint64
	for _, r := range s.SeqRanges {
		for q := r[0]; ; q++ {
			out = append(out, q)
			if q == r[1] {
				break
			}
		}
	}
	return out
}

// Events returns the events of kernel (sorted by Seq) whose seq is in s,
// in seq order.
func (s EventSet) Events(kernel []wire.Kernel) []wire.Kernel {
	out := make([]wire.Kernel, 0, s.Total)
	for _, r := range s.SeqRanges {
		i := sort.Search(len(kernel), func(i int) bool { return kernel[i].Seq >= r[0] })
		for ; i < len(kernel) && kernel[i].Seq <= r[1]; i++ {
			out = append(out, kernel[i])
		}
	}
	return out
}

// eventSetBuilder builds an EventSet from events given one at a time:
// it counts them by kind and folds their seqs into ranges as they come,
// which is exact while seqs do not decrease (every layer Check accepts);
// the first that does makes it keep every seq and sort them at the end,
// as the set of an arbitrary layer needs. Repeats each make a range of
// their own, as they do sorted.
type eventSetBuilder struct {
	set   EventSet
	last  uint64
	loose []uint64 // every seq, once one came out of order
	out   bool     // one came out of order
}

func newEventSetBuilder() *eventSetBuilder {
	return &eventSetBuilder{set: EventSet{ByKind: zeroKinds(), SeqRanges: [][2]uint64{}}}
}

func (b *eventSetBuilder) add(q uint64, k wire.Kind) {
	if !b.out && b.set.Total > 0 && q < b.last {
		b.out = true
		b.loose = b.set.Seqs()
		b.set.SeqRanges = [][2]uint64{}
	}
	b.set.Total++
	b.set.ByKind[k]++
	b.last = q
	if b.out {
		b.loose = append(b.loose, q)
		return
	}
	b.extend(q)
}

func (b *eventSetBuilder) extend(q uint64) {
	if n := len(b.set.SeqRanges); n > 0 && b.set.SeqRanges[n-1][1]+1 == q {
		b.set.SeqRanges[n-1][1] = q
		return
	}
	b.set.SeqRanges = append(b.set.SeqRanges, [2]uint64{q, q})
}

func (b *eventSetBuilder) result() EventSet {
	if b.out {
		slices.Sort(b.loose)
		for _, q := range b.loose {
			b.extend(q)
		}
		b.out, b.loose = false, nil
	}
	return b.set
}

// windowIndex finds the tool-call windows holding a time: the windows
// sorted by start, over them a segment tree of the latest end, so that a
// lookup visits only subtrees that hold a match (O(log n) per window
// found).
type windowIndex struct {
	start, end []uint64
	call       []int    // the tool call of each window
	maxEnd     []uint64 // segment tree over the windows
}

func newWindowIndex(calls []ToolCall) *windowIndex {
	type window struct {
		start, end uint64
		call       int
	}
	var ws []window
	for i, tc := range calls {
		end := ^uint64(0) // open until the end of the run
		if tc.Completed {
			end = tc.CompletedMonoNS
		}
		if end >= tc.StartedMonoNS {
			ws = append(ws, window{tc.StartedMonoNS, end, i})
		}
	}
	slices.SortStableFunc(ws, func(a, b window) int { return cmp.Compare(a.start, b.start) })
	x := &windowIndex{maxEnd: make([]uint64, 4*max(len(ws), 1))}
	for _, w := range ws {
		x.start, x.end, x.call = append(x.start, w.start), append(x.end, w.end), append(x.call, w.call)
	}
	if len(ws) > 0 {
		x.build(1, 0, len(ws))
	}
	return x
}

func (x *windowIndex) build(node, lo, hi int) uint64 {
	if hi-lo == 1 {
		x.maxEnd[node] = x.end[lo]
		return x.end[lo]
	}
	mid := (lo + hi) / 2
	x.maxEnd[node] = max(x.build(2*node, lo, mid), x.build(2*node+1, mid, hi))
	return x.maxEnd[node]
}

// each calls fn with every tool call whose window holds ts.
func (x *windowIndex) each(ts uint64, fn func(call int)) {
	// Only windows starting at or before ts can hold it.
	n := sort.Search(len(x.start), func(i int) bool { return x.start[i] > ts })
	if n > 0 {
		x.visit(1, 0, len(x.start), n, ts, fn)
	}
}

func (x *windowIndex) visit(node, lo, hi, n int, ts uint64, fn func(int)) {
	if lo >= n || x.maxEnd[node] < ts {
		return
	}
	if hi-lo == 1 {
		fn(x.call[lo])
		return
	}
	mid := (lo + hi) / 2
	x.visit(2*node, lo, mid, n, ts, fn)
	x.visit(2*node+1, mid, hi, n, ts, fn)
}

// Correlate assigns kernel events to the tool calls in sdk by time window.
// Tool calls appear in the order of their tool_call_started events; a
// tool_call_completed without a start is ignored here (ReadSDKLog reports
// it). RunID is left for the caller (Assemble sets it).
func Correlate(kernel []wire.Kernel, sdk []wire.SDK) *CorrelationReport {
	var ix timeIndex
	for i := range kernel {
		ix.add(&kernel[i])
	}
	r, _ := correlate(&ix, sdk) // no store, nothing to read back
	return r
}

func correlate(ix *timeIndex, sdk []wire.SDK) (*CorrelationReport, error) {
	r := &CorrelationReport{Schema: CorrelationSchema, ToolCalls: []ToolCall{}}
	byID := map[string]int{}
	for _, s := range sdk {
		switch s.Type {
		case wire.SDKToolCallStarted:
			if _, dup := byID[s.ToolCallID]; dup {
				continue
			}
			byID[s.ToolCallID] = len(r.ToolCalls)
			r.ToolCalls = append(r.ToolCalls, ToolCall{
				ToolCallID: s.ToolCallID, ToolName: s.ToolName, PID: s.PID,
				TraceID: s.TraceID, SpanID: s.SpanID,
				StartedSeq: s.Seq, StartedMonoNS: s.MonoNS,
			})
		case wire.SDKToolCallCompleted:
			i, ok := byID[s.ToolCallID]
			if !ok || r.ToolCalls[i].Completed {
				continue
			}
			tc := &r.ToolCalls[i]
			tc.Completed, tc.Status = true, s.Status
			tc.CompletedSeq, tc.CompletedMonoNS = s.Seq, s.MonoNS
		}
	}

	// One pass over the events in layer order: each goes to every call
	// whose window holds its time, or to the unattributed set. No event
	// is sorted by time or indexed (seqs are sorted only in a layer out
	// of seq order, see eventSetBuilder).
	windows := newWindowIndex(r.ToolCalls)
	sets := make([]*eventSetBuilder, len(r.ToolCalls))
	for i := range sets {
		sets[i] = newEventSetBuilder()
	}
	rest := newEventSetBuilder()
	err := ix.each(func(ts, seq uint64, kind wire.Kind) {
		in := false
		windows.each(ts, func(call int) {
			in = true
			sets[call].add(seq, kind)
		})
		if !in {
			rest.add(seq, kind)
		}
	})
	if err != nil {
		return nil, err
	}
	for i := range r.ToolCalls {
		r.ToolCalls[i].Kernel = sets[i].result()
	}
	r.Unattributed = rest.result()
	return r, nil
}
