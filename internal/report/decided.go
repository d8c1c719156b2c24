package report

import "vigil/internal/wire"

// Decided reports whether the samples decide every decomposition verdict
// (none inconclusive) at the default level, with at least one verdict: the
// stopping test of a group-sequential bench run.
func Decided(plan wire.Plan, samples []wire.Sample) (bool, error) {
	sum, err := Build([]wire.Plan{plan}, [][]wire.Sample{samples}, nil, DefaultOptions())
	if err != nil {
		return false, err
	}
	any := false
	for _, r := range sum.Runs {
		for _, cs := range r.Cells {
			for _, it := range cs.Decomposition {
				any = true
				if it.Verdict == wire.Inconclusive {
					return false, nil
				}
			}
		}
	}
	return any, nil
}
