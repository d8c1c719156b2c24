package evidence_test

import (
	"strings"
	"testing"

	"vigil/internal/wire"
)

// The line schemas must reject what the Go types would accept but the
// format forbids.
func TestLineSchemas(t *testing.T) {
	const common = `"seq":0,"ts_ns":1,"pid":1,"tid":1,"comm":"x","cgroup_id":1,"hook":"tp_btf/sys_exit"`
	exec := `"exec":{"file":{"path":"/bin/x"},"filename":"/bin/x","via":"path","argv":["x"],"argc":1,"ino":1,"dev":1}`
	fork := `"fork":{"parent_pid":1,"parent_tid":1,"child_pid":2,"child_tid":2,"thread":false}`
	open := `"open":{"file":{"path":"/p"},"name":{"requested":"p","dir":{"path":"/"}},"dirfd":-100,"flags":0,"mode":0,"ret":3,"access":"read","create":false,"truncate":false,"append":false,"syscall":"openat"}`
	unlink := `"file_op":{"name":{"requested":"x"},"syscall":"unlink","ret":0}`
	bad := `{"text":"a\ufffd","b64":"Yf8="}`
	cases := []struct {
		schema, doc string
		ok          bool
	}{
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `}`, true},
		{"kernel-event", `{` + common + `,"kind":"open",` + open + `}`, true},
		{"kernel-event", `{` + common + `,"kind":"unlink",` + unlink + `}`, true},
		{"kernel-event", `{` + common + `,"kind":"rmdir",` + unlink + `}`, true},
		{"kernel-event", `{` + strings.Replace(common, `"comm":"x"`, `"comm":`+bad, 1) + `,"kind":"exec",` + exec + `}`, true},
		{"kernel-event", `{` + strings.Replace(common, `"comm":"x"`, `"comm":{"text":"a"}`, 1) + `,"kind":"exec",` + exec + `}`, false},
		{"kernel-event", `{` + common + `,"kind":"exec"}`, false},                           // no payload
		{"kernel-event", `{` + common + `,"kind":"fork",` + exec + `}`, false},              // payload of another kind
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `,` + fork + `}`, false}, // two payloads
		{"kernel-event", `{` + common + `,"kind":"connect",` + unlink + `}`, false},         // file_op is not a net payload
		{"kernel-event", `{` + common + `,"kind":"exec",` + exec + `,"extra":1}`, false},
		{"kernel-event", `{` + common + `,"kind":"teleport",` + exec + `}`, false},
		{"kernel-event", `{` + strings.Replace(common, `"hook":"tp_btf/sys_exit"`, `"hook":"kprobe/x"`, 1) + `,"kind":"exec",` + exec + `}`, false},
		{"kernel-event", `{` + strings.Replace(common, `"pid":1`, `"pid":4294967296`, 1) + `,"kind":"exec",` + exec + `}`, false},
		{"kernel-event", `{` + common + `,"kind":"open",` + strings.Replace(open, `"read"`, `"rwx"`, 1) + `}`, false},
		{"kernel-event", `{` + common + `,"kind":"connect","net":{"fd":3,"family":"bluetooth","addr":"","port":1,"addr_from":"socket","sock_type":"stream","syscall":"connect","ret":0}}`, false},
		{"kernel-event", `{` + common + `,"kind":"connect","net":{"fd":3,"family":"inet","addr":"127.0.0.1","port":1,"addr_from":"socket","sock_type":"stream","syscall":"connect","ret":0}}`, true},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_started","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_call_id":"c","tool_name":"t"}`, true},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_started","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_name":"t"}`, false},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"tool_call_completed","mono_ns":1,"time_unix_ns":1,"pid":1,"tool_call_id":"c"}`, false},
		{"sdk-event", `{"schema":"vigil.sdk-event/v1","run_id":"r","seq":0,"type":"run_finished","mono_ns":1,"time_unix_ns":1,"pid":1,"status":"ok"}`, true},
		{"sdk-event", `{"schema":"vigil.sdk-event/v2","run_id":"r","seq":0,"type":"run_finished","mono_ns":1,"time_unix_ns":1,"pid":1,"status":"ok"}`, false},
	}
	for i, c := range cases {
		err := wire.Validate(c.schema, []byte(c.doc))
		if (err == nil) != c.ok {
			t.Errorf("case %d (%s): valid=%v, want %v: %v\n%s", i, c.schema, err == nil, c.ok, err, c.doc)
		}
	}
}
