package report

import (
	"fmt"

	"vigil/internal/wire"
)

// Summarize a bench run: four arms, six blocks, one cell, samples as
// vigil bench would have written them (here generated, additive).
func ExampleBuild() {
	p, samples := genCfg{arms: fourArms, kinds: fourKinds, cells: []wire.Cell{cell("control", 0, 0, 1)}, blocks: 6, seed: 2}.build()
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{samples}, []string{"bench-out"}, DefaultOptions())
	if err != nil {
		panic(err)
	}
	cs := s.Runs[0].Cells[0]
	for _, a := range cs.Arms {
		fmt.Printf("%s: %d of %d valid\n", a.Arm, a.Valid, a.Planned)
	}
	for _, d := range cs.Decomposition {
		fmt.Printf("%s decomposition: %s\n", d.Metric, d.Verdict)
	}
	// Output:
	// bare: 6 of 6 valid
	// A: 6 of 6 valid
	// B: 6 of 6 valid
	// C: 6 of 6 valid
	// wall_ns decomposition: additive
	// tree_peak_bytes decomposition: additive
}
