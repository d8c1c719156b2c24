// Package otlpexport turns an evidence archive into OpenTelemetry traces
// (OTLP), joined to the trace of the workload that ran under vigil record.
//
// The run is one span, with the trace id and span id vigil record gave the
// command as TRACEPARENT, so the workload's own spans are its children.
// Each process of the run is a span (fork to exit) under the span of the
// process that forked it. Every kernel event becomes one span event: under
// the tool call it belongs to (by the archive's correlation report) when
// there is one, in a "kernel events" span whose parent is the workload's
// tool-call span, and otherwise in its process's span. Span events rather
// than log records, because trace backends such as Jaeger store and show
// span events with the span, and drop logs.
//
// Nothing is dropped to fit limits: a span never holds more than
// Options.MaxEventsPerSpan events (the rest go to continuation spans under
// it, each counted), a request never holds more than
// Options.MaxEventsPerRequest spans and span events, and every span and
// event sent, rejected by the receiver or not sent is counted in Stats.
//
// Attribute names follow the OpenTelemetry semantic conventions where one
// exists (process.*, thread.id, file.path, network.*, error.type,
// gen_ai.tool.*, host.*, os.*, service.*) and use the vigil.* namespace
// otherwise; the README lists them.
//
// Span ids vigil makes are derived from the run id and what the span stands
// for, so exporting an archive twice sends the same spans.
package otlpexport
