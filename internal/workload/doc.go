// Package workload is vigil's deterministic agent workload: a scripted fake
// model asks for a fixed sequence of tool calls, the agent executes them for
// real under a work directory, then performs the configured event pressure
// (worker files for the kernel side, span events for the tracing side) and
// reports what it did in one Result line.
//
// Tracing uses the official OpenTelemetry Go SDK. Span limits are the SDK's
// own: its defaults and its standard environment variables
// (OTEL_SPAN_EVENT_COUNT_LIMIT and friends), unless Config.SpanEventLimit
// sets the event limit explicitly, which the Result then says. Retained and
// dropped span-event counts are read from the SDK's span data at End, so
// the Result reports what the SDK kept, not what was asked for.
//
// The same Config gives the same trace shape (span names, kinds,
// attributes, event counts, parent/child structure) on every run; only ids
// and times differ.
package workload
