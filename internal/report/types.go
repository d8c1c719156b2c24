package report

import (
	"math"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

func estOf(iv stats.Interval) wire.Est {
	e := wire.Est{Value: finite(iv.Est), Confidence: finite(iv.Confidence)}
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
