package otlpexport

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// flat is every span of an export with its batch index.
type flatSpan struct {
	batch int
	span  ptrace.Span
}

func spansOf(x *Export) []flatSpan {
	var out []flatSpan
	for bi := range x.NumBatches() {
		td := x.Batch(bi)
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				sp := sss.At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					out = append(out, flatSpan{bi, sp.At(k)})
				}
			}
		}
	}
	return out
}

func intAttr(t *testing.T, m pcommon.Map, key string) int64 {
	t.Helper()
	v, ok := m.Get(key)
	if !ok {
		t.Fatalf("attribute %s missing in %v", key, m.AsRaw())
	}
	return v.Int()
}

func strAttr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// traced is the fixture bundle as vigil record now writes it: a trace
// context, a clock anchor, and tool calls with the workload's span ids.
func traced(n, calls int) *evidence.Bundle {
	b := evidencetest.Bundle(n, calls)
	b.Run.Trace = &wire.TraceContext{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7", Sampled: true}
	b.Run.Clock = &wire.ClockAnchor{MonoNS: 1_000_000_000, UnixNS: 1_767_323_045_000_000_000}
	for i := range b.SDK {
		b.SDK[i].TraceID = b.Run.Trace.TraceID
		b.SDK[i].SpanID = strings.Repeat("0", 13) + string(rune('a'+i/2)) + "01"
	}
	return evidence.Assemble(b.Run, b.Kernel, b.SDK, evidencetest.CleanInput())
}

// TestEveryEventExactlyOnce: however the export is split, every kernel
// event of the archive is one span event, in one span, and every span's
// parent is the run's parent, a span of the export, or a tool-call span of
// the workload.
func TestEveryEventExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name           string
		b              *evidence.Bundle
		perSpan, perRq int
	}{
		{"no sdk layer, defaults", evidencetest.Bundle(300, 0), 0, 0},
		{"untraced tool calls", evidencetest.Bundle(300, 5), 0, 0},
		{"traced tool calls", traced(300, 5), 0, 0},
		{"small spans and requests", traced(300, 5), 7, 20},
		{"one event per span", evidencetest.Bundle(40, 2), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := Build(tc.b, Options{MaxEventsPerSpan: tc.perSpan, MaxEventsPerRequest: tc.perRq})
			if err != nil {
				t.Fatal(err)
			}
			perSpan := tc.perSpan
			if perSpan == 0 {
				perSpan = DefaultMaxEventsPerSpan
			}
			perRq := tc.perRq
			if perRq == 0 {
				perRq = DefaultMaxEventsPerRequest
			}
			seen := map[int64]int{}
			ids := map[pcommon.SpanID]bool{}
			toolSpans := map[string]bool{}
			for _, s := range tc.b.SDK {
				toolSpans[s.SpanID] = true
			}
			batchEvents := make([]int, x.NumBatches())
			spans := spansOf(x)
			for _, fs := range spans {
				ids[fs.span.SpanID()] = true
			}
			for _, fs := range spans {
				sp := fs.span
				if sp.Events().Len() > perSpan {
					t.Errorf("span %q holds %d events, limit %d", sp.Name(), sp.Events().Len(), perSpan)
				}
				batchEvents[fs.batch] += sp.Events().Len()
				for i := 0; i < sp.Events().Len(); i++ {
					seen[intAttr(t, sp.Events().At(i).Attributes(), AttrSeq)]++
				}
				if sp.TraceID().String() != x.TraceID {
					t.Errorf("span %q in trace %s, want %s", sp.Name(), sp.TraceID(), x.TraceID)
				}
				parent := sp.ParentSpanID()
				switch {
				case sp.SpanID().String() == x.RunSpan:
					if !parent.IsEmpty() {
						t.Errorf("run span has parent %s, want none", parent)
					}
				case ids[parent]:
				case toolSpans[parent.String()] && sp.Name() == KernelEventsSpanName:
				default:
					t.Errorf("span %q has parent %s, which is neither in the export nor a tool call", sp.Name(), parent)
				}
			}
			for bi, n := range batchEvents {
				if n > perRq && n > perSpan {
					t.Errorf("batch %d holds %d events, limit %d", bi, n, perRq)
				}
			}
			if len(seen) != len(tc.b.Kernel) || x.KernelEvents != len(tc.b.Kernel) {
				t.Fatalf("%d distinct events exported (%d counted), archive has %d", len(seen), x.KernelEvents, len(tc.b.Kernel))
			}
			for _, k := range tc.b.Kernel {
				if seen[int64(k.Seq)] != 1 {
					t.Errorf("event seq %d exported %d times", k.Seq, seen[int64(k.Seq)])
				}
			}
			if x.Spans != len(spans) {
				t.Errorf("Spans = %d, batches hold %d", x.Spans, len(spans))
			}
		})
	}
}

