package wire

// PhaseLogSchema is the schema id of --phase-log files.
const PhaseLogSchema = "vigil.phases/v1"

// Phase names, in the order they happen.
var PhaseNames = []string{
	"preflight", "attach", "cgroup", "spawn", "child_runtime",
	"drain", "archive_write", "teardown",
}

// PhaseLog is what --phase-log FILE receives (one JSON object) and what
// run.json carries under "phases_ms".
type PhaseLog struct {
	Schema   string             `json:"schema"`
	RunID    string             `json:"run_id"`
	PhasesMS map[string]float64 `json:"phases_ms"`
	TotalMS  float64            `json:"total_ms"`
	ExitCode int                `json:"exit_code"`
	// KernelLayer and CgroupCorrelation mirror observation-health.json.
	KernelLayer       LayerStatus       `json:"kernel_layer"`
	CgroupCorrelation CorrelationStatus `json:"cgroup_correlation"`
	RingbufDrops      uint64            `json:"ringbuf_drops"`
	// MaxRSSKiB is the peak resident memory of the recording vigil
	// process itself, its command's tree excluded (VmHWM), by the time
	// the log is written. A measurement of the whole tree (GNU time on
	// vigil record) reports the larger of vigil and the largest process
	// it waited for.
	MaxRSSKiB int64 `json:"vigil_max_rss_kib,omitempty"`
}
