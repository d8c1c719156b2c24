package wire

// summary.json: the typed result of the report analysis. It holds
// everything the renderers need (statistics, verdicts, typed findings and
// the per-block values of every arm) and no prose, so that every output can
// be rendered again from summary.json alone. Only data and pure accessors
// belong here.

import (
	"math"
)

// SummarySchema is the schema id of summary.json. v2: typed findings,
// verdict reasons and stopping rules as codes, per-block values.
const SummarySchema = "vigil.summary/v2"

// Summary is the content of summary.json.
type Summary struct {
	Schema   string        `json:"schema"`
	Vigil    string        `json:"vigil_version"`
	Inputs   []string      `json:"inputs"`
	Options  ReportOptions `json:"options"`
	Runs     []*RunSummary `json:"runs"`
	Findings []Finding     `json:"findings"`
}

// ReportOptions are the statistical settings the summary was computed with.
type ReportOptions struct {
	Confidence    float64 `json:"confidence"`
	TolerancePct  float64 `json:"tolerance_pct"`
	WallFloorNS   float64 `json:"wall_floor_ns"`
	MemFloorBytes float64 `json:"mem_floor_bytes"`
	BootstrapReps int     `json:"bootstrap_reps"`
	Alpha         float64 `json:"alpha"`
}

// RunSummary is one host_class + plan seed; statistics never cross runs.
type RunSummary struct {
	HostClass string            `json:"host_class"`
	Host      BenchHost         `json:"host"`
	Seed      int64             `json:"seed"`
	Shards    []string          `json:"shards"`
	Versions  map[string]string `json:"versions"`
	Arms      []string          `json:"arms"`
	ArmKinds  []ArmKind         `json:"arm_kinds"`
	Blocks    int               `json:"blocks"`
	Warmup    int               `json:"warmup"`
	Order     string            `json:"order"`
	Samples   int               `json:"samples"`
	Cells     []*CellSummary    `json:"cells"`
	Noise     *NoiseFloor       `json:"noise_floor,omitempty"`
	// HostState is the host before the run (plan.json); MaxForeignCPUs
	// the interference gate it ran with (0: off).
	HostState      *HostState `json:"host_state,omitempty"`
	MaxForeignCPUs float64    `json:"max_foreign_cpus"`
	// Sequential is the group-sequential design of the run, if any: its
	// last look's level decides the decomposition verdicts.
	Sequential *Sequential `json:"sequential,omitempty"`
}

// CellSummary holds everything computed for one cell of a run.
type CellSummary struct {
	Cell
	Arms []*ArmSummary `json:"arms"`
	// MemoryMetric is the memory metric compared and decomposed in this
	// cell: tree_peak_bytes when every valid sample has it, else
	// max_rss_bytes.
	MemoryMetric  Metric            `json:"memory_metric"`
	Comparisons   []*Comparison     `json:"comparisons"`
	Decomposition []*Interaction    `json:"decomposition,omitempty"`
	Kernel        *KernelFidelity   `json:"kernel_fidelity,omitempty"`
	Spans         *SpanFidelity     `json:"span_fidelity,omitempty"`
	Interference  *CellInterference `json:"interference,omitempty"`
}

// ArmSummary is the per-arm table of one cell.
type ArmSummary struct {
	Arm     string  `json:"arm"`
	ArmKind ArmKind `json:"arm_kind"`
	// Export is where a traced arm's spans went, for plans with collector
	// arms: "file" or "collector".
	Export     string         `json:"export,omitempty"`
	Planned    int            `json:"planned"`
	Measured   int            `json:"measured"` // non-warm-up samples, all attempts
	Valid      int            `json:"valid"`    // blocks with a valid sample
	Discarded  int            `json:"discarded"`
	ByReason   map[string]int `json:"discarded_by_reason"`
	Warmup     int            `json:"warmup_excluded"`
	Superseded int            `json:"superseded"` // extra valid samples for a block already covered
	Incomplete bool           `json:"incomplete"`

	Wall      *Dist      `json:"wall_ns,omitempty"`
	CPU       *Dist      `json:"cpu_ns,omitempty"` // user + sys
	MaxRSS    *MemStat   `json:"max_rss_bytes,omitempty"`
	TreePeak  *MemStat   `json:"tree_peak_bytes,omitempty"`
	Artifacts *Artifacts `json:"artifacts,omitempty"`

	// Blocks are the samples the statistics use, one per block with a
	// valid sample, in block order.
	Blocks []BlockSample `json:"blocks"`
}

