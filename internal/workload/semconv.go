package workload

// Span names and attribute keys. The gen_ai.* keys follow the OpenTelemetry
// GenAI semantic conventions; vigil.* keys describe the workload's knobs.
const (
	AgentName    = "vigil-agent"
	ProviderName = "vigil.scripted"
	ModelName    = "vigil-scripted-1"

	// RootSpanName is the name of the span covering the whole agent run.
	RootSpanName = "invoke_agent " + AgentName
	// SpanEventName names every pressure event added to the root span.
	SpanEventName = "vigil.span_event"

	AttrOperationName  = "gen_ai.operation.name"
	AttrProviderName   = "gen_ai.provider.name"
	AttrRequestModel   = "gen_ai.request.model"
	AttrResponseModel  = "gen_ai.response.model"
	AttrResponseID     = "gen_ai.response.id"
	AttrFinishReasons  = "gen_ai.response.finish_reasons"
	AttrAgentName      = "gen_ai.agent.name"
	AttrInputTokens    = "gen_ai.usage.input_tokens"
	AttrOutputTokens   = "gen_ai.usage.output_tokens"
	AttrToolName       = "gen_ai.tool.name"
	AttrToolCallID     = "gen_ai.tool.call.id"
	AttrToolType       = "gen_ai.tool.type"
	AttrToolDesc       = "gen_ai.tool.description"
	AttrErrorType      = "error.type"
	AttrEventIndex     = "vigil.span_event.index"
	AttrEventPayload   = "vigil.span_event.payload"
	AttrKernelEvents   = "vigil.kernel_events"
	AttrSpanEvents     = "vigil.span_events"
	AttrConcurrency    = "vigil.concurrency"
	AttrPayloadBytes   = "vigil.payload_bytes"
	AttrFilesWritten   = "vigil.files_written"
	AttrFilesRead      = "vigil.files_read"
	AttrWorkerOpens    = "vigil.worker_opens"
	OpInvokeAgent      = "invoke_agent"
	OpChat             = "chat"
	OpExecuteTool      = "execute_tool"
	ChatSpanNamePrefix = OpChat + " "
	ToolSpanNamePrefix = OpExecuteTool + " "
)
