package wire

// The records vigil bench writes and vigil report reads: the resolved plan
// (plan.json) and one measured sample per line of samples.jsonl.

// Schema ids carried by the files.
const (
	PlanSchema   = "vigil.plan/v1"
	SampleSchema = "vigil.sample/v1"
)

// ArmKind is what an arm runs: the workload bare, under the Runner, with
// OpenTelemetry, or both.
type ArmKind string

// Arm kinds.
const (
	ArmBare ArmKind = "bare" // workload, tracing off, no Runner
	ArmA    ArmKind = "A"    // Runner capture only
	ArmB    ArmKind = "B"    // OpenTelemetry only
	ArmC    ArmKind = "C"    // both
)

// Where a traced arm's spans go (Plan.ArmExports).
const (
	ExportFile      = "file"      // agent --trace-out: OTLP/JSON lines
	ExportCollector = "collector" // agent --otlp-endpoint: a real collector
	// CollectorSuffix marks a collector arm's label: B@collector.
	CollectorSuffix = "@" + ExportCollector
)

// ExportOf is where the arm labelled arm sends its spans: ExportFile or
// ExportCollector for traced arms, "" otherwise.
func (p Plan) ExportOf(arm string) string {
	for i, a := range p.Arms {
		if a != arm {
			continue
		}
		if i < len(p.ArmExports) {
			return p.ArmExports[i]
		}
		if p.ArmKinds[i] == ArmB || p.ArmKinds[i] == ArmC {
			return ExportFile
		}
	}
	return ""
}

// Cell is one event-rate preset or custom cell.
type Cell struct {
	Name         string `json:"name"`
	KernelEvents int    `json:"kernel_events"` // worker files (2 opens each)
	SpanEvents   int    `json:"span_events"`
	Concurrency  int    `json:"concurrency"`
	PayloadBytes int    `json:"payload_bytes"`
}

// Plan is the fully resolved benchmark plan (plan.json).
type Plan struct {
	Schema      string    `json:"schema"`
	CreatedUnix int64     `json:"created_unix"`
	Arms        []string  `json:"arms"`      // labels; an A/A run repeats an arm under two labels
	ArmKinds    []ArmKind `json:"arm_kinds"` // the arm each label runs (bare/A/B/C), same order as Arms
	// ArmExports says where each arm's spans go, same order as Arms:
	// ExportFile, ExportCollector, or "" for arms without tracing. Nil
	// when every traced arm writes a file.
	ArmExports []string `json:"arm_exports,omitempty"`
	// Collector is the Jaeger binary the collector arms export to.
	Collector string `json:"collector,omitempty"`
	Cells     []Cell `json:"cells"`
	Blocks    int    `json:"blocks"`
	Warmup    int    `json:"warmup"`
	Order     string `json:"order"` // "random" or "counterbalanced"
	Seed      int64  `json:"seed"`
	MaxReruns int    `json:"max_reruns"`
	// MaxForeignCPUs is the interference gate: a sample during which more
	// CPUs than this were busy outside it, on average, is contended and
	// re-measured. 0 turns the gate off.
	MaxForeignCPUs float64 `json:"max_foreign_cpus,omitempty"`
	// Sequential is set for a group-sequential run (--until-decided).
	Sequential *Sequential `json:"sequential,omitempty"`
	// CPUs pins every sample's process tree to these CPUs (a kernel CPU
	// list, --cpus); empty: no pinning.
	CPUs string `json:"cpus,omitempty"`
	// RunnerCPUs pins vigil record itself in the Runner arms, apart from
	// the workload (--runner-cpus).
	RunnerCPUs string `json:"runner_cpus,omitempty"`
	// Programs is "resident" when the Runner arms take the resident set
	// (vigil record --programs resident); empty: they load their
	// programs for each sample.
	Programs string `json:"programs,omitempty"`
	// HostState is the host's condition when the run was planned.
	HostState *HostState        `json:"host_state,omitempty"`
	Shard     string            `json:"shard"`             // "i/n"
	Command   []string          `json:"command,omitempty"` // user command, when not the built-in agent
	Host      BenchHost         `json:"host"`
	Versions  map[string]string `json:"versions"`
}

