package stats

import mstats "github.com/aclements/go-moremath/stats"

// studentTSF is P(T > t) for Student's t with df degrees of freedom.
func studentTSF(t, df float64) float64 {
	return 1 - mstats.TDist{V: df}.CDF(t)
}
