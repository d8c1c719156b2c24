package workload

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"vigil/internal/atomicfile"
)

// Environment variables the workload reads itself. The SDK reads the
// OTEL_SPAN_*_LIMIT family on its own.
const (
	EnvSDKDisabled     = "OTEL_SDK_DISABLED"
	EnvSpanEventLimit  = "OTEL_SPAN_EVENT_COUNT_LIMIT"
	LimitSourceDefault = "sdk-default"
	LimitSourceEnv     = "env:" + EnvSpanEventLimit
	LimitSourceFlag    = "flag"
	LimitSourceOff     = "off"
	instrumentationLib = "vigil/internal/workload"
)

// sdkDisabled reports whether OTEL_SDK_DISABLED asks for no telemetry
// (the specification's value is case-insensitive "true").
func sdkDisabled() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(EnvSDKDisabled)), "true")
}

// tracing is the SDK set up for one run.
type tracing struct {
	tp          *sdktrace.TracerProvider
	tracer      trace.Tracer
	observer    *rootObserver
	file        *otlpFileExporter // nil without --trace-out
	otlp        *countingExporter // nil without --otlp-endpoint
	limit       int               // effective per-span event limit, -1 unlimited
	limitSource string
	warnings    []string
}

// eventLimit decides the per-span event limit the way the SDK does and
// says where it came from. limits are the SDK's own NewSpanLimits (its
// defaults overlaid with its environment variables); only an explicit
// SpanEventLimit changes them, and then raw limits must be passed.
func eventLimit(cfg *Config) (limits sdktrace.SpanLimits, explicit bool, source string, warnings []string) {
	limits = sdktrace.NewSpanLimits()
	source = LimitSourceDefault
	if v := os.Getenv(EnvSpanEventLimit); v != "" {
		if _, err := strconv.Atoi(v); err == nil {
			source = LimitSourceEnv
		} else {
			warnings = append(warnings, fmt.Sprintf("%s=%q is not an integer; the SDK ignores it and uses %d", EnvSpanEventLimit, v, limits.EventCountLimit))
		}
	}
	if cfg.SpanEventLimit != nil {
		if source == LimitSourceEnv {
			warnings = append(warnings, fmt.Sprintf("--span-event-limit %d overrides %s=%s", *cfg.SpanEventLimit, EnvSpanEventLimit, os.Getenv(EnvSpanEventLimit)))
		}
		limits.EventCountLimit = *cfg.SpanEventLimit
		return limits, true, LimitSourceFlag, warnings
	}
	return limits, false, source, warnings
}

func setupTracing(ctx context.Context, cfg *Config, traceFile *atomicfile.File) (*tracing, error) {
	t := &tracing{observer: newRootObserver()}
	limits, explicit, source, warnings := eventLimit(cfg)
	t.limit, t.limitSource, t.warnings = limits.EventCountLimit, source, warnings
	if t.limit < 0 {
		t.limit = -1
	}

	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", AgentName)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, &ConfigError{Flag: "OTEL_RESOURCE_ATTRIBUTES", Msg: err.Error()}
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(t.observer),
	}
	if explicit {
		opts = append(opts, sdktrace.WithRawSpanLimits(limits))
	}
	if traceFile != nil {
		t.file = newOTLPFileExporter(traceFile)
		opts = append(opts, sdktrace.WithBatcher(t.file))
	}
	if cfg.OTLPEndpoint != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.OTLPEndpoint))
		if err != nil {
			return nil, &ConfigError{Flag: "--otlp-endpoint", Msg: err.Error()}
		}
		t.otlp = &countingExporter{next: exp}
		opts = append(opts, sdktrace.WithBatcher(t.otlp))
	}
	t.tp = sdktrace.NewTracerProvider(opts...)
	t.tracer = t.tp.Tracer(instrumentationLib)
	return t, nil
}

// countingExporter counts the spans an exporter accepted and the spans it
// failed to export, so network export failures are reported, not lost.
type countingExporter struct {
	next     sdktrace.SpanExporter
	mu       sync.Mutex
	exported int
	failed   int
	lastErr  error
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.next.ExportSpans(ctx, spans)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed += len(spans)
		c.lastErr = err
	} else {
		c.exported += len(spans)
	}
	return err
}

func (c *countingExporter) Shutdown(ctx context.Context) error { return c.next.Shutdown(ctx) }

func (c *countingExporter) stats() (exported, failed int, lastErr error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exported, c.failed, c.lastErr
}