// BenchHost describes where samples were taken: the host of a run and its
// CPU count.
type BenchHost struct {
	Host
	CPUs int `json:"cpus"`
}

// Sample is one measured run of one arm in one block (a line of samples.jsonl).
type Sample struct {
	Schema   string  `json:"schema"`
	ID       string  `json:"id"` // unique within the output dir
	Cell     string  `json:"cell"`
	Arm      string  `json:"arm"`      // label
	ArmKind  ArmKind `json:"arm_kind"` // bare/A/B/C
	Block    int     `json:"block"`    // 0-based; warm-up blocks are negative
	Position int     `json:"position"` // order within the block
	Attempt  int     `json:"attempt"`  // 0 for the first try, 1.. for re-measures
	Warmup   bool    `json:"warmup"`
	Seed     int64   `json:"seed"`

	StartUnixNS int64 `json:"start_unix_ns"`
	WallNS      int64 `json:"wall_ns"` // monotonic, whole process tree
	UserNS      int64 `json:"user_ns"`
	SysNS       int64 `json:"sys_ns"`
	// MaxRSSBytes is the largest single process (wait4 rusage of the
	// direct child, which covers its reaped descendants' maximum).
	MaxRSSBytes int64 `json:"max_rss_bytes"`
	// TreePeakBytes is the whole tree's peak from a per-sample memory cgroup
	// (v2 memory.peak, or v1 memory.max_usage_in_bytes); -1 if unavailable.
	TreePeakBytes  int64  `json:"tree_peak_bytes"`
	TreePeakSource string `json:"tree_peak_source"`

	Artifacts SampleArtifacts `json:"artifacts"`

	ExitCode int `json:"exit_code"`
	// StragglersKilled counts descendants still alive after the direct
	// child exited, which the harness killed before the next sample.
	StragglersKilled int `json:"stragglers_killed"`

	// Runner (A/C only).
	Health          *SampleHealth      `json:"health,omitempty"`
	PhasesMS        map[string]float64 `json:"phases_ms,omitempty"`
	PhaseResidualMS float64            `json:"phase_residual_ms,omitempty"`

	Calibration Calibration `json:"calibration"`

	// Interference is what the host did besides this sample while it ran;
	// Contended marks a sample that failed the interference gate.
	Interference *Interference `json:"interference,omitempty"`
	Contended    bool          `json:"contended,omitempty"`

	// OTLPExport is a collector arm's network export (nil for others).
	OTLPExport *OTLPExport `json:"otlp_export,omitempty"`

	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason,omitempty"`

	Host     BenchHost         `json:"host"`
	Versions map[string]string `json:"versions"`
}

// OTLPExport counts the spans a collector arm's agent sent over OTLP/HTTP
// and the spans whose export failed.
type OTLPExport struct {
	SpansExported int `json:"spans_exported"`
	SpansFailed   int `json:"spans_failed"`
}

// SampleArtifacts are the sizes of what a sample produced.
type SampleArtifacts struct {
	TraceBytes            int64 `json:"trace_bytes"`
	ArchiveBytes          int64 `json:"archive_bytes"`
	ArchiveExtractedBytes int64 `json:"archive_extracted_bytes"`
}

// SampleHealth is the part of observation-health.json a sample keeps.
type SampleHealth struct {
	KernelLayer       LayerStatus       `json:"kernel_layer"`
	CgroupCorrelation CorrelationStatus `json:"cgroup_correlation"`
	RingbufDrops      uint64            `json:"ringbuf_drops"`
	Reasons           []string          `json:"reasons,omitempty"`
}

