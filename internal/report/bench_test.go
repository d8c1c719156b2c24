package report

import (
	"math/rand/v2"
	"testing"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// BenchmarkBuild measures summarizing the reference scenario (3 cells,
// 4 arms, 20 blocks, 2000 bootstrap resamples per comparison).
func BenchmarkBuild(b *testing.B) {
	p, ss := referenceRun().build()
	for b.Loop() {
		if _, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"x"}, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignedRank100 measures one Hodges–Lehmann estimate with its
// interval for 100 paired differences (normal approximation path).
func BenchmarkSignedRank100(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := make([]float64, 100)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	for b.Loop() {
		stats.SignedRank(d, 0.95)
	}
}
