package workload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/contrib/propagators/envcar"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"vigil/internal/atomicfile"
	"vigil/internal/wire"
)

// userPrompt is the scripted conversation's opening message.
const userPrompt = "Write a short plan to notes/plan.md, read it back, and confirm its checksum."

// MeasuredOutput is how the agent writes --trace-out and --result-out:
// atomically, but unsynced, because vigil bench times the whole agent
// process and a sync would charge disk latency to the arm being measured.
var MeasuredOutput = atomicfile.Options{Unsynced: true}

// flushTimeout bounds the SDK's final flush (file and OTLP export).
const flushTimeout = 30 * time.Second

// Run performs one agent run.
//
// Bad input or a setup failure returns an error (a *ConfigError for bad
// input, naming the flag) with a zero Result, having left no files behind.
// Once the run has started, a failure (a tool call, the worker files, the
// trace file) gives a Result with Status "error" and the same error.
// Otherwise the Result has Status "ok" and err is nil.
//
// Run reads OTEL_SDK_DISABLED, and VIGIL_SDK_EVENT_LOG / VIGIL_RUN_ID when
// Config.SDKEventLog / Config.RunID are empty; the SDK reads its own
// OTEL_* variables.
func Run(ctx context.Context, cfg Config) (wire.AgentResult, error) {
	if err := cfg.validate(); err != nil {
		return wire.AgentResult{}, err
	}
	s, err := setup(ctx, &cfg)
	if err != nil {
		return wire.AgentResult{}, err
	}
	if s.tr != nil {
		ctx = s.inheritTrace(ctx)
	}
	return s.run(ctx)
}

// inheritTrace continues the trace TRACEPARENT names (the OpenTelemetry
// environment carrier; vigil record sets it to the run's span), so the
// agent's spans are children of whoever started it. A malformed value is
// reported and the run starts a trace of its own.
func (s *session) inheritTrace(ctx context.Context) context.Context {
	raw := os.Getenv("TRACEPARENT")
	if raw == "" {
		return ctx
	}
	out := propagation.TraceContext{}.Extract(ctx, &envcar.Carrier{})
	sc := trace.SpanContextFromContext(out)
	if !sc.IsValid() {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("TRACEPARENT=%q is not a W3C traceparent; the run starts a trace of its own", raw))
		return ctx
	}
	s.res.ParentSpanID = sc.SpanID().String()
	return out
}

// session is one run after setup: everything it created, so cleanup can
// undo exactly that.
type session struct {
	cfg        *Config
	res        wire.AgentResult
	start      time.Time
	otelOn     bool
	traceFile  *atomicfile.File
	log        *sdkLog
	tr         *tracing
	inject     bool
	workDir    string
	removeWork bool // the work directory itself is ours to remove
	workerDir  string
	toolRoot   string
	payload    []byte
	// spanAdded is how many span events the run gave the SDK: the
	// requested number once the span-event phase ran, 0 if the run
	// failed before it.
	spanAdded int
}

