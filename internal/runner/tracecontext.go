//go:build linux

package runner

import (
	"context"
	"crypto/rand"
	"strings"

	"vigil/internal/wire"

	"go.opentelemetry.io/contrib/propagators/envcar"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sys/unix"
)

// traceEnvNames are the variables of the OpenTelemetry environment carrier
// for W3C trace context; vigil replaces inherited values with the run's.
var traceEnvNames = []string{"TRACEPARENT", "TRACESTATE"}

// runTrace gives the run its place in a trace. When vigil itself was
// started inside one (TRACEPARENT in its environment), the run continues
// that trace as a child of the caller's span and keeps its sampling flag
// and trace state; otherwise the run starts a new, sampled trace. The run
// gets a span id of its own, which is what the child inherits: spans the
// command's OpenTelemetry SDK makes are children of the run.
func runTrace() (wire.TraceContext, trace.SpanContext) {
	prop := propagation.TraceContext{}
	parent := trace.SpanContextFromContext(prop.Extract(context.Background(), &envcar.Carrier{}))
	cfg := trace.SpanContextConfig{TraceFlags: trace.FlagsSampled}
	tc := wire.TraceContext{}
	if parent.IsValid() {
		cfg.TraceID, cfg.TraceFlags, cfg.TraceState = parent.TraceID(), parent.TraceFlags(), parent.TraceState()
		tc.ParentSpanID = parent.SpanID().String()
	} else {
		_, _ = rand.Read(cfg.TraceID[:]) // crypto/rand.Read never fails
	}
	for !cfg.SpanID.IsValid() {
		_, _ = rand.Read(cfg.SpanID[:])
	}
	sc := trace.NewSpanContext(cfg)
	tc.TraceID, tc.SpanID = sc.TraceID().String(), sc.SpanID().String()
	tc.Sampled = sc.IsSampled()
	tc.TraceState = sc.TraceState().String()
	return tc, sc
}

// traceEnv is env without inherited trace context, plus sc's TRACEPARENT
// (and TRACESTATE when there is one), set through the environment carrier.
func traceEnv(env []string, sc trace.SpanContext) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isTraceEnv(name) {
			out = append(out, kv)
		}
	}
	carrier := &envcar.Carrier{SetEnvFunc: func(k, v string) { out = append(out, k+"="+v) }}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return out
}

func isTraceEnv(name string) bool {
	for _, n := range traceEnvNames {
		if name == n {
			return true
		}
	}
	return false
}

// monoNow reads CLOCK_MONOTONIC, the clock of kernel event times.
func monoNow() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return uint64(ts.Nano())
}
