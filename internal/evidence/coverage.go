package evidence

import (
	"cmp"
	"fmt"
	"slices"

	"vigil/internal/wire"
)

// normalizedCoverage sorts both lists by class and never leaves them nil.
func normalizedCoverage(c wire.Coverage) wire.Coverage {
	out := wire.Coverage{
		Covered:    append([]wire.CoveredClass{}, c.Covered...),
		NotCovered: append([]wire.UncoveredClass{}, c.NotCovered...),
	}
	slices.SortStableFunc(out.Covered, func(a, b wire.CoveredClass) int { return cmp.Compare(a.Class, b.Class) })
	slices.SortStableFunc(out.NotCovered, func(a, b wire.UncoveredClass) int { return cmp.Compare(a.Class, b.Class) })
	return out
}

// coverageProbeMismatch names the first covered class whose hook is not a
// reported probe or whose attached state differs from that probe's, or "".
func coverageProbeMismatch(c wire.Coverage, probes []wire.Probe) string {
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