func setup(ctx context.Context, cfg *Config) (s *session, err error) {
	s = &session{cfg: cfg, start: time.Now()}
	s.res = wire.AgentResult{
		Schema: wire.AgentResultSchema, KernelEvents: cfg.KernelEvents, Concurrency: cfg.Concurrency,
		PayloadBytes: cfg.PayloadBytes, SpanEventsRequested: cfg.SpanEvents,
		SpanEventLimit: -1, SpanEventLimitSource: LimitSourceOff,
		RetainedFirstIndex: -1, RetainedLastIndex: -1,
		PhasesMS: map[string]float64{}, Status: wire.StatusOK, Kept: cfg.Keep,
	}
	// Undo everything created so far if setup fails.
	defer func() {
		if err != nil {
			s.abortSetup()
			s = nil
		}
	}()

	s.otelOn = cfg.OTel
	switch {
	case !cfg.OTel:
		s.res.OTelDisabledBy = "flag"
	case sdkDisabled():
		s.otelOn = false
		s.res.OTelDisabledBy = "env:" + EnvSDKDisabled
	}
	s.res.OTel = s.otelOn

	if cfg.TraceOut != "" {
		if !s.otelOn {
			s.res.Warnings = append(s.res.Warnings, "--trace-out "+cfg.TraceOut+" not written: tracing is off ("+s.res.OTelDisabledBy+")")
		} else if s.traceFile, err = atomicfile.Open(cfg.TraceOut, MeasuredOutput); err != nil {
			return s, &ConfigError{Flag: "--trace-out", Msg: err.Error()}
		}
	}

	logPath, runID := cfg.SDKEventLog, cfg.RunID
	if logPath == "" {
		logPath = os.Getenv(wire.EnvSDKEventLog)
	}
	if runID == "" {
		runID = os.Getenv(wire.EnvRunID)
	}
	if logPath != "" {
		if runID == "" {
			// Every SDK line names a run; without one from vigil record the
			// run gets its own.
			runID = newRunID()
		}
		if s.log, err = openSDKLog(logPath, runID); err != nil {
			return s, &ConfigError{Flag: "--sdk-event-log (" + wire.EnvSDKEventLog + ")", Msg: err.Error()}
		}
		s.res.SDKEventLog, s.res.RunID = logPath, runID
	}

	if cfg.FailEvery > 0 {
		n, err := countInvocation(cfg.FailCounterFile)
		if err != nil {
			return s, &ConfigError{Flag: "--fail-counter-file", Msg: err.Error()}
		}
		s.res.Invocation = n
		s.inject = n%cfg.FailEvery == 0
		s.res.FailInjected = s.inject
	}

	if err := s.makeWorkDir(); err != nil {
		return s, err
	}

	if s.otelOn {
		if s.tr, err = setupTracing(ctx, cfg, s.traceFile); err != nil {
			return s, err
		}
		s.res.SpanEventLimit, s.res.SpanEventLimitSource = s.tr.limit, s.tr.limitSource
		s.res.Warnings = append(s.res.Warnings, s.tr.warnings...)
		s.res.OTLPEndpoint = cfg.OTLPEndpoint
	}
	s.payload = makePayload(cfg.PayloadBytes)
	return s, nil
}

func (s *session) makeWorkDir() error {
	if s.cfg.WorkDir == "" {
		d, err := os.MkdirTemp("", "vigil-agent-")
		if err != nil {
			return fmt.Errorf("create a temporary work directory: %w", err)
		}
		s.workDir, s.removeWork = d, !s.cfg.Keep
	} else {
		d, err := filepath.Abs(s.cfg.WorkDir)
		if err != nil {
			return &ConfigError{Flag: "--work-dir", Msg: err.Error()}
		}
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return &ConfigError{Flag: "--work-dir", Msg: err.Error()}
			}
			s.removeWork = !s.cfg.Keep
		} else if err != nil {
			return &ConfigError{Flag: "--work-dir", Msg: err.Error()}
		}
		s.workDir = d
	}
	s.workerDir = filepath.Join(s.workDir, "workers")
	s.toolRoot = filepath.Join(s.workDir, "agent")
	s.res.WorkDir, s.res.WorkerDir = s.workDir, s.workerDir
	if err := os.MkdirAll(s.workerDir, 0o755); err != nil {
		return &ConfigError{Flag: "--work-dir", Msg: err.Error()}
	}
	return nil
}

func (s *session) abortSetup() {
	if s.traceFile != nil {
		s.traceFile.Abort()
	}
	if s.log != nil {
		s.log.close()
	}
	if s.tr != nil {
		s.tr.tp.Shutdown(context.Background())
	}
	if s.workerDir != "" {
		os.Remove(s.workerDir)
	}
	if s.removeWork {
		os.Remove(s.workDir)
	}
}

func newRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("agent-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return "agent-" + hex.EncodeToString(b[:])
}

// phase records the time since t0 under name and returns now.
func (s *session) phase(name string, t0 time.Time) time.Time {
	now := time.Now()
	s.res.PhasesMS[name] += float64(now.Sub(t0).Nanoseconds()) / 1e6
	return now
}

