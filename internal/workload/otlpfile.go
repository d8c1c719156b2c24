package workload

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"vigil/internal/atomicfile"
)

// otlpFileExporter writes the OTLP file format: one TracesData object per
// line in OTLP/JSON (hex ids, nanosecond times as strings), one line per
// export batch. The pdata library does the encoding.
type otlpFileExporter struct {
	mu      sync.Mutex
	w       *atomicfile.File
	spans   int
	lines   int
	bytes   int64
	stopped bool
	err     error // first write error: the batch processor only logs it
}

func newOTLPFileExporter(w *atomicfile.File) *otlpFileExporter { return &otlpFileExporter{w: w} }

var errExporterStopped = errors.New("otlp file exporter: export after shutdown")

func (e *otlpFileExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	var m ptrace.JSONMarshaler
	line, err := m.MarshalTraces(spansToTraces(spans))
	if err != nil {
		e.mu.Lock()
		if e.err == nil {
			e.err = err
		}
		e.mu.Unlock()
		return err
	}
	line = append(line, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errExporterStopped
	}
	n, err := e.w.Write(line)
	e.bytes += int64(n)
	if err != nil {
		if e.err == nil {
			e.err = err
		}
		return err
	}
	e.spans += len(spans)
	e.lines++
	return nil
}

// Shutdown stops further exports; the file itself is committed by Run
// after the provider has flushed.
func (e *otlpFileExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	return nil
}

func (e *otlpFileExporter) stats() (spans, lines int, bytes int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.spans, e.lines, e.bytes, e.err
}

type scopeKey struct {
	res                   attribute.Distinct
	name, version, schema string
	attrs                 attribute.Distinct
}

// spansToTraces converts SDK span data to pdata, grouping spans by
// resource and instrumentation scope as OTLP does.
func spansToTraces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	byRes := map[attribute.Distinct]ptrace.ResourceSpans{}
	byScope := map[scopeKey]ptrace.ScopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		resKey := res.Equivalent()
		rs, ok := byRes[resKey]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			rs.SetSchemaUrl(res.SchemaURL())
			putAttrs(rs.Resource().Attributes(), res.Attributes())
			byRes[resKey] = rs
		}
		sc := s.InstrumentationScope()
		k := scopeKey{resKey, sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		ss, ok := byScope[k]
		if !ok {
			ss = rs.ScopeSpans().AppendEmpty()
			ss.SetSchemaUrl(sc.SchemaURL)
			ss.Scope().SetName(sc.Name)
			ss.Scope().SetVersion(sc.Version)
			putAttrs(ss.Scope().Attributes(), sc.Attributes.ToSlice())
			byScope[k] = ss
		}
		fillSpan(ss.Spans().AppendEmpty(), s)
	}
	return td
}

// OTLP span flags: the low byte is the W3C trace flags; these two bits say
// whether the parent was remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func fillSpan(d ptrace.Span, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	d.SetTraceID(pcommon.TraceID(sc.TraceID()))
	d.SetSpanID(pcommon.SpanID(sc.SpanID()))
	d.TraceState().FromRaw(sc.TraceState().String())
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if p := s.Parent(); p.IsValid() {
		d.SetParentSpanID(pcommon.SpanID(p.SpanID()))
		if p.IsRemote() {
			flags |= flagIsRemote
		}
	}
	d.SetFlags(flags)
	d.SetName(s.Name())
	d.SetKind(spanKind(s.SpanKind()))
	d.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
	d.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
	putAttrs(d.Attributes(), s.Attributes())
	d.SetDroppedAttributesCount(uint32(s.DroppedAttributes()))

	evs := s.Events()
	d.Events().EnsureCapacity(len(evs))
	for _, ev := range evs {
		de := d.Events().AppendEmpty()
		de.SetName(ev.Name)
		de.SetTimestamp(pcommon.NewTimestampFromTime(ev.Time))
		putAttrs(de.Attributes(), ev.Attributes)
		de.SetDroppedAttributesCount(uint32(ev.DroppedAttributeCount))
	}
	d.SetDroppedEventsCount(uint32(s.DroppedEvents()))

	for _, l := range s.Links() {
		dl := d.Links().AppendEmpty()
		dl.SetTraceID(pcommon.TraceID(l.SpanContext.TraceID()))
		dl.SetSpanID(pcommon.SpanID(l.SpanContext.SpanID()))
		dl.TraceState().FromRaw(l.SpanContext.TraceState().String())
		putAttrs(dl.Attributes(), l.Attributes)
		dl.SetDroppedAttributesCount(uint32(l.DroppedAttributeCount))
	}
	d.SetDroppedLinksCount(uint32(s.DroppedLinks()))

	st := s.Status()
	switch st.Code {
	case codes.Error:
		d.Status().SetCode(ptrace.StatusCodeError)
		d.Status().SetMessage(st.Description)
	case codes.Ok:
		d.Status().SetCode(ptrace.StatusCodeOk)
	}
}

func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	}
	return ptrace.SpanKindUnspecified
}

func putAttrs(m pcommon.Map, kvs []attribute.KeyValue) {
	m.EnsureCapacity(len(kvs))
	for _, kv := range kvs {
		k, v := string(kv.Key), kv.Value
		switch v.Type() {
		case attribute.BOOL:
			m.PutBool(k, v.AsBool())
		case attribute.INT64:
			m.PutInt(k, v.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, v.AsFloat64())
		case attribute.STRING:
			m.PutStr(k, v.AsString())
		case attribute.BOOLSLICE:
			s := m.PutEmptySlice(k)
			for _, x := range v.AsBoolSlice() {
				s.AppendEmpty().SetBool(x)
			}
		case attribute.INT64SLICE:
			s := m.PutEmptySlice(k)
			for _, x := range v.AsInt64Slice() {
				s.AppendEmpty().SetInt(x)
			}
		case attribute.FLOAT64SLICE:
			s := m.PutEmptySlice(k)
			for _, x := range v.AsFloat64Slice() {
				s.AppendEmpty().SetDouble(x)
			}
		case attribute.STRINGSLICE:
			s := m.PutEmptySlice(k)
			for _, x := range v.AsStringSlice() {
				s.AppendEmpty().SetStr(x)
			}
		default:
			// Kinds the workload never sets keep their text form rather
			// than disappearing.
			m.PutStr(k, v.String())
		}
	}
}
