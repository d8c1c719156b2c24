package report

import (
	"math/rand/v2"
	"testing"

	"vigil/internal/wire"
)

// Decided is true only when every decomposition verdict is decided: an
// additive and a non-additive cell decide, a drifting one does not.
func TestDecided(t *testing.T) {
	const blocks = 20
	run := func(cells ...string) bool {
		t.Helper()
		g := genCfg{arms: fourArms, kinds: fourKinds, blocks: blocks, warmup: 1, seed: 11}
		for _, c := range cells {
			g.cells = append(g.cells, cell(c, 0, 0, 1))
		}
		g.wall = func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
			v := defaultWall(c, kind, block, rng)
			if kind != wire.ArmC {
				return v
			}
			switch c.Name {
			case "inter":
				v += 10e6
			case "drift":
				v += (float64(block) - float64(blocks-1)/2) * 12e6 / float64(blocks-1)
			}
			return v
		}
		p, ss := g.build()
		ok, err := Decided(p, ss)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !run("add", "inter") {
		t.Error("additive and non-additive cells: not decided")
	}
	if run("add", "drift") {
		t.Error("a drifting cell: decided")
	}
}