func (s *session) startSpan(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if s.tr == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return s.tr.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// spanContext is the ids of a span this run made and records; without
// tracing the span in hand is an inherited parent's, and an unsampled
// span is never exported, so neither has ids worth logging.
func (s *session) spanContext(span trace.Span) trace.SpanContext {
	if s.tr == nil || !span.IsRecording() {
		return trace.SpanContext{}
	}
	return span.SpanContext()
}

func (s *session) run(ctx context.Context) (wire.AgentResult, error) {
	s.phase("setup", s.start)
	cfg := s.cfg
	ctx, root := s.startSpan(ctx, RootSpanName, trace.SpanKindInternal,
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrProviderName, ProviderName),
		attribute.String(AttrAgentName, AgentName),
		attribute.String(AttrRequestModel, ModelName),
		attribute.Int(AttrKernelEvents, cfg.KernelEvents),
		attribute.Int(AttrSpanEvents, cfg.SpanEvents),
		attribute.Int(AttrConcurrency, cfg.Concurrency),
		attribute.Int(AttrPayloadBytes, cfg.PayloadBytes),
	)

	rootSC := s.spanContext(root) // read while it records
	if rootSC.IsValid() {
		s.res.TraceID, s.res.RootSpanID = rootSC.TraceID().String(), rootSC.SpanID().String()
	}
	runErr := s.agentLoop(ctx)
	t := time.Now()

	if runErr == nil {
		var st fileWorkStats
		runErr = doFileWork(ctx, s.workerDir, cfg.KernelEvents, cfg.Concurrency, s.payload, &st)
		s.res.WorkerOpens = int(st.opens.Load())
		s.res.FilesWritten = int(st.written.Load())
		s.res.FilesRead = int(st.read.Load())
		s.res.WorkerBytesWritten = st.bytesWritten.Load()
		s.res.WorkerBytesRead = st.bytesRead.Load()
		if runErr != nil {
			runErr = fmt.Errorf("worker files: %w", runErr)
		}
		t = s.phase("file_work", t)
	}
	if runErr == nil {
		addSpanEvents(root, cfg.SpanEvents, string(s.payload))
		s.spanAdded = cfg.SpanEvents
		t = s.phase("span_events", t)
	}

	if root.IsRecording() {
		root.SetAttributes(
			attribute.Int(AttrFilesWritten, s.res.FilesWritten),
			attribute.Int(AttrFilesRead, s.res.FilesRead),
			attribute.Int(AttrWorkerOpens, s.res.WorkerOpens),
		)
		if runErr != nil {
			root.SetStatus(codes.Error, runErr.Error())
			root.SetAttributes(attribute.String(AttrErrorType, "run_error"))
		}
	}
	root.End()
	if err := s.flush(); err != nil && runErr == nil {
		runErr = err
	}
	t = s.phase("flush", t)

	s.cleanup()
	s.phase("cleanup", t)

	status := wire.StatusOK
	if runErr != nil {
		status = wire.StatusError
	}
	s.log.emit(wire.SDKRunFinished, "", "", status, rootSC)
	n, err := s.log.close()
	s.res.SDKEvents = n
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("sdk event log %s: %w", s.res.SDKEventLog, err)
		status = wire.StatusError
	}
	s.res.Status = status
	if runErr != nil {
		s.res.Error = runErr.Error()
	}
	s.phase("total", s.start)
	return s.res, runErr
}

// agentLoop runs the scripted conversation: model call, tool calls,
// model call ... until the model answers without tool calls.
func (s *session) agentLoop(ctx context.Context) error {
	model := &scriptedModel{}
	msgs := []Message{{Role: "user", Content: userPrompt}}
	for {
		t := time.Now()
		resp, err := s.chat(ctx, model, msgs)
		s.phase("model", t)
		if err != nil {
			return err
		}
		msgs = append(msgs, Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			s.res.FinalAnswer = resp.Content
			return nil
		}
		for _, tc := range resp.ToolCalls {
			t := time.Now()
			out, err := s.executeTool(ctx, tc)
			s.phase("tools", t)
			if err != nil {
				return fmt.Errorf("tool call %s (%s): %w", tc.ID, tc.Name, err)
			}
			msgs = append(msgs, Message{Role: "tool", Content: out, ToolCallID: tc.ID})
		}
	}
}

func (s *session) chat(ctx context.Context, model *scriptedModel, msgs []Message) (ModelResponse, error) {
	_, span := s.startSpan(ctx, ChatSpanNamePrefix+ModelName, trace.SpanKindClient,
		attribute.String(AttrOperationName, OpChat),
		attribute.String(AttrProviderName, ProviderName),
		attribute.String(AttrRequestModel, ModelName),
	)
	defer span.End()
	resp, err := model.chat(msgs)
	s.res.ModelCalls++
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String(AttrErrorType, "model_error"))
		return resp, err
	}
	s.res.InputTokens += resp.InputTokens
	s.res.OutputTokens += resp.OutputTokens
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String(AttrResponseModel, resp.Model),
			attribute.String(AttrResponseID, resp.ID),
			attribute.StringSlice(AttrFinishReasons, []string{resp.FinishReason}),
			attribute.Int(AttrInputTokens, resp.InputTokens),
			attribute.Int(AttrOutputTokens, resp.OutputTokens),
		)
	}
	return resp, nil
}

