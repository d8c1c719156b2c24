package event_test

import (
	"encoding/json"
	"fmt"

	"vigil/internal/event"
)

// A name that is valid UTF-8 is a plain JSON string; any other byte
// string keeps its exact bytes beside a readable rendering, and reads back
// unchanged.
func ExampleBytes() {
	for _, name := range []event.Bytes{"/tmp/report.txt", "/tmp/r\xe9sum\xe9.txt"} {
		data, err := json.Marshal(name)
		if err != nil {
			panic(err)
		}
		var back event.Bytes
		if err := json.Unmarshal(data, &back); err != nil {
			panic(err)
		}
		fmt.Println(string(data), back == name)
	}
	// Output:
	// "/tmp/report.txt" true
	// {"text":"/tmp/r�sum�.txt","b64":"L3RtcC9y6XN1bekudHh0"} true
}
