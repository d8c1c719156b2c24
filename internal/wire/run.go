package wire

// Schema ids of the run and health documents of an archive.
const (
	RunSchema    = "vigil.run/v2"
	HealthSchema = "vigil.observation-health/v3"
	// HealthSchemaV2 is still read: its read_faults has no per-part
	// counts, and its events do not say which part they lack.
	HealthSchemaV2 = "vigil.observation-health/v2"
)

// Run is run.json: what was run, where, when and how it ended.
type Run struct {
	Schema       string   `json:"schema"` // RunSchema
	RunID        string   `json:"run_id"`
	VigilVersion string   `json:"vigil_version"`
	Argv         []string `json:"argv"`
	// EnvNames are the names of the child's environment variables, sorted;
	// values are never recorded.
	EnvNames []string `json:"env_names"`
	// Cwd is the working directory the command started in (relative
	// names in its first events are relative to it).
	Cwd Bytes `json:"cwd"`
	// StartTime and EndTime are RFC3339Nano UTC wall-clock times.
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`
	// ExitCode is the child's exit status; when the child was killed by a
	// signal, Signal is its number and ExitCode is 128+Signal.
	ExitCode int  `json:"exit_code"`
	Signal   int  `json:"signal"`
	Host     Host `json:"host"`
	// PhasesMS holds the runner's phase durations (wire.PhaseNames).
	PhasesMS      map[string]float64 `json:"phases_ms"`
	SessionCgroup string             `json:"session_cgroup"`
	// Child is who the command started as (vigil record --user, or
	// vigil's own ids). Archives of older versions lack it.
	Child *Credentials `json:"child,omitempty"`
	// Limits are the caps the command's tree ran under; absent when none.
	Limits []Limit `json:"limits,omitempty"`
	// Trace places the run in a W3C trace: the child got it as TRACEPARENT.
	// Archives of older versions lack it.
	Trace *TraceContext `json:"trace,omitempty"`
	// Clock pairs the monotonic clock of kernel event times with the wall
	// clock, read together as the command started, so event times can be
	// placed in wall time. Archives of older versions lack it.
	Clock *ClockAnchor `json:"clock,omitempty"`
	// Programs says where the kernel capture's programs came from;
	// absent without kernel capture, and in archives of older versions.
	Programs *CapturePrograms `json:"capture_programs,omitempty"`
}

// CapturePrograms says where a capture's programs came from.
type CapturePrograms struct {
	// Source is "loaded" (for this run) or "resident" (a set loaded and
	// pinned earlier by vigil resident load).
	Source string `json:"source"`
	// ResidentSet names the resident set used, or the one there was
	// and could not be used (Fallback says why).
	ResidentSet string `json:"resident_set,omitempty"`
	Fallback    string `json:"fallback,omitempty"`
	// StaleRecordsDiscarded counts records an earlier holder of the
	// resident set left in its ring, discarded before this run's
	// programs were attached.
	StaleRecordsDiscarded uint64 `json:"stale_records_discarded"`
}

// ClockAnchor is one reading of CLOCK_MONOTONIC (the clock of
// Kernel.TimeNS) and of the wall clock, taken back to back.
type ClockAnchor struct {
	MonoNS uint64 `json:"mono_ns"`
	UnixNS int64  `json:"unix_ns"`
}

// WallNS places a monotonic time in wall time (Unix ns).
func (c ClockAnchor) WallNS(mono uint64) int64 {
	return c.UnixNS + int64(mono-c.MonoNS)
}

// TraceContext is the run's W3C trace context: the trace it belongs to, the
// span id that stands for the run (the parent of spans the command's SDK
// makes), and the span of whoever started vigil inside a trace.
type TraceContext struct {
	TraceID string `json:"trace_id"` // 32 lowercase hex digits
	SpanID  string `json:"span_id"`  // 16 lowercase hex digits
	// ParentSpanID is the caller's span when vigil found TRACEPARENT in
	// its own environment; empty when the run started the trace.
	ParentSpanID string `json:"parent_span_id,omitempty"`
	Sampled      bool   `json:"sampled"`
	TraceState   string `json:"trace_state,omitempty"`
}

// Credentials are a process's user and group ids.
type Credentials struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups"` // supplementary, without GID, sorted
}

// Host identifies the machine a run was recorded on.
type Host struct {
	Kernel    string `json:"kernel"`     // uname -r
	Arch      string `json:"arch"`       // GOARCH-style, e.g. amd64
	OS        string `json:"os"`         // e.g. linux
	HostClass string `json:"host_class"` // "os-arch-kernel"
	Hostname  string `json:"hostname"`
}

// Limit is a resource cap the command's process tree ran under (vigil
// record --max-pids, --max-memory) and how often it bit. A counter the
// host does not provide is -1.
type Limit struct {
	Controller string `json:"controller"` // "pids" or "memory"
	Max        int64  `json:"max"`        // tasks, or bytes
	Hierarchy  string `json:"hierarchy"`  // "cgroup-v2" or "cgroup-v1"
	// Hits counts refusals at the cap: forks that failed (pids), or times
	// memory use reached it (memory).
	Hits int64 `json:"hits"`
	// OOMKills counts processes of the tree the OOM killer killed
	// (memory only; -1 for pids).
	OOMKills int64 `json:"oom_kills"`
	// Peak is the highest use seen: tasks, or bytes.
	Peak int64 `json:"peak"`
	// SwapLimited says whether swap counted against a memory cap (absent
	// for pids).
	SwapLimited *bool `json:"swap_limited,omitempty"`
}
