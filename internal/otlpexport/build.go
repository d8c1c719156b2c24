package otlpexport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Defaults for Options.
const (
	// DefaultMaxEventsPerSpan keeps a span small enough for trace UIs and
	// for backends that cap events per span.
	DefaultMaxEventsPerSpan = 1000
	// DefaultMaxEventsPerRequest keeps a request near 1-3 MB, well under
	// the 4 MiB gRPC and 20 MiB HTTP defaults of OTLP receivers.
	DefaultMaxEventsPerRequest = 5000
)

// Span names of the spans vigil makes.
const (
	RunSpanName          = "vigil record"
	KernelEventsSpanName = "kernel events"
	ContinuedSuffix      = " (continued)"
	ScopeName            = "vigil/otlpexport"
)

// Options shape an export; zero values take the defaults.
type Options struct {
	MaxEventsPerSpan    int
	MaxEventsPerRequest int
}

// Export is an archive as OTLP traces, split into requests.
type Export struct {
	TraceID string // the run's trace
	RunSpan string // the run's span id
	// Spans counts every span of every batch; KernelEvents the span events
	// that stand for a kernel event (one per event of the archive).
	Spans        int
	KernelEvents int
	// Continuations counts spans made only because a span would have held
	// more than MaxEventsPerSpan events.
	Continuations int
	// Clock says how kernel event times were placed in wall time:
	// "run.clock" (the archive's anchor), "sdk" (the workload's first SDK
	// event, for archives without one) or "run.start_time" (the first
	// event taken as the command's start; approximate).
	Clock string
	// IDs says where the trace and run span ids came from: "run.trace",
	// or "derived" from the run id for archives without one.
	IDs string

	bd     *builder
	bounds [][2]int // each batch's range of bd.spans
}

// NumBatches is the number of requests (lines of a file) the export is
// split into.
func (x *Export) NumBatches() int { return len(x.bounds) }

// Batch builds request i. Batches are built one at a time, so an export
// holds the pdata of one request, not of the whole archive.
func (x *Export) Batch(i int) ptrace.Traces {
	return x.bd.batch(x.bd.spans[x.bounds[i][0]:x.bounds[i][1]])
}

// spanRec is one span before it is placed in a batch.
type spanRec struct {
	traceID, spanID, parent [16]byte // parent/spanID use the first 8 bytes
	hasParent               bool
	name                    string
	kind                    ptrace.SpanKind
	start, end              int64
	errMsg                  string // non-empty: status error
	attrs                   func(pcommon.Map)
	events                  []int // indices into the kernel events
}

// builder holds what span construction needs.
type builder struct {
	b      *evidence.Bundle
	runID  string
	trace  [16]byte
	runSp  [16]byte
	wall   func(mono uint64) int64
	bySeq  map[uint64]int // kernel event seq -> index
	spans  []*spanRec
	maxPer int
	conts  int
}

// Build turns b into OTLP traces. It fails only on a malformed trace
// context in run.json.
func Build(b *evidence.Bundle, o Options) (*Export, error) {
	if o.MaxEventsPerSpan <= 0 {
		o.MaxEventsPerSpan = DefaultMaxEventsPerSpan
	}
	if o.MaxEventsPerRequest <= 0 {
		o.MaxEventsPerRequest = DefaultMaxEventsPerRequest
	}
	// A request holds at least one span, so no span may hold more events
	// than a request (one item is the span itself).
	o.MaxEventsPerSpan = max(1, min(o.MaxEventsPerSpan, o.MaxEventsPerRequest-1))
	x := &Export{}
	bd := &builder{b: b, runID: b.Run.RunID, maxPer: o.MaxEventsPerSpan, bySeq: make(map[uint64]int, len(b.Kernel))}
	for i := range b.Kernel {
		bd.bySeq[b.Kernel[i].Seq] = i
	}
	var parent [16]byte
	hasParent := false
	if tc := b.Run.Trace; tc != nil {
		var err error
		if bd.trace, err = parseID(tc.TraceID, 16); err != nil {
			return nil, fmt.Errorf("run.json trace.trace_id: %v", err)
		}
		if bd.runSp, err = parseID(tc.SpanID, 8); err != nil {
			return nil, fmt.Errorf("run.json trace.span_id: %v", err)
		}
		if tc.ParentSpanID != "" {
			if parent, err = parseID(tc.ParentSpanID, 8); err != nil {
				return nil, fmt.Errorf("run.json trace.parent_span_id: %v", err)
			}
			hasParent = true
		}
		x.IDs = "run.trace"
	} else {
		bd.trace = bd.derive("trace")
		bd.runSp = bd.derive("run")
		x.IDs = "derived"
	}
	bd.wall, x.Clock = wallClock(b)

	run := bd.runSpan(parent, hasParent)
	procSpans := bd.processSpans(run)
	bd.placeEvents(run, procSpans)

	x.TraceID = hex.EncodeToString(bd.trace[:])
	x.RunSpan = hex.EncodeToString(bd.runSp[:8])
	x.Continuations = bd.conts
	x.bd, x.bounds = bd, bd.split(o.MaxEventsPerRequest)
	for _, s := range bd.spans {
		x.Spans++
		x.KernelEvents += len(s.events)
	}
	return x, nil
}