// TestToolCallEventsUnderWorkloadSpan: with span ids in the SDK log, a
// tool call's kernel events sit in a "kernel events" span whose parent is
// the workload's own tool-call span, and they are the correlation's.
func TestToolCallEventsUnderWorkloadSpan(t *testing.T) {
	b := traced(100, 4)
	x, err := Build(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if x.TraceID != b.Run.Trace.TraceID || x.RunSpan != b.Run.Trace.SpanID || x.IDs != "run.trace" || x.Clock != "run.clock" {
		t.Fatalf("export ids %s/%s from %s, clock %s", x.TraceID, x.RunSpan, x.IDs, x.Clock)
	}
	holders := map[string]ptrace.Span{}
	for _, fs := range spansOf(x) {
		if fs.span.Name() == KernelEventsSpanName {
			holders[fs.span.ParentSpanID().String()] = fs.span
		}
	}
	if len(holders) != 4 {
		t.Fatalf("%d kernel-event spans under tool calls, want 4", len(holders))
	}
	for _, tc := range b.Correlation.ToolCalls {
		h, ok := holders[tc.SpanID]
		if !ok {
			t.Fatalf("tool call %s (span %s) has no kernel events span", tc.ToolCallID, tc.SpanID)
		}
		if got := strAttr(h.Attributes(), AttrGenAIToolCallID); got != tc.ToolCallID {
			t.Errorf("holder of %s says tool call %q", tc.ToolCallID, got)
		}
		want := map[int64]bool{}
		for _, q := range tc.Kernel.Seqs() {
			want[int64(q)] = true
		}
		for i := 0; i < h.Events().Len(); i++ {
			e := h.Events().At(i)
			q := intAttr(t, e.Attributes(), AttrSeq)
			if !want[q] {
				t.Errorf("tool call %s holds seq %d outside its window", tc.ToolCallID, q)
			}
			delete(want, q)
			// Event times are the anchor's mapping of the kernel's clock.
			k := b.Kernel[q]
			if got, wantTS := int64(e.Timestamp()), b.Run.Clock.WallNS(k.TimeNS); got != wantTS {
				t.Errorf("seq %d at %d, want %d", q, got, wantTS)
			}
		}
		if len(want) != 0 {
			t.Errorf("tool call %s lacks %d of its events", tc.ToolCallID, len(want))
		}
	}
}

// TestOpenEventAttributes: an open carries the resolved path, the flags
// as a number and spelled out, the access, the result and the pid.
func TestOpenEventAttributes(t *testing.T) {
	fail := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100,
		Name: wire.Name{Requested: "/etc/shadow"}, Flags: 0, Ret: -13, Access: wire.AccessRead}}
	cut := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100,
		Name: wire.Name{Requested: "/very/long", Truncated: true}, Ret: -36, Access: wire.AccessRead},
		Incomplete: []string{wire.IncompleteName}}
	made := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "openat", Dirfd: -100,
		File: &wire.ResolvedPath{Path: "/tmp/made"}, Name: wire.Name{Requested: "/tmp/made"}, Flags: 0o101, Ret: 3,
		Access: wire.AccessWrite, Create: true, Created: wire.BoolRef(true)}}
	b := evidencetest.WithExtra(20, 0, "", fail, cut, made)
	x, err := Build(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var opens []pcommon.Map
	for _, fs := range spansOf(x) {
		for i := 0; i < fs.span.Events().Len(); i++ {
			if e := fs.span.Events().At(i); e.Name() == "open" {
				opens = append(opens, e.Attributes())
			}
		}
	}
	var ok, denied, incomplete, created int
	for _, m := range opens {
		k := b.Kernel[intAttr(t, m, AttrSeq)]
		if v, has := m.Get(AttrIncomplete); has != (k.Incomplete != nil) || has && !reflect.DeepEqual(v.AsRaw(), []any{wire.IncompleteName}) {
			t.Errorf("seq %d lacks %q but exports %s=%v", k.Seq, k.Incomplete, AttrIncomplete, v.AsRaw())
		} else if has {
			incomplete++
		}
		if got := intAttr(t, m, AttrOpenFlags); uint64(got) != k.Open.Flags {
			t.Errorf("seq %d flags %d, want %d", k.Seq, got, k.Open.Flags)
		}
		if v, has := m.Get(AttrOpenCreated); has != (k.Open.Created != nil) || has && v.Bool() != *k.Open.Created {
			t.Errorf("seq %d created %v exported as %v", k.Seq, k.Open.Created, v.AsRaw())
		} else if has {
			created++
		}
		if intAttr(t, m, AttrProcessPID) != int64(k.PID) || strAttr(m, AttrOpenAccess) != k.Open.Access {
			t.Errorf("seq %d: pid/access %v", k.Seq, m.AsRaw())
		}
		switch {
		case k.Open.Ret >= 0:
			ok++
			if strAttr(m, AttrFilePath) != string(k.Open.File.Path) || strAttr(m, AttrErrorType) != "" {
				t.Errorf("seq %d: %v", k.Seq, m.AsRaw())
			}
		default:
			if string(k.Open.Name.Requested) == "/etc/shadow" {
				denied++
			}
			if strAttr(m, AttrFilePath) != string(k.Open.Name.Path()) || strAttr(m, AttrErrorType) != ErrnoName(-k.Open.Ret) || intAttr(t, m, AttrResult) != k.Open.Ret {
				t.Errorf("failed open: %v", m.AsRaw())
			}
		}
	}
	if denied != 1 || ok == 0 || incomplete != 1 || created != 1 {
		t.Fatalf("%d successful and %d failed opens exported, %d incomplete, %d saying they created", ok, denied, incomplete, created)
	}
}

