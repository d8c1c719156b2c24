package workload

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// noRecordingSpan is the span the agent uses with tracing off.
func noRecordingSpan() trace.Span { return trace.SpanFromContext(context.Background()) }

// recordingSpan is a root span of a real SDK provider with no exporter and
// the default event limit (128), so benchmarks measure the SDK's steady
// per-event cost, eviction included.
func recordingSpan(tb testing.TB) (trace.Span, func()) {
	tb.Helper()
	limits := sdktrace.NewSpanLimits()
	limits.EventCountLimit = 128
	tp := sdktrace.NewTracerProvider(sdktrace.WithRawSpanLimits(limits))
	_, span := tp.Tracer("bench").Start(context.Background(), RootSpanName)
	return span, func() {
		span.End()
		tp.Shutdown(context.Background())
	}
}
