package evidence

import (
	"cmp"
	"fmt"
	"slices"
)

// Coverage is what a capture declares it observes on its host: the
// operation classes it covers, each with the hook it comes from and
// whether that hook attached, and the classes it does not cover, each with
// why. A kernel layer is complete relative to this declaration: a covered
// class whose hook did not attach makes it partial, and an uncovered class
// is never silently absent: it is listed here.
type Coverage struct {
	Covered    []CoveredClass   `json:"covered"`
	NotCovered []UncoveredClass `json:"not_covered"`
}

// CoveredClass is one operation class the capture records.
type CoveredClass struct {
	Class    string `json:"class"`
	Hook     string `json:"hook"`
	Attached bool   `json:"attached"`
	// Source says where the recorded facts come from (the kernel's own
	// objects, or the caller's memory) and what is left out.
	Source string `json:"source"`
}

// UncoveredClass is one operation class the capture does not record.
type UncoveredClass struct {
	Class string `json:"class"`
	Why   string `json:"why"`
}

// normalized sorts both lists by class and never leaves them nil.
func (c Coverage) normalized() Coverage {
	out := Coverage{
		Covered:    append([]CoveredClass{}, c.Covered...),
		NotCovered: append([]UncoveredClass{}, c.NotCovered...),
	}
	slices.SortStableFunc(out.Covered, func(a, b CoveredClass) int { return cmp.Compare(a.Class, b.Class) })
	slices.SortStableFunc(out.NotCovered, func(a, b UncoveredClass) int { return cmp.Compare(a.Class, b.Class) })
	return out
}

// coverageProbeMismatch names the first covered class whose hook is not a
// reported probe or whose attached state differs from that probe's, or "".
func coverageProbeMismatch(c Coverage, probes []Probe) string {
	attached := map[string]bool{}
	for _, p := range probes {
		attached[p.Name] = p.Attached
	}
	for _, cl := range c.Covered {
		a, ok := attached[cl.Hook]
		if !ok {
			return fmt.Sprintf("class %s names hook %s, which is not among the probes", cl.Class, cl.Hook)
		}
		if a != cl.Attached {
			return fmt.Sprintf("class %s says its hook %s attached=%t but the probe says %t", cl.Class, cl.Hook, cl.Attached, a)
		}
	}
	return ""
}