// Calibration compares what the workload was asked to do with what each
// observation layer saw.
type Calibration struct {
	// Kernel side (A/C): worker-file opens seen in the archive.
	KernelExpectedOpens int   `json:"kernel_expected_opens"`
	KernelWriteOpens    int   `json:"kernel_write_opens"`
	KernelReadOpens     int   `json:"kernel_read_opens"`
	KernelMatch         *bool `json:"kernel_match,omitempty"`
	// Span side (B/C): from the agent's result and trace.
	SpanRequested int `json:"span_requested"`
	SpanRetained  int `json:"span_retained"`
	SpanDropped   int `json:"span_dropped"`
	SpanLimit     int `json:"span_limit"`
	// RetainedFirstIndex/LastIndex name which events survived (-1 if none).
	RetainedFirstIndex int   `json:"retained_first_index"`
	RetainedLastIndex  int   `json:"retained_last_index"`
	SpanMatch          *bool `json:"span_match,omitempty"`
}

// Interference is the host's activity outside a sample while it ran. A
// nil figure is one the host could not provide (Unavailable says why).
type Interference struct {
	// ForeignCPUs is the average number of CPUs busy outside the sample's
	// process tree (host busy time from /proc/stat, 10 ms ticks, minus the
	// tree's rusage CPU, over wall time).
	ForeignCPUs *float64 `json:"foreign_cpus"`
	// ForeignCPUsResolution is how far ForeignCPUs may be off from tick
	// rounding alone (online CPUs × 10 ms / wall): large for short samples.
	ForeignCPUsResolution *float64 `json:"foreign_cpus_resolution"`
	// *PressureSome are the host's pressure-stall "some" shares over the
	// sample: the fraction of wall time at least one task waited for CPU,
	// I/O or memory (the sample's own tasks included).
	CPUPressureSome    *float64 `json:"cpu_pressure_some"`
	IOPressureSome     *float64 `json:"io_pressure_some"`
	MemoryPressureSome *float64 `json:"memory_pressure_some"`
	// Context switches of the sample's tree (rusage of the reaped tree).
	VoluntaryCtxSwitches   *int64 `json:"voluntary_ctx_switches"`
	InvoluntaryCtxSwitches *int64 `json:"involuntary_ctx_switches"`
	CPUMigrations          *int64 `json:"cpu_migrations"`
	// Load1AtStart is the one-minute load average when the sample began.
	Load1AtStart *float64 `json:"load1_at_start"`
	// Unavailable names each missing figure and why.
	Unavailable []string `json:"unavailable,omitempty"`
}

// HostState is what a benchmark's host looked like before it started
// (like pyperf's system show). Empty strings and -1 are figures the host
// does not expose.
type HostState struct {
	Governors    []string `json:"governors"`     // distinct cpufreq scaling governors
	Boost        string   `json:"boost"`         // "on", "off" or "" (not exposed)
	SMT          string   `json:"smt"`           // "on", "off" or ""
	IsolatedCPUs string   `json:"isolated_cpus"` // kernel isolcpus list, "" for none
	MemAvailable int64    `json:"mem_available_bytes"`
	SwapTotal    int64    `json:"swap_total_bytes"`
	SwapUsed     int64    `json:"swap_used_bytes"`
	Load1        float64  `json:"load1"`
	CPUPressure  float64  `json:"cpu_pressure_some_avg10"` // -1 without PSI
	// Warnings are the conditions that make wall time less trustworthy.
	Warnings []string `json:"warnings"`
}

// Sequential is a group-sequential run: blocks are added a look at a time
// until every decomposition verdict is decided or MaxBlocks is reached,
// and look k decides at the alpha spent up to it, so that looking
// repeatedly does not inflate false verdicts.
type Sequential struct {
	Design    string  `json:"design"`     // SequentialDesign
	Alpha     float64 `json:"alpha"`      // overall two-sided level
	MaxBlocks int     `json:"max_blocks"` // information fraction = blocks / MaxBlocks
	LookEvery int     `json:"look_every"` // blocks added between looks
	Looks     []Look  `json:"looks"`      // the looks taken so far
}

// SequentialDesign names the alpha-spending design vigil uses.
const SequentialDesign = "obrien-fleming-spending-bonferroni"

// Look is one interim analysis of a sequential run.
type Look struct {
	Blocks  int     `json:"blocks"`
	Alpha   float64 `json:"alpha"`   // this look's nominal two-sided level
	Decided bool    `json:"decided"` // every decomposition verdict was decided
}
