//go:build linux

package affinity_test

import (
	"fmt"

	"vigil/internal/affinity"
)

// Parse reads a kernel CPU list as --cpus and --runner-cpus take it; its
// errors name the flag.
func ExampleParse() {
	set, err := affinity.Parse("--cpus", "0")
	if err != nil {
		panic(err)
	}
	fmt.Println(set.Count(), "CPU, CPU 0:", set.IsSet(0))
	_, err = affinity.Parse("--cpus", "3-1")
	fmt.Println(err)
	// Output:
	// 1 CPU, CPU 0: true
	// --cpus "3-1": want a list like 0-1,3
}