// TestIOUringOpenAttributes: an io_uring open carries its file and
// whether it created it, a rename its names.
func TestIOUringOpenAttributes(t *testing.T) {
	made := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 18, Op: "openat", Res: 5, UserData: 7,
		File: &wire.ResolvedPath{Path: "/tmp/ring-made"}, Access: wire.AccessWrite, Created: wire.BoolRef(true)}}
	direct := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 18, Op: "openat", Res: 0, UserData: 8, Direct: true}}
	rename := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 35, Op: "renameat", Res: 0, UserData: 10,
		Name: &wire.Name{Requested: "/w/a"}, NewName: &wire.Name{Requested: "/w/b"}}}
	relative := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Res: 0, UserData: 11, Name: &wire.Name{Requested: "sub/x"}}}
	relRename := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 35, Op: "renameat", Res: 0, UserData: 12, Name: &wire.Name{Requested: "p"}, NewName: &wire.Name{Requested: "q"}}}
	symlink := wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 38, Op: "symlinkat", Res: 0, UserData: 13, Target: ptrTo(wire.Bytes("../t")), NewName: &wire.Name{Requested: "/w/s"}}}
	b := evidencetest.WithExtra(20, 0, "", made, direct, rename, relative, relRename, symlink)
	x, err := Build(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, fs := range spansOf(x) {
		for i := 0; i < fs.span.Events().Len(); i++ {
			e := fs.span.Events().At(i)
			if e.Name() != "io_uring" {
				continue
			}
			m := e.Attributes()
			found++
			if strAttr(m, AttrIOUringOp) == "unlinkat" {
				if _, has := m.Get(AttrFilePath); has || strAttr(m, AttrRequested) != "sub/x" {
					t.Errorf("io_uring unlinkat of a relative name exported as %v", m.AsRaw())
				}
				continue
			}
			if strAttr(m, AttrIOUringOp) == "symlinkat" {
				if strAttr(m, AttrLinkTarget) != "../t" || strAttr(m, AttrNewPath) != "/w/s" {
					t.Errorf("io_uring symlinkat exported as %v", m.AsRaw())
				}
				continue
			}
			if strAttr(m, AttrIOUringOp) == "renameat" && strAttr(m, AttrRequested) == "p" {
				if _, has := m.Get(AttrNewPath); has || strAttr(m, AttrNewRequested) != "q" {
					t.Errorf("io_uring renameat of relative names exported as %v", m.AsRaw())
				}
				continue
			}
			if strAttr(m, AttrIOUringOp) == "renameat" {
				if strAttr(m, AttrFilePath) != "/w/a" || strAttr(m, AttrNewPath) != "/w/b" {
					t.Errorf("io_uring renameat exported as %v", m.AsRaw())
				}
				continue
			}
			if _, isDirect := m.Get(AttrIOUringDirect); isDirect {
				if _, has := m.Get(AttrFilePath); has {
					t.Errorf("direct io_uring open exported with a path: %v", m.AsRaw())
				}
				continue
			}
			if v, has := m.Get(AttrOpenCreated); !has || !v.Bool() || strAttr(m, AttrFilePath) != "/tmp/ring-made" || strAttr(m, AttrIOUringOp) != "openat" {
				t.Errorf("io_uring open exported as %v", m.AsRaw())
			}
		}
	}
	if found != 6 {
		t.Fatalf("%d io_uring events exported, want 6", found)
	}
}

