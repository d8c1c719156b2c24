package workload

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// makePayload returns n deterministic printable bytes, so payloads are the
// same on every run and readable in a trace file.
func makePayload(n int) []byte {
	const pattern = "vigil-payload-0123456789abcdefghijklmnopqrstuvwxyz-"
	b := make([]byte, n)
	for i := range b {
		b[i] = pattern[i%len(pattern)]
	}
	return b
}

// addSpanEvent adds pressure event i to span. When span does not record
// (tracing off, or not sampled) it returns before building anything, so
// the off path costs a method call and no allocation.
func addSpanEvent(span trace.Span, i int, payload string) {
	if !span.IsRecording() {
		return
	}
	span.AddEvent(SpanEventName, trace.WithAttributes(
		attribute.Int(AttrEventIndex, i),
		attribute.String(AttrEventPayload, payload),
	))
}

// addSpanEvents adds events 0..n-1 in order; with an SDK limit L the SDK
// keeps the newest L and counts the rest as dropped.
func addSpanEvents(span trace.Span, n int, payload string) {
	if !span.IsRecording() {
		return
	}
	for i := 0; i < n; i++ {
		addSpanEvent(span, i, payload)
	}
}
