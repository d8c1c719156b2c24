package report

import (
	"math"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// SummarySchema is the schema id of summary.json.
const SummarySchema = "vigil.summary/v1"

// Summary is the content of summary.json.
type Summary struct {
	Schema   string    `json:"schema"`
	Vigil    string    `json:"vigil_version"`
	Inputs   []string  `json:"inputs"`
	Options  Options   `json:"options"`
	Runs     []*Run    `json:"runs"`
	Findings []Finding `json:"findings"`
}

// Run is one host_class + plan seed; statistics never cross runs.
type Run struct {
	HostClass string            `json:"host_class"`
	Host      wire.BenchHost    `json:"host"`
	Seed      int64             `json:"seed"`
	Shards    []string          `json:"shards"`
	Versions  map[string]string `json:"versions"`
	Arms      []string          `json:"arms"`
	ArmKinds  []string          `json:"arm_kinds"`
	Blocks    int               `json:"blocks"`
	Warmup    int               `json:"warmup"`
	Order     string            `json:"order"`
	Samples   int               `json:"samples"`
	Cells     []*CellSummary    `json:"cells"`
	Noise     *NoiseFloor       `json:"noise_floor,omitempty"`
	// HostState is the host before the run (plan.json); MaxForeignCPUs
	// the interference gate it ran with (0: off).
	HostState      *wire.HostState `json:"host_state,omitempty"`
	MaxForeignCPUs float64         `json:"max_foreign_cpus"`
	// Sequential is the group-sequential design of the run, if any: its
	// last look's level decides the decomposition verdicts.
	Sequential *wire.Sequential `json:"sequential,omitempty"`
}

// CellSummary holds everything computed for one cell of a run.
type CellSummary struct {
	wire.Cell
	Arms          []*ArmSummary     `json:"arms"`
	Comparisons   []*Comparison     `json:"comparisons"`
	Decomposition []*Interaction    `json:"decomposition,omitempty"`
	Kernel        *KernelFidelity   `json:"kernel_fidelity,omitempty"`
	Spans         *SpanFidelity     `json:"span_fidelity,omitempty"`
	Interference  *CellInterference `json:"interference,omitempty"`
}

// ArmSummary is the per-arm table of one cell.
type ArmSummary struct {
	Arm     string `json:"arm"`
	ArmKind string `json:"arm_kind"`
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

	// byBlock maps block index to the chosen valid sample.
	byBlock map[int]*wire.Sample
}

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
	TailRatio  float64 `json:"p99_over_median"`
	TailBand   string  `json:"tail_band"`

	values []float64
}

// MemStat is a memory metric's median and maximum.
type MemStat struct {
	N      int     `json:"n"`
	Median Est     `json:"median"`
	Max    float64 `json:"max"`
	Min    float64 `json:"min"`

	values []float64
}

// Artifacts are median artifact sizes in bytes.
type Artifacts struct {
	TraceBytes            float64 `json:"trace_bytes"`
	ArchiveBytes          float64 `json:"archive_bytes"`
	ArchiveExtractedBytes float64 `json:"archive_extracted_bytes"`
}

// Est is an estimate with its interval; a bound is null when the sample is
// too small for the requested confidence.
type Est struct {
	Value      float64  `json:"value"`
	Lower      *float64 `json:"lower"`
	Upper      *float64 `json:"upper"`
	Confidence float64  `json:"confidence"`
}

func estOf(iv stats.Interval) Est {
	e := Est{Value: finite(iv.Est), Confidence: finite(iv.Confidence)}
	if !math.IsInf(iv.Lo, 0) && !math.IsNaN(iv.Lo) {
		v := iv.Lo
		e.Lower = &v
	}
	if !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Hi) {
		v := iv.Hi
		e.Upper = &v
	}
	return e
}

// Bounded reports whether both bounds exist.
func (e Est) Bounded() bool { return e.Lower != nil && e.Upper != nil }

