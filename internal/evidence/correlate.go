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

// newEventSet builds an EventSet from the events of ix at idx.
func newEventSet(ix *timeIndex, idx []uint32) EventSet {
	seqs := make([]uint64, 0, len(idx))
	b := newEventSetBuilder()
	for _, k := range idx {
		seqs = append(seqs, ix.seqAt(int(k)))
		b.count(ix.kindAt(int(k)))
	}
	slices.Sort(seqs)
	for _, q := range seqs {
		b.extend(q)
	}
	return b.set
}

// unattributedSet builds the EventSet of the events of ix not marked in
// attributed. A layer in seq order (every one Check accepts) gives its
// seqs in order, so nothing is collected or sorted: a run of a million
// events costs no list of a million; any other falls back to newEventSet.
func unattributedSet(ix *timeIndex, attributed []bool) EventSet {
	b := newEventSetBuilder()
	var last uint64
	for k, in := range attributed {
		if in {
			continue
		}
		q := ix.seqAt(k)
		if b.set.Total > 0 && q < last {
			var rest []uint32
			for k, in := range attributed {
				if !in {
					rest = append(rest, uint32(k))
				}
			}
			return newEventSet(ix, rest)
		}
		last = q
		b.count(ix.kindAt(k))
		b.extend(q)
	}
	return b.set
}

// eventSetBuilder counts events by kind and folds seqs, given in
// increasing order (repeats each make a range of their own), into ranges.
type eventSetBuilder struct {
	set EventSet
}

func newEventSetBuilder() *eventSetBuilder {
	return &eventSetBuilder{set: EventSet{ByKind: zeroKinds(), SeqRanges: [][2]uint64{}}}
}

func (b *eventSetBuilder) count(k wire.Kind) {
	b.set.Total++
	b.set.ByKind[k]++
}

func (b *eventSetBuilder) extend(q uint64) {
	if n := len(b.set.SeqRanges); n > 0 && b.set.SeqRanges[n-1][1]+1 == q {
		b.set.SeqRanges[n-1][1] = q
		return
	}
	b.set.SeqRanges = append(b.set.SeqRanges, [2]uint64{q, q})
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
	return correlate(&ix, sdk)
}

func correlate(ix *timeIndex, sdk []wire.SDK) *CorrelationReport {
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

	// Index the events by time so each window is two binary searches.
	// 32-bit indexes: a layer is far below 2^32 events (the entry limit),
	// and a million-event run's index is 4 MB, not 8.
	order := make([]uint32, ix.len())
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortStableFunc(order, func(a, b uint32) int { return cmp.Compare(ix.tsAt(int(a)), ix.tsAt(int(b))) })
	attributed := make([]bool, ix.len())
	for i := range r.ToolCalls {
		tc := &r.ToolCalls[i]
		lo := sort.Search(len(order), func(j int) bool { return ix.tsAt(int(order[j])) >= tc.StartedMonoNS })
		hi := len(order)
		if tc.Completed {
			hi = sort.Search(len(order), func(j int) bool { return ix.tsAt(int(order[j])) > tc.CompletedMonoNS })
		}
		in := order[lo:max(lo, hi)]
		for _, k := range in {
			attributed[k] = true
		}
		tc.Kernel = newEventSet(ix, in)
	}
	r.Unattributed = unattributedSet(ix, attributed)
	return r
}
