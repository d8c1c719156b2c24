package wire_test

import (
	"encoding/json"
	"fmt"

	"vigil/internal/wire"
)

// A name that is valid UTF-8 is a plain JSON string; any other byte
// string keeps its exact bytes beside a readable rendering, and reads back
// unchanged.
func ExampleBytes() {
	for _, name := range []wire.Bytes{"/tmp/report.txt", "/tmp/r\xe9sum\xe9.txt"} {
		data, err := json.Marshal(name)
		if err != nil {
			panic(err)
		}
		var back wire.Bytes
		if err := json.Unmarshal(data, &back); err != nil {
			panic(err)
		}
		fmt.Println(string(data), back == name)
	}
	// Output:
	// "/tmp/report.txt" true
	// {"text":"/tmp/r�sum�.txt","b64":"L3RtcC9y6XN1bekudHh0"} true
}

// Where each arm of a plan sends its spans. A plan that does not list
// ArmExports (one written before collector arms existed) sends the traced
// arms, B and C, to a file.
func ExamplePlan_ExportOf() {
	p := wire.Plan{
		Arms:     []string{"bare", "A", "B", "C"},
		ArmKinds: []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC},
	}
	for _, arm := range p.Arms {
		fmt.Printf("%s %q\n", arm, p.ExportOf(arm))
	}
	p.Arms = append(p.Arms, "C@collector")
	p.ArmKinds = append(p.ArmKinds, wire.ArmC)
	p.ArmExports = []string{"", "", wire.ExportFile, wire.ExportFile, wire.ExportCollector}
	fmt.Printf("C@collector %q\n", p.ExportOf("C@collector"))
	// Output:
	// bare ""
	// A ""
	// B "file"
	// C "file"
	// C@collector "collector"
}
