package wire

// LayerStatus is the verdict on the kernel layer.
type LayerStatus string

// Kernel layer states.
const (
	LayerComplete LayerStatus = "complete"
	LayerPartial  LayerStatus = "partial"
	LayerAbsent   LayerStatus = "absent"
)

// CorrelationStatus is the verdict on whether events belong to the session.
type CorrelationStatus string

// Cgroup correlation states.
const (
	CorrelationClean   CorrelationStatus = "clean"
	CorrelationPartial CorrelationStatus = "partial"
	CorrelationFailed  CorrelationStatus = "failed"
)

// SDKStatus is the verdict on the workload's self-report.
type SDKStatus string

// SDK layer states.
const (
	SDKAbsent   SDKStatus = "absent"
	SDKComplete SDKStatus = "complete"
	SDKInvalid  SDKStatus = "invalid"
)

// Probe is one kernel attachment point and whether it took.
type Probe struct {
	Name     string `json:"name"`
	Attached bool   `json:"attached"`
	Required bool   `json:"required"`
	Error    string `json:"error,omitempty"`
}

// Health is observation-health.json.
type Health struct {
	Schema       string          `json:"schema"` // HealthSchema
	RunID        string          `json:"run_id"`
	KernelLayer  KernelLayer     `json:"kernel_layer"`
	RingbufDrops Drops           `json:"ringbuf_drops"`
	Emitted      map[Kind]uint64 `json:"emitted,omitempty"`
	DecodeErrors uint64          `json:"decode_errors"`
	DecodeDetail string          `json:"decode_detail,omitempty"`
	ReadFaults   uint64          `json:"read_faults"`
	// IncompleteParts counts, per part (IncompleteOrder), the archived
	// events that lack it (their Incomplete); an event lacking several
	// counts under each. From HealthSchema v3 on, ReadFaults counts those
	// events and IncompleteParts is present when it is not 0; a v2
	// document has ReadFaults alone, from the capture's own count.
	IncompleteParts map[string]uint64 `json:"incomplete_parts,omitempty"`
	CompatSyscalls  map[Kind]uint64   `json:"compat_syscalls"`
	UntrackedTasks  uint64            `json:"untracked_tasks"`
	// IOUringUntraced counts io_uring requests of the run whose
	// completion may not pass the completion hook: submitted with
	// IOSQE_CQE_SKIP_SUCCESS (counted at submission; one that fails does
	// post a completion), or completed past a full CQ ring; absent when
	// none, and in archives recorded before it was counted.
	IOUringUntraced   uint64            `json:"io_uring_untraced,omitempty"`
	ProgramMisses     map[string]uint64 `json:"program_misses"`
	SeqGaps           uint64            `json:"seq_gaps"`
	Drain             Drain             `json:"drain"`
	CgroupCorrelation CgroupCorrelation `json:"cgroup_correlation"`
	Probes            []Probe           `json:"probes"`
	Coverage          Coverage          `json:"coverage"`
	Counts            map[Kind]uint64   `json:"counts"`
	SDKLayer          SDKLayer          `json:"sdk_layer"`
}

// KernelLayer is the verdict on kernel capture. Reasons is empty exactly
// when Status is complete.
type KernelLayer struct {
	Status           LayerStatus `json:"status"`
	Reasons          []string    `json:"reasons"`
	CaptureAvailable bool        `json:"capture_available"`
	AbsentReason     string      `json:"absent_reason,omitempty"`
}

// Drops are the events the kernel could not emit.
type Drops struct {
	Total   uint64          `json:"total"`
	PerKind map[Kind]uint64 `json:"per_kind"`
	// Causes splits PerKind by cause; nil when the capture does not.
	Causes *DropCauses `json:"causes,omitempty"`
}

// DropCauses splits drops per kind by cause.
type DropCauses struct {
	// RingFull counts failed ring-buffer reservations.
	RingFull map[Kind]uint64 `json:"ring_full"`
	// SlotsBusy counts records abandoned because every record slot of
	// the CPU was held by other tasks.
	SlotsBusy map[Kind]uint64 `json:"slots_busy"`
	// AfterClose counts actions of tasks of the run after the capture
	// closed (tasks still alive outside the session cgroup).
	AfterClose map[Kind]uint64 `json:"after_close"`
}

// Drain records whether the ring buffer was proven empty at the end.
type Drain struct {
	Proven bool   `json:"proven"`
	Detail string `json:"detail"`
}

// CgroupCorrelation is the verdict on whether the events belong to the
// session. Reasons is empty exactly when Status is clean.
type CgroupCorrelation struct {
	Status                CorrelationStatus `json:"status"`
	Reasons               []string          `json:"reasons"`
	ChildPlacedBeforeExec bool              `json:"child_placed_before_exec"`
	OutsideEvents         uint64            `json:"outside_events"`
	StragglersKilled      int               `json:"stragglers_killed"`
	// LeftSessionTasks counts tasks created in the session that were not
	// seen exiting in it; EnteredSessionTasks counts tasks seen exiting
	// in it that were not created in it. The example lists name the first
	// few of each.
	LeftSessionTasks       uint64    `json:"left_session_tasks"`
	LeftSessionExamples    []TaskRef `json:"left_session_examples"`
	EnteredSessionTasks    uint64    `json:"entered_session_tasks"`
	EnteredSessionExamples []TaskRef `json:"entered_session_examples"`
	// MovedOutTasks counts moves of tasks of the run out of the session
	// cgroup; JoinedTasks counts tasks that joined it from outside.
	MovedOutTasks    uint64    `json:"moved_out_tasks"`
	MovedOutExamples []TaskRef `json:"moved_out_examples"`
	JoinedTasks      uint64    `json:"joined_tasks"`
	JoinedExamples   []TaskRef `json:"joined_examples"`
}

// SDKLayer is the verdict on the workload's self-report.
type SDKLayer struct {
	Status   SDKStatus `json:"status"`
	Events   int       `json:"events"`
	Problems []string  `json:"problems"`
}

// TaskRef names one task in a health document.
type TaskRef struct {
	TID  uint32 `json:"tid"`
	PID  uint32 `json:"pid"`
	Comm Bytes  `json:"comm"`
}
