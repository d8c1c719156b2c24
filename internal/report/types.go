package report

import (
	"math"

	"vigil/internal/report/model"
	"vigil/internal/stats"
)

// The summary types live in package model; these names keep the analysis
// readable.
type (
	Summary           = model.Summary
	Run               = model.Run
	CellSummary       = model.CellSummary
	ArmSummary        = model.ArmSummary
	Dist              = model.Dist
	MemStat           = model.MemStat
	Artifacts         = model.Artifacts
	Est               = model.Est
	Comparison        = model.Comparison
	UTest             = model.UTest
	Interaction       = model.Interaction
	BlockValue        = model.BlockValue
	Drift             = model.Drift
	StoppingRule      = model.StoppingRule
	KernelFidelity    = model.KernelFidelity
	SpanFidelity      = model.SpanFidelity
	NoiseFloor        = model.NoiseFloor
	NoiseItem         = model.NoiseItem
	CellInterference  = model.CellInterference
	InterferencePoint = model.InterferencePoint
	Finding           = model.Finding
	Verdict           = model.Verdict
)

// SummarySchema is the schema id of summary.json.
const SummarySchema = model.SummarySchema

// Verdicts of a decomposition.
const (
	Additive     = model.Additive
	NotAdditive  = model.NotAdditive
	Inconclusive = model.Inconclusive
)

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

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