// BlockSample is the valid sample chosen for one block of an arm.
type BlockSample struct {
	Block       int    `json:"block"`
	ID          string `json:"id"`
	WallNS      int64  `json:"wall_ns"`
	UserNS      int64  `json:"user_ns"`
	SysNS       int64  `json:"sys_ns"`
	MaxRSSBytes int64  `json:"max_rss_bytes"`
	// TreePeakBytes is -1 when the sample has no tree peak.
	TreePeakBytes int64 `json:"tree_peak_bytes"`
	TraceBytes    int64 `json:"trace_bytes"`
	ArchiveBytes  int64 `json:"archive_bytes"`
}

// HasTreePeak reports whether the sample measured the tree's peak.
func (b BlockSample) HasTreePeak() bool { return b.TreePeakBytes >= 0 }

// Dist summarizes one metric's distribution.
type Dist struct {
	N          int     `json:"n"`
	Median     Est     `json:"median"`
	P95        float64 `json:"p95"`
	P99        float64 `json:"p99"`
	P95FromMax bool    `json:"p95_from_max"` // n < 21: p95 is decided by the maximum
	P99FromMax bool    `json:"p99_from_max"` // n < 101
	MAD        float64 `json:"mad"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	// Quartiles are the 25th, 50th and 75th percentiles (linear
	// interpolation, as p95 and p99).
	Quartiles [3]float64 `json:"quartiles"`
	TailRatio float64    `json:"p99_over_median"`
	TailBand  string     `json:"tail_band"`
}

// MemStat is a size metric's median with its interval, extremes and
// quartiles.
type MemStat struct {
	N         int        `json:"n"`
	Median    Est        `json:"median"`
	Max       float64    `json:"max"`
	Min       float64    `json:"min"`
	Quartiles [3]float64 `json:"quartiles"`
}

// Artifacts are median artifact sizes in bytes.
type Artifacts struct {
	TraceBytes            float64 `json:"trace_bytes"`
	ArchiveBytes          float64 `json:"archive_bytes"`
	ArchiveExtractedBytes float64 `json:"archive_extracted_bytes"`
	// Written is trace + archive bytes per sample.
	Written MemStat `json:"written_bytes"`
}

// Est is an estimate with its interval; a bound is null when the sample is
// too small for the requested confidence.
type Est struct {
	Value      float64  `json:"value"`
	Lower      *float64 `json:"lower"`
	Upper      *float64 `json:"upper"`
	Confidence float64  `json:"confidence"`
}

// Bounded reports whether both bounds exist.
func (e Est) Bounded() bool { return e.Lower != nil && e.Upper != nil }

// Lo returns the lower bound, −Inf when absent.
func (e Est) Lo() float64 {
	if e.Lower == nil {
		return math.Inf(-1)
	}
	return *e.Lower
}

// Hi returns the upper bound, +Inf when absent.
func (e Est) Hi() float64 {
	if e.Upper == nil {
		return math.Inf(1)
	}
	return *e.Upper
}

// Metric names a per-sample measurement.
type Metric string

// Metrics compared between arms.
const (
	MetricWall     Metric = "wall_ns"
	MetricCPU      Metric = "cpu_ns"
	MetricMaxRSS   Metric = "max_rss_bytes"
	MetricTreePeak Metric = "tree_peak_bytes"
)

// Unit is the unit of a metric.
type Unit string

// Units of the metrics.
const (
	UnitNS    Unit = "ns"
	UnitBytes Unit = "bytes"
)

// UnitOf returns the unit of a metric.
func UnitOf(m Metric) Unit {
	if m == MetricWall || m == MetricCPU {
		return UnitNS
	}
	return UnitBytes
}

// Comparison is one arm pair in one cell for one metric: Other − Base.
type Comparison struct {
	Base   string `json:"base"`
	Other  string `json:"other"`
	Metric Metric `json:"metric"`
	Unit   Unit   `json:"unit"`
	Pairs  int    `json:"pairs"` // blocks where both arms have a valid sample
	// Diff is the Hodges–Lehmann estimate of Other − Base with the
	// Wilcoxon signed-rank interval; P tests "no difference".
	Diff         Est     `json:"diff"`
	P            float64 `json:"p"`
	Method       string  `json:"method"` // "exact" or "normal"
	Achieved     bool    `json:"confidence_achieved"`
	ExcludesZero bool    `json:"excludes_zero"`
	// Ratio is median(Other)/median(Base) over the pairs, with a paired
	// percentile bootstrap interval.
	Ratio Est `json:"ratio"`
	// UTest compares all valid samples of both arms without pairing.
	UTest UTest `json:"unpaired_u_test"`
}

// UTest is a Mann–Whitney U result.
type UTest struct {
	N1 int     `json:"n1"`
	N2 int     `json:"n2"`
	U  float64 `json:"u"`
	P  float64 `json:"p"`
}

// Verdict is the outcome of a decomposition.
type Verdict string

// Verdicts of a decomposition.
const (
	Additive     Verdict = "additive"
	NotAdditive  Verdict = "not additive"
	Inconclusive Verdict = "inconclusive at this budget"
)

// VerdictReason says why a decomposition reached its verdict.
type VerdictReason string

// Reasons of a verdict.
const (
	ReasonNoCompleteBlocks VerdictReason = "no_complete_blocks"  // no block has all four arms
	ReasonTooFewBlocks     VerdictReason = "too_few_blocks"      // no interval at the requested confidence
	ReasonDrifting         VerdictReason = "drifting"            // the interaction trends across blocks
	ReasonWithinTolerance  VerdictReason = "within_tolerance"    // interval inside ±tolerance
	ReasonBeyondTolerance  VerdictReason = "beyond_tolerance"    // interval entirely beyond ±tolerance
	ReasonStraddles        VerdictReason = "straddles_tolerance" // interval crosses a tolerance bound
)

// Interaction is the decomposition of one metric in one cell: per block
// C − A − B + bare, which is 0 when the two layers' costs add up.
type Interaction struct {
	Metric   Metric       `json:"metric"`
	Unit     Unit         `json:"unit"`
	Blocks   int          `json:"blocks"` // blocks with all four arms valid
	PerBlock []BlockValue `json:"per_block"`
	Estimate Est          `json:"estimate"` // Hodges–Lehmann + Wilcoxon interval
	P        float64      `json:"p"`
	// Confidence is the level the verdict was asked at (a sequential
	// run's last look); Estimate.Confidence is the level achieved.
	Confidence float64 `json:"confidence"`
	BareMedian float64 `json:"bare_median"`
	// Tolerance is max(TolerancePct % of BareMedian, ToleranceFloor).
	Tolerance      float64       `json:"tolerance"`
	TolerancePct   float64       `json:"tolerance_pct"`
	ToleranceFloor float64       `json:"tolerance_floor"`
	Verdict        Verdict       `json:"verdict"`
	Reason         VerdictReason `json:"reason"`
	Drift          Drift         `json:"drift"`
	Stopping       *StoppingRule `json:"stopping_rule,omitempty"`
}

// BlockValue is one block's interaction.
type BlockValue struct {
	Block int     `json:"block"`
	Value float64 `json:"value"`
}

// Drift tests whether the interaction trends across blocks.
type Drift struct {
	Rho              float64 `json:"spearman_rho"`
	P                float64 `json:"p"`
	SlopePerBlock    float64 `json:"theil_sen_slope_per_block"`
	BlockSpan        int     `json:"block_span"`     // last − first complete block
	TrendSpan        float64 `json:"trend_over_run"` // |slope| × block span
	FirstHalfMedian  float64 `json:"first_half_median"`
	SecondHalfMedian float64 `json:"second_half_median"`
	Drifting         bool    `json:"drifting"`
}

// StoppingKind says what more sampling would do for an inconclusive
// verdict.
type StoppingKind string

// Stopping rules.
const (
	StopMinBlocks       StoppingKind = "min_blocks"       // BlocksNeeded for an interval at all
	StopNotExchangeable StoppingKind = "not_exchangeable" // drift: more of the same will not settle it
	StopOnBoundary      StoppingKind = "on_boundary"      // the estimate sits on ±tolerance
	StopBeyondReach     StoppingKind = "beyond_reach"     // more than 10^9 blocks
	StopImpractical     StoppingKind = "impractical"      // BlocksNeeded, far more than run
	StopSettleable      StoppingKind = "settleable"       // BlocksNeeded should settle it
)

// Side is where the interval would fall relative to ±tolerance.
type Side string

// Sides of the tolerance.
const (
	SideInside Side = "inside"
	SideBeyond Side = "beyond"
)

// StoppingRule says what more sampling would do for an inconclusive verdict.
type StoppingRule struct {
	Kind             StoppingKind `json:"kind"`
	Settleable       bool         `json:"settleable"`
	BlocksNeeded     int          `json:"blocks_needed,omitempty"` // total complete blocks
	AdditionalBlocks int          `json:"additional_blocks,omitempty"`
	Side             Side         `json:"side,omitempty"`
}

// KernelFidelity is the kernel calibration of one cell (arms A and C).
type KernelFidelity struct {
	Samples          int    `json:"samples"` // non-warm-up A/C samples, all attempts
	Evaluated        int    `json:"evaluated"`
	Matched          int    `json:"matched"`
	ExpectedWrite    int    `json:"expected_write_opens"`
	ExpectedRead     int    `json:"expected_read_opens"`
	ObservedWriteMin int    `json:"observed_write_opens_min"`
	ObservedWriteMax int    `json:"observed_write_opens_max"`
	ObservedReadMin  int    `json:"observed_read_opens_min"`
	ObservedReadMax  int    `json:"observed_read_opens_max"`
	RingbufDrops     uint64 `json:"ringbuf_drops"`
	KernelComplete   int    `json:"kernel_layer_complete"`
	CgroupClean      int    `json:"cgroup_correlation_clean"`
	AllMatched       bool   `json:"all_matched"`
	Healthy          bool   `json:"healthy"`
}

// DroppedEnd is which span events a clipped trace lost.
type DroppedEnd string

// Dropped ends.
const (
	DroppedNone   DroppedEnd = "none"
	DroppedOldest DroppedEnd = "oldest"
	DroppedNewest DroppedEnd = "newest"
	DroppedAll    DroppedEnd = "all"
	DroppedMixed  DroppedEnd = "mixed"
)

// SpanFidelity is the span retention of one cell (arms B and C).
type SpanFidelity struct {
	Samples     int        `json:"samples"`
	Requested   int        `json:"requested"`
	RetainedMin int        `json:"retained_min"`
	RetainedMax int        `json:"retained_max"`
	DroppedMin  int        `json:"dropped_min"`
	DroppedMax  int        `json:"dropped_max"`
	Limit       int        `json:"span_limit"`
	DroppedEnd  DroppedEnd `json:"dropped_end"`
	Clipped     bool       `json:"clipped"`
	// WithoutSpanData counts B/C samples with no span numbers (no agent
	// result), left out of the ranges.
	WithoutSpanData int `json:"without_span_data"`
}

// NoiseFloor reports what A/A comparisons (two labels running the same
// arm kind) show: how often an interval excludes 0 although nothing differs.
type NoiseFloor struct {
	Comparisons        int     `json:"comparisons"`
	ExcludingZero      int     `json:"excluding_zero"`
	FalseRate          float64 `json:"false_difference_rate"`
	NominalRate        float64 `json:"nominal_rate"`
	MedianRelHalfWidth float64 `json:"median_relative_half_width"`
	// Uncounted are A/A comparisons with too few pairs for an interval at
	// the requested confidence (listed in Items, not counted).
	Uncounted int         `json:"uncounted"`
	Items     []NoiseItem `json:"items"`
}

// NoiseItem is one A/A comparison.
type NoiseItem struct {
	Cell         string  `json:"cell"`
	Base         string  `json:"base"`
	Other        string  `json:"other"`
	Metric       Metric  `json:"metric"`
	Unit         Unit    `json:"unit"`
	Pairs        int     `json:"pairs"`
	Diff         Est     `json:"diff"`
	RelHalfWidth float64 `json:"relative_half_width"`
	ExcludesZero bool    `json:"excludes_zero"`
}

// InterferenceHighShare is the share of contended samples (or of samples
// used that ran over the gate) past which a cell's interference is high.
const InterferenceHighShare = 0.25

// InterferenceReason says why a cell's interference counts as high.
type InterferenceReason string

// Reasons for high interference.
const (
	HighContendedShare InterferenceReason = "contended_share"       // Contended/Measured > InterferenceHighShare
	HighUsedOverLimit  InterferenceReason = "used_over_limit"       // UsedOver/Used > InterferenceHighShare
	HighMedianNearGate InterferenceReason = "median_over_half_gate" // median foreign load over half the gate
	HighMedianGateOff  InterferenceReason = "median_with_gate_off"  // median foreign load high, gate off
)

// CellInterference is what the host did besides one cell's samples.
type CellInterference struct {
	// Measured counts the cell's non-warm-up samples with an interference
	// record; Contended those that failed the gate (and were re-measured).
	Measured  int `json:"measured"`
	Contended int `json:"contended"`
	// Used counts the samples the statistics use that have a foreign-CPU
	// figure; UsedOver those whose foreign load was over Limit anyway (the
	// gate was off, or looser than the default).
	Used     int     `json:"used"`
	UsedOver int     `json:"used_over_gate"`
	Limit    float64 `json:"limit_foreign_cpus"`
	// UsedMedianForeignCPUs and UsedMaxForeignCPUs describe the valid
	// samples the statistics use (-1: no figure).
	UsedMedianForeignCPUs float64 `json:"used_median_foreign_cpus"`
	UsedMaxForeignCPUs    float64 `json:"used_max_foreign_cpus"`
	// High says the cell's interference stayed high (see HighReason).
	High       bool               `json:"high"`
	HighReason InterferenceReason `json:"high_reason,omitempty"`
	// Points are every measured sample in time order, for the plot.
	Points []InterferencePoint `json:"points"`
}

// InterferencePoint is one sample on the interference-over-time plot.
type InterferencePoint struct {
	Seconds     float64  `json:"t_s"` // since the run's first sample
	Arm         string   `json:"arm"`
	ArmKind     ArmKind  `json:"arm_kind"`
	WallNS      int64    `json:"wall_ns"`
	ForeignCPUs *float64 `json:"foreign_cpus"`
	Contended   bool     `json:"contended"`
	Valid       bool     `json:"valid"`
}

// FindingKind names what a finding is about.
type FindingKind string

// Kinds of findings, in the order a run lists them.
const (
	FindingArmCosts      FindingKind = "arm_costs"       // wall time per arm and layer costs in Cell
	FindingDecomposition FindingKind = "decomposition"   // verdicts for Metric across cells
	FindingKernel        FindingKind = "kernel_fidelity" // kernel capture health across cells
	FindingSpansClipped  FindingKind = "spans_clipped"   // span events clipped in Cell
	FindingSpansRetained FindingKind = "spans_retained"  // span events intact in Cells
	FindingNoiseFloor    FindingKind = "noise_floor"     // the run's A/A noise floor
	FindingInterference  FindingKind = "interference"    // host interference across cells
	FindingCompleteness  FindingKind = "completeness"    // valid samples against the plan
)

// FindingStatus is the overall outcome a finding states.
type FindingStatus string

// Statuses of kernel, interference and completeness findings.
const (
	StatusHealthy        FindingStatus = "healthy"         // every calibrated cell healthy
	StatusHealthyThrough FindingStatus = "healthy_through" // healthy up to HealthyThrough, not in Unhealthy
	StatusNotHealthy     FindingStatus = "not_healthy"     // unhealthy in Unhealthy, healthy in none before
	StatusUncalibrated   FindingStatus = "uncalibrated"    // no cell has calibration data
	StatusLow            FindingStatus = "low"             // interference low in every cell
	StatusHigh           FindingStatus = "high"            // interference high in Cells
	StatusComplete       FindingStatus = "complete"        // every arm reached its planned samples
	StatusIncomplete     FindingStatus = "incomplete"      // Incomplete arms did not
)

// Finding is one numbered claim. It holds the claim's numbers and
// verdicts; its prose is written by the renderers, from the finding and
// the run it belongs to (Runs[Run]).
type Finding struct {
	N         int           `json:"n"`
	Kind      FindingKind   `json:"kind"`
	HostClass string        `json:"host_class"`
	Run       int           `json:"run"` // index into Summary.Runs
	Cell      string        `json:"cell,omitempty"`
	Metric    Metric        `json:"metric,omitempty"`
	Status    FindingStatus `json:"status,omitempty"`
	// Cells are the cells the finding lists, in its order: kernel cells
	// by size, intact span cells, cells with high interference.
	Cells []string `json:"cells,omitempty"`
	// Verdicts are the decomposition verdicts per cell.
	Verdicts []CellVerdict `json:"verdicts,omitempty"`
	// Costs are the paired differences the finding cites.
	Costs []Cost `json:"costs,omitempty"`
	// HealthyThrough is the largest kernel cell healthy before any
	// unhealthy one; Unhealthy and Uncalibrated name the other cells.
	HealthyThrough string   `json:"healthy_through,omitempty"`
	Unhealthy      []string `json:"unhealthy,omitempty"`
	Uncalibrated   []string `json:"uncalibrated,omitempty"`
	// Contended counts contended samples (interference); Discarded the
	// discarded ones and Planned the planned blocks per arm (completeness).
	Contended  int      `json:"contended,omitempty"`
	Discarded  int      `json:"discarded,omitempty"`
	Planned    int      `json:"planned,omitempty"`
	Incomplete []ArmRef `json:"incomplete,omitempty"`
}

// CellVerdict is the decomposition verdict of one cell for one metric.
type CellVerdict struct {
	Cell    string  `json:"cell"`
	Metric  Metric  `json:"metric"`
	Verdict Verdict `json:"verdict"`
}

// ArmRef names an arm of a cell.
type ArmRef struct {
	Cell string `json:"cell"`
	Arm  string `json:"arm"`
}

// Cost is a paired difference Other − Base in one cell, oriented as the
// finding states it (a comparison computed the other way round is
// negated, its ratio inverted).
type Cost struct {
	Cell      string  `json:"cell"`
	Base      string  `json:"base"`
	Other     string  `json:"other"`
	BaseKind  ArmKind `json:"base_kind"`
	OtherKind ArmKind `json:"other_kind"`
	Metric    Metric  `json:"metric"`
	Unit      Unit    `json:"unit"`
	Diff      Est     `json:"diff"`
	Ratio     Est     `json:"ratio"`
	P         float64 `json:"p"`
	Pairs     int     `json:"pairs"`
	Achieved  bool    `json:"confidence_achieved"`
	// MinPairs is the fewest pairs that give an interval at the requested
	// confidence (set when Achieved is false).
	MinPairs int   `json:"min_pairs,omitempty"`
	UTest    UTest `json:"unpaired_u_test"`
}

// CellNamed returns the run's cell of that name, or nil.
func (r *RunSummary) CellNamed(name string) *CellSummary {
	for _, c := range r.Cells {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ArmNamed returns the cell's arm of that label, or nil.
func (c *CellSummary) ArmNamed(name string) *ArmSummary {
	for _, a := range c.Arms {
		if a.Arm == name {
			return a
		}
	}
	return nil
}

// InteractionOf returns the cell's decomposition of metric m, or nil.
func (c *CellSummary) InteractionOf(m Metric) *Interaction {
	for _, it := range c.Decomposition {
		if it.Metric == m {
			return it
		}
	}
	return nil
}