func parseID(s string, n int) ([16]byte, error) {
	var id [16]byte
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != n {
		return id, fmt.Errorf("%q is not %d hex digits", s, 2*n)
	}
	copy(id[:], raw)
	if id == ([16]byte{}) {
		return id, fmt.Errorf("%q is all zeros", s)
	}
	return id, nil
}

// derive makes a stable id for what label names in this run.
func (bd *builder) derive(label string) [16]byte {
	sum := sha256.Sum256([]byte("vigil/" + bd.runID + "/" + label))
	var id [16]byte
	copy(id[:], sum[:16])
	return id
}

// wallClock maps kernel event times (CLOCK_MONOTONIC) to Unix ns.
func wallClock(b *evidence.Bundle) (func(uint64) int64, string) {
	if c := b.Run.Clock; c != nil {
		return c.WallNS, "run.clock"
	}
	if len(b.SDK) > 0 {
		a := wire.ClockAnchor{MonoNS: b.SDK[0].MonoNS, UnixNS: b.SDK[0].TimeUnixNS}
		return a.WallNS, "sdk"
	}
	start, _ := time.Parse(time.RFC3339Nano, b.Run.StartTime)
	var first uint64
	if len(b.Kernel) > 0 {
		first = b.Kernel[0].TimeNS
		for _, k := range b.Kernel {
			first = min(first, k.TimeNS)
		}
	}
	a := wire.ClockAnchor{MonoNS: first, UnixNS: start.UnixNano()}
	return a.WallNS, "run.start_time"
}

func (bd *builder) add(s *spanRec) *spanRec {
	s.traceID = bd.trace
	if s.kind == 0 {
		s.kind = ptrace.SpanKindInternal
	}
	bd.spans = append(bd.spans, s)
	return s
}

func (bd *builder) runSpan(parent [16]byte, hasParent bool) *spanRec {
	r := bd.b.Run
	start, _ := time.Parse(time.RFC3339Nano, r.StartTime)
	end, _ := time.Parse(time.RFC3339Nano, r.EndTime)
	s := bd.add(&spanRec{
		spanID: bd.runSp, parent: parent, hasParent: hasParent,
		name: RunSpanName, start: start.UnixNano(), end: end.UnixNano(),
		attrs: func(m pcommon.Map) { runAttrs(m, bd.b) },
	})
	if r.Signal != 0 {
		s.errMsg = fmt.Sprintf("killed by signal %d", r.Signal)
	} else if r.ExitCode != 0 {
		s.errMsg = fmt.Sprintf("exit %d", r.ExitCode)
	}
	// The run span covers everything under it.
	for _, k := range bd.b.Kernel {
		w := bd.wall(k.TimeNS)
		s.start, s.end = min(s.start, w), max(s.end, w)
	}
	return s
}