func (s *session) executeTool(ctx context.Context, tc ToolCall) (string, error) {
	tl, known := tools[tc.Name]
	_, span := s.startSpan(ctx, ToolSpanNamePrefix+tc.Name, trace.SpanKindInternal,
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, tc.Name),
		attribute.String(AttrToolCallID, tc.ID),
		attribute.String(AttrToolType, "function"),
		attribute.String(AttrToolDesc, tl.description),
	)
	defer span.End()
	s.res.ToolCalls++
	s.log.emit(wire.SDKToolCallStarted, tc.ID, tc.Name, "", s.spanContext(span))
	var out string
	var err error
	switch {
	case s.inject:
		// Only the first tool call of an injected failure fails.
		s.inject = false
		err = fmt.Errorf("injected failure: invocation %d is a multiple of --fail-every %d", s.res.Invocation, s.cfg.FailEvery)
	case !known:
		err = fmt.Errorf("unknown tool %q", tc.Name)
	default:
		out, err = tl.run(s.toolRoot, tc.Args)
	}
	status := wire.StatusOK
	if err != nil {
		status = wire.StatusError
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String(AttrErrorType, "tool_error"))
	}
	s.log.emit(wire.SDKToolCallCompleted, tc.ID, tc.Name, status, s.spanContext(span))
	return out, err
}

// flush shuts the tracer provider down (exporting every batch), then
// commits the trace file and reads the SDK-side numbers into the Result.
func (s *session) flush() error {
	if s.tr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	var errs []error
	if err := s.tr.tp.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("tracer shutdown: %w", err))
	}
	rs := s.tr.observer.stats()
	s.res.SpansEnded = rs.ended
	if rs.seen {
		s.res.SpanEventsRetained, s.res.SpanEventsDropped = rs.retained, rs.dropped
		s.res.RetainedFirstIndex, s.res.RetainedLastIndex = rs.first, rs.last
		// The SDK's span snapshot omits the drop count when it retained no
		// event at all (event limit 0), so its numbers can fall short of
		// what was requested; say so instead of reporting a silent gap.
		// Events never added (the run failed first) are not the SDK's.
		if n := rs.retained + rs.dropped; n != s.spanAdded {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(
				"SDK span data accounts for %d of %d requested span events (%d retained + %d dropped); %d are unaccounted for",
				n, s.spanAdded, rs.retained, rs.dropped, s.spanAdded-n))
		}
	}
	if !rs.seen {
		s.res.Warnings = append(s.res.Warnings, "the SDK did not record the root span (check OTEL_TRACES_SAMPLER): no span-event numbers")
	}
	if s.tr.file != nil {
		spans, lines, bytes, werr := s.tr.file.stats()
		s.res.TraceSpansWritten, s.res.TraceLines, s.res.TraceBytes = spans, lines, bytes
		switch {
		case werr != nil:
			errs = append(errs, fmt.Errorf("--trace-out %s: %w", s.cfg.TraceOut, werr))
		case spans != rs.ended:
			errs = append(errs, fmt.Errorf("--trace-out %s: %d of %d ended spans were not written", s.cfg.TraceOut, rs.ended-spans, rs.ended))
		}
		if err := s.traceFile.Commit(); err != nil {
			errs = append(errs, fmt.Errorf("--trace-out %w", err))
		} else {
			s.res.TraceOut = s.cfg.TraceOut
		}
		s.traceFile = nil
	}
	if s.tr.otlp != nil {
		exported, failed, lastErr := s.tr.otlp.stats()
		s.res.OTLPSpansExported, s.res.OTLPSpansFailed = exported, failed
		if lost := rs.ended - exported; lost > 0 {
			msg := fmt.Sprintf("OTLP export to %s: %d of %d spans not exported", s.cfg.OTLPEndpoint, lost, rs.ended)
			if lastErr != nil {
				msg += ": " + lastErr.Error()
			}
			s.res.Warnings = append(s.res.Warnings, msg)
		}
	}
	return errors.Join(errs...)
}

// cleanup removes what the run created unless Keep is set. Worker files
// are unlinked by name so that cleanup opens none of them.
func (s *session) cleanup() {
	if s.cfg.Keep {
		return
	}
	warn := func(err error) {
		if err != nil {
			s.res.Warnings = append(s.res.Warnings, "cleanup: "+err.Error())
		}
	}
	warn(removeWorkerFiles(s.workerDir, s.cfg.KernelEvents))
	warn(os.RemoveAll(s.toolRoot))
	if s.removeWork {
		if err := os.Remove(s.workDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			warn(err)
		}
	}
}