// TestExportIsDeterministic: the same archive exports to the same bytes,
// so a retried export sends the same span ids.
func TestExportIsDeterministic(t *testing.T) {
	var out [2][]byte
	for i := range out {
		x, err := Build(evidencetest.Bundle(200, 3), Options{MaxEventsPerSpan: 9})
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = MarshalFile(x); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("two exports of one archive differ")
	}
	lines := bytes.Count(out[0], []byte("\n"))
	var u ptrace.JSONUnmarshaler
	for i, line := range bytes.Split(bytes.TrimSpace(out[0]), []byte("\n")) {
		if _, err := u.UnmarshalTraces(line); err != nil {
			t.Fatalf("line %d of %d is not OTLP/JSON: %v", i+1, lines, err)
		}
	}
}

func TestBadTraceContextRefused(t *testing.T) {
	for _, tc := range []wire.TraceContext{
		{TraceID: "xyz", SpanID: "00f067aa0ba902b7"},
		{TraceID: strings.Repeat("0", 32), SpanID: "00f067aa0ba902b7"},
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902"},
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7", ParentSpanID: "nothex!!nothex!!"},
	} {
		b := evidencetest.Bundle(10, 0)
		b.Run.Trace = &tc
		if _, err := Build(b, Options{}); err == nil || !strings.Contains(err.Error(), "run.json trace.") {
			t.Errorf("%+v: err %v, want one naming the field", tc, err)
		}
	}
}

func TestOpenFlagsText(t *testing.T) {
	for _, tc := range []struct {
		flags uint64
		want  string
	}{
		{0, "O_RDONLY"},
		{0o1101, "O_WRONLY|O_CREAT|O_TRUNC"},
		{0o2000002, "O_RDWR|O_CLOEXEC"},
		{0o4010001, "O_WRONLY|O_SYNC"},
		{0o10001, "O_WRONLY|O_DSYNC"},
		{0o200000, "O_RDONLY|0x10000"}, // O_DIRECTORY: arch-dependent, left as bits
	} {
		if got := OpenFlagsText(tc.flags); got != tc.want {
			t.Errorf("OpenFlagsText(%#o) = %q, want %q", tc.flags, got, tc.want)
		}
	}
	if ErrnoName(2) != "ENOENT" || ErrnoName(4095) != "errno 4095" {
		t.Errorf("ErrnoName: %q %q", ErrnoName(2), ErrnoName(4095))
	}
}

// TestContinuationsStayInTheirTrace: when the workload's trace is not the
// run's (its SDK ignored TRACEPARENT), a tool call's kernel events and
// their continuation spans all stay in the workload's trace.
func TestContinuationsStayInTheirTrace(t *testing.T) {
	b := traced(100, 2)
	const other = "11111111111111111111111111111111"
	for i := range b.SDK {
		b.SDK[i].TraceID = other
	}
	b = evidence.Assemble(b.Run, b.Kernel, b.SDK, evidencetest.CleanInput())
	x, err := Build(b, Options{MaxEventsPerSpan: 3})
	if err != nil {
		t.Fatal(err)
	}
	traceOf := map[pcommon.SpanID]string{}
	var spans []ptrace.Span
	for _, fs := range spansOf(x) {
		traceOf[fs.span.SpanID()] = fs.span.TraceID().String()
		spans = append(spans, fs.span)
	}
	conts := 0
	for _, s := range spans {
		if !strings.HasSuffix(s.Name(), ContinuedSuffix) {
			continue
		}
		conts++
		if s.TraceID().String() != traceOf[s.ParentSpanID()] {
			t.Fatalf("%q in trace %s, its parent in %s", s.Name(), s.TraceID(), traceOf[s.ParentSpanID()])
		}
		if strings.HasPrefix(s.Name(), KernelEventsSpanName) && s.TraceID().String() != other {
			t.Fatalf("tool call continuation in trace %s, want %s", s.TraceID(), other)
		}
	}
	if conts == 0 {
		t.Fatal("no continuation spans")
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestSymlinkTargetExported: a symlink's target is text the event holds,
// exported beside the link's path.
func TestSymlinkTargetExported(t *testing.T) {
	link := wire.Kernel{Kind: wire.KindSymlink, Hook: "tp_btf/sys_exit", FileOp: &wire.FileOp{Syscall: "symlinkat", Target: ptrTo(wire.Bytes("/etc/shadow")),
		NewName: &wire.Name{Requested: "/w/l"}}}
	x, err := Build(evidencetest.WithExtra(20, 0, "", link), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range spansOf(x) {
		for i := 0; i < fs.span.Events().Len(); i++ {
			if e := fs.span.Events().At(i); e.Name() == "symlink" {
				if m := e.Attributes(); strAttr(m, AttrLinkTarget) != "/etc/shadow" || strAttr(m, AttrNewPath) != "/w/l" {
					t.Errorf("symlink exported as %v", m.AsRaw())
				}
				return
			}
		}
	}
	t.Fatal("no symlink event exported")
}
