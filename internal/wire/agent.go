package wire

// AgentResultSchema is the schema id of the agent's result line.
const AgentResultSchema = "vigil.agent-result/v1"

// Status is how a vigil agent run, or one of its tool calls, ended.
type Status string

// Statuses of agent results and SDK events.
const (
	StatusOK    Status = "ok"
	StatusError Status = "error"
)

// AgentResult is the one JSON object vigil agent prints on stdout (or writes to
// --result-out) when it finishes.
type AgentResult struct {
	Schema       string `json:"schema"`
	OTel         bool   `json:"otel"`
	KernelEvents int    `json:"kernel_events"` // worker files requested
	FilesWritten int    `json:"files_written"`
	FilesRead    int    `json:"files_read"`
	// WorkerOpens is the number of worker-file opens performed (2 per file).
	WorkerOpens int `json:"worker_opens"`
	// WorkerDir is the absolute directory holding the worker files; kernel
	// calibration counts opens under it.
	WorkerDir    string `json:"worker_dir"`
	Concurrency  int    `json:"concurrency"`
	PayloadBytes int    `json:"payload_bytes"`
	ToolCalls    int    `json:"tool_calls"`

	SpanEventsRequested int `json:"span_events_requested"`
	// Retained and dropped come from the SDK's own span data at End
	// (len(Events()) and DroppedEvents()); zero when tracing is off.
	SpanEventsRetained int `json:"span_events_retained"`
	SpanEventsDropped  int `json:"span_events_dropped"`
	// SpanEventLimit is the effective per-span event limit; -1 when no
	// limit applies (tracing off, or an unlimited limit was asked for).
	SpanEventLimit int `json:"span_event_limit"`
	// SpanEventLimitSource: "sdk-default", "env:OTEL_SPAN_EVENT_COUNT_LIMIT",
	// "flag", or "off" when tracing is off.
	SpanEventLimitSource string `json:"span_event_limit_source"`
	// Indexes of the first and last retained span events (-1 if none).
	RetainedFirstIndex int `json:"retained_first_index"`
	RetainedLastIndex  int `json:"retained_last_index"`

	TraceOut string             `json:"trace_out,omitempty"`
	PhasesMS map[string]float64 `json:"phases_ms"`
	Status   Status             `json:"status"`
	Error    string             `json:"error,omitempty"`

	// WorkDir is the absolute work directory; Kept says whether the run's
	// files were left in it (--keep).
	WorkDir string `json:"work_dir"`
	Kept    bool   `json:"kept"`
	// Bytes moved by the worker-file phase (files_written/read x payload).
	WorkerBytesWritten int64 `json:"worker_bytes_written"`
	WorkerBytesRead    int64 `json:"worker_bytes_read"`

	// The fake model's calls, token usage and final answer.
	ModelCalls   int    `json:"model_calls"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	FinalAnswer  string `json:"final_answer"`

	// OTelDisabledBy says what turned tracing off: "flag" or
	// "env:OTEL_SDK_DISABLED" (empty when tracing is on).
	OTelDisabledBy string `json:"otel_disabled_by,omitempty"`
	// SpansEnded counts spans the SDK ended; TraceSpansWritten counts the
	// spans in --trace-out (equal unless spans were lost on the way).
	SpansEnded        int   `json:"spans_ended"`
	TraceSpansWritten int   `json:"trace_spans_written"`
	TraceLines        int   `json:"trace_lines"`
	TraceBytes        int64 `json:"trace_bytes"`
	// OTLP/HTTP export (--otlp-endpoint): spans accepted and spans whose
	// export failed.
	OTLPEndpoint      string `json:"otlp_endpoint,omitempty"`
	OTLPSpansExported int    `json:"otlp_spans_exported"`
	OTLPSpansFailed   int    `json:"otlp_spans_failed"`

	// TraceID and RootSpanID are the trace and root span of the run's
	// spans; ParentSpanID is the span TRACEPARENT named (vigil record's
	// run span), empty when the agent started the trace itself.
	TraceID      string `json:"trace_id,omitempty"`
	RootSpanID   string `json:"root_span_id,omitempty"`
	ParentSpanID string `json:"parent_span_id,omitempty"`

	// SDK event log written for vigil record, and its line count.
	SDKEventLog string `json:"sdk_event_log,omitempty"`
	RunID       string `json:"run_id,omitempty"`
	SDKEvents   int    `json:"sdk_events"`

	// Invocation is the counter value when --fail-every is in use;
	// FailInjected says this invocation was made to fail.
	Invocation   int  `json:"invocation,omitempty"`
	FailInjected bool `json:"fail_injected"`

	// Warnings lists anything ignored or lost that did not fail the run.
	Warnings []string `json:"warnings,omitempty"`
}
