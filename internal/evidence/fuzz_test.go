package evidence

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// The SDK log is written by the workload, which vigil does not trust: any
// bytes give valid events and one-line problems, never a panic.
func FuzzReadSDKLog(f *testing.F) {
	f.Add([]byte(`{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_started","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_call_id":"c","tool_name":"t"}` + "\n"))
	f.Add([]byte(`{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"run_finished","mono_ns":1,"time_unix_ns":1,"pid":1,"status":"ok"}`))
	f.Add([]byte("{\n}\n\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, problems := ReadSDKLog(bytes.NewReader(data), "r")
		for _, p := range problems {
			if strings.Contains(p, "\n") {
				t.Fatalf("multi-line problem %q", p)
			}
		}
		for _, e := range events {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if err := wire.Validate("sdk-event", line); err != nil {
				t.Fatalf("accepted an invalid SDK event: %v\n%s", err, line)
			}
		}
	})
}
