package workload

// ResultSchema is the schema id of the agent's result line.
const ResultSchema = "vigil.agent-result/v1"

// Result is the one JSON object vigil agent prints on stdout (or writes to
// --result-out) when it finishes.
type Result struct {
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
	// SpanEventLimit is the effective per-span event limit (-1 if tracing off).
	SpanEventLimit int `json:"span_event_limit"`
	// SpanEventLimitSource: "sdk-default", "env:OTEL_SPAN_EVENT_COUNT_LIMIT" or "flag".
	SpanEventLimitSource string `json:"span_event_limit_source"`
	// Indexes of the first and last retained span events (-1 if none).
	RetainedFirstIndex int `json:"retained_first_index"`
	RetainedLastIndex  int `json:"retained_last_index"`

	TraceOut string             `json:"trace_out,omitempty"`
	PhasesMS map[string]float64 `json:"phases_ms"`
	Status   string             `json:"status"` // "ok" or "error"
	Error    string             `json:"error,omitempty"`
}
