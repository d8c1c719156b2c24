package report

import (
	"testing"
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
		g.wall = verdictWall(blocks)
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
