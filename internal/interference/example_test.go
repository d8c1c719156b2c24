package interference_test

import (
	"fmt"

	"vigil/internal/interference"
	"vigil/internal/wire"
)

// A sample is contended only when the foreign load, less what tick
// rounding alone could explain, passes the limit.
func ExampleContended() {
	figures := func(foreign, resolution float64) *wire.Interference {
		return &wire.Interference{ForeignCPUs: &foreign, ForeignCPUsResolution: &resolution}
	}
	fmt.Println(interference.Contended(figures(0.9, 0.1), 0.5))    // clearly busy
	fmt.Println(interference.Contended(figures(0.9, 0.5), 0.5))    // within rounding of the limit
	fmt.Println(interference.Contended(figures(0.9, 0.1), 0))      // gate off
	fmt.Println(interference.Contended(&wire.Interference{}, 0.5)) // the host could not tell
	// Output:
	// true
	// false
	// false
	// false
}
