package sample_test

import (
	"fmt"

	"vigil/internal/sample"
)

// Where each arm of a plan sends its spans. A plan that does not list
// ArmExports (one written before collector arms existed) sends the traced
// arms, B and C, to a file.
func ExamplePlan_ExportOf() {
	p := sample.Plan{
		Arms:     []string{"bare", "A", "B", "C"},
		ArmKinds: []string{sample.ArmBare, sample.ArmA, sample.ArmB, sample.ArmC},
	}
	for _, arm := range p.Arms {
		fmt.Printf("%s %q\n", arm, p.ExportOf(arm))
	}
	p.Arms = append(p.Arms, "C@collector")
	p.ArmKinds = append(p.ArmKinds, sample.ArmC)
	p.ArmExports = []string{"", "", sample.ExportFile, sample.ExportFile, sample.ExportCollector}
	fmt.Printf("C@collector %q\n", p.ExportOf("C@collector"))
	// Output:
	// bare ""
	// A ""
	// B "file"
	// C "file"
	// C@collector "collector"
}
