package evidence_test

import (
	"strings"
	"testing"

	"vigil/schema"
)

// The line schemas must reject what the Go types would accept but the
// format forbids.
func TestLineSchemas(t *testing.T) {
	const common = `"seq":0,"ts_ns":1,"pid":1,"tid":1,"comm":"x","cgroup_id":1`
	exec := `"exec":{"filename":"/bin/x","argv0":"x"}`
	fork := `"fork":{"parent_pid":1,"parent_tid":1,"child_pid":2,"child_tid":2,"thread":false}`
	open := `"open":{"syscall":"openat","dirfd":-100,"path":"p","flags":0,"mode":0,"ret":3,"access":"read","create":false,"truncate":false,"append":false}`
	cases := []struct {
		schema, doc string
		ok          bool
	}{
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `}`, true},
		{"kernel-event", `{` + common + `,"kind":"open",` + open + `}`, true},
		{"kernel-event", `{` + common + `,"kind":"exec"}`, false},                           // no payload
		{"kernel-event", `{` + common + `,"kind":"fork",` + exec + `}`, false},              // payload of another kind
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `,` + fork + `}`, false}, // two payloads
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `,"extra":1}`, false},
		{"kernel-event", `{` + common + `,"kind":"teleport",` + exec + `}`, false},
		{"kernel-event", `{` + strings.Replace(common, `"pid":1`, `"pid":4294967296`, 1) + `,"kind":"exec",` + exec + `}`, false},
		{"kernel-event", `{` + common + `,"kind":"open",` + strings.Replace(open, `"read"`, `"rwx"`, 1) + `}`, false},
		{"kernel-event", `{` + common + `,"kind":"connect","connect":{"fd":3,"family":"bluetooth","addr":"","port":1,"ret":0}}`, false},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_started","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_call_id":"c","tool_name":"t"}`, true},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_started","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_name":"t"}`, false},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_completed","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_call_id":"c"}`, false},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"run_finished","mono_ns":1,"time_unix_ns":1,"pid":1,"status":"ok"}`, true},
		{"sdk-event", `{"schema":"vigil.sdk-event/v2","run_id":"r","seq":0,"type":"run_finished","mono_ns":1,"time_unix_ns":1,"pid":1,"status":"ok"}`, false},
	}
	for i, c := range cases {
		err := schema.Validate(c.schema, []byte(c.doc))
		if (err == nil) != c.ok {
			t.Errorf("case %d (%s): valid=%v, want %v: %v\n%s", i, c.schema, err == nil, c.ok, err, c.doc)
		}
	}
}
