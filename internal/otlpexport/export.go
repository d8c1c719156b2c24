package otlpexport

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"vigil/internal/evidence"
)

// Target says where an export goes: an OTLP/HTTP receiver, an OTLP file,
// or both.
type Target struct {
	Endpoint string
	File     string
	Options
	Timeout  time.Duration // per request; 0: Sender's default
	Attempts int           // per request; 0: Sender's default
}

// Result is what an export did.
type Result struct {
	RunID         string
	TraceID       string
	Spans         int
	KernelEvents  int // span events standing for kernel events
	ArchiveEvents int // kernel events in the archive
	Continuations int
	Clock         string
	IDs           string
	Batches       int
	FileBytes     int64
	Send          *Stats // nil without an endpoint
}

// Do builds the export of b and sends and/or writes it. The file is
// written even when sending fails; err reports the first failure.
func Do(ctx context.Context, b *evidence.Bundle, t Target) (Result, error) {
	x, err := Build(b, t.Options)
	if err != nil {
		return Result{}, err
	}
	r := Result{
		RunID: b.Run.RunID, TraceID: x.TraceID, Spans: x.Spans, KernelEvents: x.KernelEvents,
		ArchiveEvents: len(b.Kernel), Continuations: x.Continuations, Clock: x.Clock, IDs: x.IDs,
		Batches: x.NumBatches(),
	}
	var errs []string
	if t.File != "" {
		n, err := WriteFile(t.File, x)
		if err != nil {
			errs = append(errs, fmt.Sprintf("--otlp-file %s: %v", t.File, err))
		}
		r.FileBytes = n
	}
	if t.Endpoint != "" {
		s := Sender{Endpoint: t.Endpoint, Timeout: t.Timeout, Attempts: t.Attempts}
		st, err := s.Send(ctx, x)
		r.Send = &st
		if err != nil {
			errs = append(errs, fmt.Sprintf("OTLP export to %s: %v", t.Endpoint, err))
		}
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return r, nil
}

// Text is the one-paragraph account of an export.
func (r Result) Text(t Target) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s -> trace %s: %d spans, %d of %d kernel events as span events", r.RunID, r.TraceID, r.Spans, r.KernelEvents, r.ArchiveEvents)
	if r.Continuations > 0 {
		fmt.Fprintf(&b, " (%d continuation spans: more than %d events in a span)", r.Continuations, t.maxPerSpan())
	}
	if r.Clock != "run.clock" {
		fmt.Fprintf(&b, "; event times placed by %s (approximate: the archive has no clock anchor)", r.Clock)
	}
	if r.IDs == "derived" {
		b.WriteString("; the archive has no trace context: ids derived from the run id")
	}
	b.WriteByte('\n')
	if t.File != "" && r.FileBytes > 0 {
		fmt.Fprintf(&b, "  %s: %d bytes, %d lines (OTLP/JSON)\n", t.File, r.FileBytes, r.Batches)
	}
	if s := r.Send; s != nil {
		fmt.Fprintf(&b, "  %s: %d of %d requests accepted (%d bytes, %d retries); spans sent %d, rejected %d, failed %d; events sent %d, failed %d\n",
			t.Endpoint, s.Requests, r.Batches, s.Bytes, s.Retries, s.SpansSent, s.SpansRejected, s.SpansFailed, s.EventsSent, s.EventsFailed)
		for _, m := range s.Messages {
			fmt.Fprintf(&b, "    %s\n", m)
		}
	}
	return b.String()
}

func (o Options) maxPerSpan() int {
	if o.MaxEventsPerSpan <= 0 {
		return DefaultMaxEventsPerSpan
	}
	return o.MaxEventsPerSpan
}

// EndpointFromEnv is the traces endpoint the OpenTelemetry environment
// names: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended; "" when neither is
// set. source names the variable.
func EndpointFromEnv() (endpoint, source string) {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return strings.TrimRight(v, "/") + TracesPath, "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	return "", ""
}
