package evidence_test

import (
	"fmt"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// Check finds documents of a bundle that disagree: here a health document
// whose event counts no longer match the kernel layer.
func ExampleCheck() {
	b := evidencetest.Bundle(10, 1)
	fmt.Println(evidence.Check(b))
	b.Kernel = b.Kernel[:len(b.Kernel)-1]
	fmt.Println(evidence.Check(b))
	// Output:
	// <nil>
	// observation-health.json: counts.exit is 2 but layers/kernel.ndjson has 1 exit events
}

func ExampleCountKinds() {
	k := evidence.CountKinds(evidencetest.Kernel(10, 0))
	fmt.Println(k[wire.KindFork], "fork,", k[wire.KindExec], "exec,", k[wire.KindOpen], "open,", k[wire.KindExit], "exit")
	// Output:
	// 2 fork, 1 exec, 4 open, 2 exit
}