// Lo and Hi return the bounds, ±Inf when absent.
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

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Comparison is one arm pair in one cell for one metric: Other − Base.
type Comparison struct {
	Base   string `json:"base"`
	Other  string `json:"other"`
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
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

	diffs []float64
}

// UTest is a Mann–Whitney U result.
type UTest struct {
	N1 int     `json:"n1"`
	N2 int     `json:"n2"`
	U  float64 `json:"u"`
	P  float64 `json:"p"`
}

// Verdicts of a decomposition.
const (
	Additive     = "additive"
	NotAdditive  = "not additive"
	Inconclusive = "inconclusive at this budget"
)

// Interaction is the decomposition of one metric in one cell: per block
// C − A − B + bare, which is 0 when the two layers' costs add up.
type Interaction struct {
	Metric        string        `json:"metric"`
	Unit          string        `json:"unit"`
	Blocks        int           `json:"blocks"` // blocks with all four arms valid
	PerBlock      []BlockValue  `json:"per_block"`
	Estimate      Est           `json:"estimate"` // Hodges–Lehmann + Wilcoxon interval
	P             float64       `json:"p"`
	BareMedian    float64       `json:"bare_median"`
	Tolerance     float64       `json:"tolerance"`
	ToleranceRule string        `json:"tolerance_rule"`
	Verdict       string        `json:"verdict"`
	Reason        string        `json:"reason"`
	Drift         Drift         `json:"drift"`
	Stopping      *StoppingRule `json:"stopping_rule,omitempty"`
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
	TrendSpan        float64 `json:"trend_over_run"` // |slope| × (blocks − 1)
	FirstHalfMedian  float64 `json:"first_half_median"`
	SecondHalfMedian float64 `json:"second_half_median"`
	Drifting         bool    `json:"drifting"`
}

// StoppingRule says what more sampling would do for an inconclusive verdict.
type StoppingRule struct {
	Settleable       bool   `json:"settleable"`
	BlocksNeeded     int    `json:"blocks_needed,omitempty"` // total complete blocks
	AdditionalBlocks int    `json:"additional_blocks,omitempty"`
	Text             string `json:"text"`
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

// SpanFidelity is the span retention of one cell (arms B and C).
type SpanFidelity struct {
	Samples     int    `json:"samples"`
	Requested   int    `json:"requested"`
	RetainedMin int    `json:"retained_min"`
	RetainedMax int    `json:"retained_max"`
	DroppedMin  int    `json:"dropped_min"`
	DroppedMax  int    `json:"dropped_max"`
	Limit       int    `json:"span_limit"`
	DroppedEnd  string `json:"dropped_end"` // none, oldest, newest, mixed
	Clipped     bool   `json:"clipped"`
	Text        string `json:"text"`
}

// NoiseFloor reports what A/A comparisons (two labels running the same
// arm kind) show: how often an interval excludes 0 although nothing differs.
type NoiseFloor struct {
	Comparisons        int         `json:"comparisons"`
	ExcludingZero      int         `json:"excluding_zero"`
	FalseRate          float64     `json:"false_difference_rate"`
	NominalRate        float64     `json:"nominal_rate"`
	MedianRelHalfWidth float64     `json:"median_relative_half_width"`
	Items              []NoiseItem `json:"items"`
	Text               string      `json:"text"`
}

// NoiseItem is one A/A comparison.
type NoiseItem struct {
	Cell         string  `json:"cell"`
	Base         string  `json:"base"`
	Other        string  `json:"other"`
	Metric       string  `json:"metric"`
	Pairs        int     `json:"pairs"`
	Diff         Est     `json:"diff"`
	RelHalfWidth float64 `json:"relative_half_width"`
	ExcludesZero bool    `json:"excludes_zero"`
}

// Finding is one numbered claim of findings.md.
type Finding struct {
	N         int      `json:"n"`
	HostClass string   `json:"host_class"`
	Title     string   `json:"title"`
	Claim     string   `json:"claim"`
	Evidence  []string `json:"evidence"`
	Scope     string   `json:"scope"`
	NonClaims []string `json:"non_claims"`
}
