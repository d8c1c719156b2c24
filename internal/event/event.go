// Package event defines the records that flow out of the kernel capture and
// the workload's self-reports: one kernel event per line of
// layers/kernel.ndjson and one SDK event per line of layers/sdk.ndjson.
// It holds types only, so every stage can share them without depending on
// the stage that produces them.
package event

// Kind names a kernel event kind.
type Kind string

const (
	KindExec    Kind = "exec"
	KindFork    Kind = "fork"
	KindExit    Kind = "exit"
	KindOpen    Kind = "open"
	KindConnect Kind = "connect"
)

// Kinds lists every kernel event kind in a fixed order (used for per-kind
// counters and reports).
var Kinds = []Kind{KindExec, KindFork, KindExit, KindOpen, KindConnect}

// Kernel is one event observed in the kernel for a task of the session
// cgroup (or a descendant). Exactly one of the kind-specific fields is set.
type Kernel struct {
	// Seq is the per-run sequence number, assigned in the kernel at
	// successful ring-buffer reservation; contiguous from 0 in an archive.
	Seq uint64 `json:"seq"`
	// TimeNS is CLOCK_MONOTONIC in nanoseconds (bpf_ktime_get_ns).
	TimeNS   uint64 `json:"ts_ns"`
	Kind     Kind   `json:"kind"`
	PID      uint32 `json:"pid"` // thread-group id
	TID      uint32 `json:"tid"`
	Comm     string `json:"comm"`
	CgroupID uint64 `json:"cgroup_id"`

	Exec    *Exec    `json:"exec,omitempty"`
	Fork    *Fork    `json:"fork,omitempty"`
	Exit    *Exit    `json:"exit,omitempty"`
	Open    *Open    `json:"open,omitempty"`
	Connect *Connect `json:"connect,omitempty"`
}

// Exec is a successful execve/execveat.
type Exec struct {
	Filename string `json:"filename"` // as resolved by the kernel (bprm->filename)
	Argv0    string `json:"argv0"`
}

// Fork is a clone/fork/vfork; Thread is true for CLONE_THREAD.
type Fork struct {
	ParentPID uint32 `json:"parent_pid"`
	ParentTID uint32 `json:"parent_tid"`
	ChildPID  uint32 `json:"child_pid"`
	ChildTID  uint32 `json:"child_tid"`
	Thread    bool   `json:"thread"`
}

// Exit is a task exit. Code is the exit status (0-255) when Signal is 0.
// GroupDead is true when this was the last thread of the process.
type Exit struct {
	Code      int32 `json:"code"`
	Signal    int32 `json:"signal"`
	GroupDead bool  `json:"group_dead"`
}

// Access modes derived from open flags.
const (
	AccessRead      = "read"
	AccessWrite     = "write"
	AccessReadWrite = "read_write"
)

// Open is an openat or openat2 call, recorded at syscall exit.
type Open struct {
	Syscall  string `json:"syscall"` // "openat" or "openat2"
	Dirfd    int32  `json:"dirfd"`
	Path     string `json:"path"` // as given by the caller (may be relative)
	Flags    uint64 `json:"flags"`
	Mode     uint64 `json:"mode"`
	Ret      int64  `json:"ret"` // fd, or -errno
	Access   string `json:"access"`
	Create   bool   `json:"create"`
	Truncate bool   `json:"truncate"`
	Append   bool   `json:"append"`
	// PathTruncated is true when the path did not fit the capture buffer.
	PathTruncated bool `json:"path_truncated,omitempty"`
}

// Connect is a connect(2) call, recorded at syscall exit.
type Connect struct {
	Fd     int32  `json:"fd"`
	Family string `json:"family"` // "inet", "inet6", "unix", or "af_<n>"
	Addr   string `json:"addr"`   // IP address text, or unix socket path
	Port   uint16 `json:"port"`
	Ret    int64  `json:"ret"` // 0, or -errno (-EINPROGRESS for non-blocking)
}

// SDK event types a workload may report about itself.
const (
	SDKToolCallStarted   = "tool_call_started"
	SDKToolCallCompleted = "tool_call_completed"
	SDKRunFinished       = "run_finished"
)

// SDKSchema is the schema id every SDK event line carries.
const SDKSchema = "vigil.sdk-event/v1"

// Environment variables through which vigil record tells the child where to
// write SDK events and which run it belongs to.
const (
	EnvSDKEventLog = "VIGIL_SDK_EVENT_LOG"
	EnvRunID       = "VIGIL_RUN_ID"
)

// SDK is one line of the workload's self-report log.
type SDK struct {
	Schema string `json:"schema"`
	RunID  string `json:"run_id"`
	Seq    uint64 `json:"seq"` // contiguous from 0
	Type   string `json:"type"`
	// MonoNS is CLOCK_MONOTONIC in ns, comparable to Kernel.TimeNS.
	MonoNS     uint64 `json:"mono_ns"`
	TimeUnixNS int64  `json:"time_unix_ns"`
	PID        int    `json:"pid"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// Status is "ok" or "error" on tool_call_completed and run_finished.
	Status string `json:"status,omitempty"`
}
