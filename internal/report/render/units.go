package render

import (
	"fmt"
	"math"

	"vigil/internal/wire"
)

// Units are printed as people read them (12.34 ms, 4.74 MiB) with a
// precision that depends on the magnitude; the precision rules are part
// of the report's stable text.

// fmtUnit renders a value in its unit for people: durations in ns/µs/ms/s,
// sizes in B/KiB/MiB/GiB.
func fmtUnit(v float64, unit wire.Unit) string {
	if math.IsInf(v, 1) {
		return "+∞"
	}
	if math.IsInf(v, -1) {
		return "−∞"
	}
	switch unit {
	case wire.UnitNS:
		return fmtDur(v)
	case wire.UnitBytes:
		return fmtBytes(v)
	}
	return fmt.Sprintf("%.4g", v)
}

func fmtDur(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a >= 10e9:
		return fmt.Sprintf("%.1f s", ns/1e9)
	case a >= 1e9:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case a >= 100e6:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	case a >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func fmtBytes(b float64) string {
	a := math.Abs(b)
	switch {
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// fmtSigned is fmtUnit with an explicit sign.
func fmtSigned(v float64, unit wire.Unit) string {
	s := fmtUnit(v, unit)
	if v > 0 || (v == 0 && !math.Signbit(v)) {
		return "+" + s
	}
	if s[0] == '-' {
		return "−" + s[1:]
	}
	return s
}

// fmtEst renders "value [lo, hi]".
func fmtEst(e wire.Est, unit wire.Unit, signed bool) string {
	f := fmtUnit
	if signed {
		f = fmtSigned
	}
	if !e.Bounded() {
		return fmt.Sprintf("%s [interval needs more samples]", f(e.Value, unit))
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Value, unit), f(e.Lo(), unit), f(e.Hi(), unit))
}

// fmtRatio renders a ratio estimate "1.23× [1.10, 1.31]". A ratio that
// does not exist (zero base median, no pairs) is stored as value 0 with
// no bounds and confidence 0; it is named, not printed as 0.
func fmtRatio(e wire.Est) string {
	if e.Lower == nil && e.Upper == nil && e.Confidence == 0 {
		return "undefined (base median 0 or no pairs)"
	}
	if !e.Bounded() {
		return fmt.Sprintf("%.3f×", e.Value)
	}
	return fmt.Sprintf("%.3f× [%.3f, %.3f]", e.Value, e.Lo(), e.Hi())
}