// processSpans makes one span per process, under its parent process's
// span (the run span for the first task and for unknown parents). It
// returns, per kernel event index, the span of the event's process.
func (bd *builder) processSpans(run *spanRec) []*spanRec {
	procs := evidence.Processes(bd.b.Kernel)
	of := make([]*spanRec, len(bd.b.Kernel))
	live := map[uint32]*spanRec{}
	for i := range procs {
		p := &procs[i]
		parent := run
		if ps, ok := live[p.ParentPID]; ok && p.ParentPID != 0 {
			parent = ps
		}
		s := bd.add(&spanRec{
			spanID: bd.derive(fmt.Sprintf("process/%d", i)), parent: parent.spanID, hasParent: true,
			name: processName(p), start: bd.wall(p.StartNS), end: bd.wall(p.EndNS),
			attrs: func(m pcommon.Map) { processAttrs(m, p) },
		})
		if p.Exit != nil && p.Exit.Signal != 0 {
			s.errMsg = fmt.Sprintf("killed by signal %d", p.Exit.Signal)
		} else if p.Exit != nil && p.Exit.Code != 0 {
			s.errMsg = fmt.Sprintf("exit %d", p.Exit.Code)
		}
		live[p.PID] = s
		for _, seq := range p.Events {
			of[bd.bySeq[seq]] = s
		}
	}
	return of
}

func processName(p *evidence.Process) string {
	if p.Exec != nil && len(p.Exec.File.Path) > 0 {
		return path.Base(string(p.Exec.File.Path))
	}
	return string(p.Comm)
}

// placeEvents puts each kernel event in exactly one span: the tool call
// it belongs to, else its process.
func (bd *builder) placeEvents(run *spanRec, procOf []*spanRec) {
	holder := make([]*spanRec, len(bd.b.Kernel))
	holderPID := make([]int, len(bd.b.Kernel))
	holderStart := make([]uint64, len(bd.b.Kernel))
	if c := bd.b.Correlation; c != nil {
		for i := range c.ToolCalls {
			tc := &c.ToolCalls[i]
			seqs := tc.Kernel.Seqs()
			if len(seqs) == 0 {
				continue
			}
			h := bd.toolHolder(tc, run, procOf)
			for _, seq := range seqs {
				k, ok := bd.bySeq[seq]
				if !ok {
					continue
				}
				// Overlapping windows: prefer the call of the event's own
				// process, then the one that started last (the innermost).
				if cur := holder[k]; cur != nil {
					ownNew := uint32(tc.PID) == bd.b.Kernel[k].PID
					ownCur := uint32(holderPID[k]) == bd.b.Kernel[k].PID
					if ownCur && !ownNew || ownCur == ownNew && holderStart[k] >= tc.StartedMonoNS {
						continue
					}
				}
				holder[k], holderPID[k], holderStart[k] = h, tc.PID, tc.StartedMonoNS
			}
		}
	}
	for k := range bd.b.Kernel {
		h := holder[k]
		if h == nil {
			h = procOf[k]
		}
		if h == nil {
			h = run
		}
		h.events = append(h.events, k)
	}
	// Split holders with too many events; continuation spans sit under
	// the holder they continue.
	n := len(bd.spans)
	for i := 0; i < n; i++ {
		s := bd.spans[i]
		s.events = bd.sortBySeq(s.events)
		if len(s.events) <= bd.maxPer {
			continue
		}
		rest := s.events[bd.maxPer:]
		s.events = s.events[:bd.maxPer]
		total := len(rest)/bd.maxPer + 1
		if len(rest)%bd.maxPer != 0 {
			total++
		}
		for part := 2; len(rest) > 0; part++ {
			chunk := rest[:min(bd.maxPer, len(rest))]
			rest = rest[len(chunk):]
			first, last := bd.b.Kernel[chunk[0]].TimeNS, bd.b.Kernel[chunk[len(chunk)-1]].TimeNS
			p, parts := part, total
			c := bd.add(&spanRec{
				spanID: bd.derive(fmt.Sprintf("%x/part/%d", s.spanID[:8], part)), parent: s.spanID, hasParent: true,
				name: s.name + ContinuedSuffix, start: bd.wall(first), end: bd.wall(last),
				attrs: func(m pcommon.Map) {
					m.PutInt(AttrEventsPart, int64(p))
					m.PutInt(AttrEventsParts, int64(parts))
				},
				events: chunk,
			})
			c.traceID = s.traceID // the trace of the span it continues
			bd.conts++
		}
	}
}

func (bd *builder) sortBySeq(idx []int) []int {
	sort.Slice(idx, func(a, b int) bool { return bd.b.Kernel[idx[a]].Seq < bd.b.Kernel[idx[b]].Seq })
	return idx
}

// toolHolder is the span that holds a tool call's kernel events: a
// "kernel events" span under the workload's own tool-call span, or, when
// the workload does not trace, a tool-call span vigil makes from the SDK
// log under the span of the calling process.
func (bd *builder) toolHolder(tc *evidence.ToolCall, run *spanRec, procOf []*spanRec) *spanRec {
	start := bd.wall(tc.StartedMonoNS)
	end := bd.wall(bd.runEndMono())
	if tc.Completed {
		end = bd.wall(tc.CompletedMonoNS)
	}
	id := bd.derive("tool/" + tc.ToolCallID)
	if sp, err := parseID(tc.SpanID, 8); err == nil {
		s := bd.add(&spanRec{
			spanID: id, parent: sp, hasParent: true,
			name: KernelEventsSpanName, start: start, end: end,
			attrs: func(m pcommon.Map) {
				m.PutStr(AttrGenAIToolName, tc.ToolName)
				m.PutStr(AttrGenAIToolCallID, tc.ToolCallID)
				m.PutInt(AttrKernelEvents, int64(tc.Kernel.Total))
			},
		})
		if tid, err := parseID(tc.TraceID, 16); err == nil {
			s.traceID = tid // the workload's trace, should it differ from the run's
		}
		return s
	}
	parent := run
	for k := range bd.b.Kernel {
		if bd.b.Kernel[k].PID == uint32(tc.PID) && procOf[k] != nil {
			parent = procOf[k]
			break
		}
	}
	s := bd.add(&spanRec{
		spanID: id, parent: parent.spanID, hasParent: true,
		name: "execute_tool " + tc.ToolName, start: start, end: end,
		attrs: func(m pcommon.Map) {
			m.PutStr(AttrGenAIOperation, "execute_tool")
			m.PutStr(AttrGenAIToolName, tc.ToolName)
			m.PutStr(AttrGenAIToolCallID, tc.ToolCallID)
			m.PutInt(AttrKernelEvents, int64(tc.Kernel.Total))
		},
	})
	if tc.Status == "error" {
		s.errMsg = "tool call failed"
	}
	return s
}

func (bd *builder) runEndMono() uint64 {
	var last uint64
	for _, k := range bd.b.Kernel {
		last = max(last, k.TimeNS)
	}
	for _, s := range bd.b.SDK {
		last = max(last, s.MonoNS)
	}
	return last
}

// split cuts the spans into requests of at most maxItems items each,
// counting a span as one item plus its events, so spans without events
// (processes, the run) fill requests too.
func (bd *builder) split(maxItems int) [][2]int {
	var out [][2]int
	n := 0
	for i, s := range bd.spans {
		if len(out) == 0 || n > 0 && n+1+len(s.events) > maxItems {
			out = append(out, [2]int{i, i})
			n = 0
		}
		out[len(out)-1][1] = i + 1
		n += 1 + len(s.events)
	}
	return out
}

// batch materializes spans as one request.
func (bd *builder) batch(spans []*spanRec) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	resourceAttrs(rs.Resource().Attributes(), bd.b)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(ScopeName)
	ss.Scope().SetVersion(bd.b.Run.VigilVersion)
	out := ss.Spans()
	out.EnsureCapacity(len(spans))
	for _, s := range spans {
		bd.materialize(out.AppendEmpty(), s)
	}
	return td
}

func (bd *builder) materialize(sp ptrace.Span, s *spanRec) {
	sp.SetTraceID(pcommon.TraceID(s.traceID))
	sp.SetSpanID(spanID(s.spanID))
	if s.hasParent {
		sp.SetParentSpanID(spanID(s.parent))
	}
	sp.SetName(s.name)
	sp.SetKind(s.kind)
	sp.SetStartTimestamp(pcommon.Timestamp(max(s.start, 0)))
	sp.SetEndTimestamp(pcommon.Timestamp(max(s.end, s.start, 0)))
	if s.errMsg != "" {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(s.errMsg)
	}
	if s.attrs != nil {
		s.attrs(sp.Attributes())
	}
	evs := sp.Events()
	evs.EnsureCapacity(len(s.events))
	for _, k := range s.events {
		e := &bd.b.Kernel[k]
		se := evs.AppendEmpty()
		se.SetName(string(e.Kind))
		se.SetTimestamp(pcommon.Timestamp(max(bd.wall(e.TimeNS), 0)))
		eventAttrs(se.Attributes(), e)
	}
}

func spanID(b [16]byte) pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], b[:8])
	return id
}
