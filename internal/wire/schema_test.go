package wire

import "testing"

func TestPhasesSchema(t *testing.T) {
	good := `{"schema":"vigil.phases/v1","run_id":"r","phases_ms":{"preflight":1,"attach":1,"cgroup":1,"spawn":1,"child_runtime":1,"drain":1,"archive_write":1,"teardown":1},"total_ms":8,"exit_code":0,"kernel_layer":"complete","cgroup_correlation":"clean","ringbuf_drops":0}`
	if err := Validate("phases", []byte(good)); err != nil {
		t.Fatalf("valid document rejected: %v", err)
	}
	bad := `{"schema":"vigil.phases/v1","run_id":"r","phases_ms":{},"total_ms":8,"exit_code":0,"kernel_layer":"done","cgroup_correlation":"clean","ringbuf_drops":0}`
	if err := Validate("phases", []byte(bad)); err == nil {
		t.Fatal("invalid document accepted")
	}
	if len(Names()) == 0 {
		t.Fatal("no schemas embedded")
	}
}

// Every embedded schema must compile (they compile lazily at run time, so a
// broken one would otherwise surface only when first used).
func TestAllSchemasCompile(t *testing.T) {
	names := Names()
	if len(names) < 10 {
		t.Fatalf("only %d schemas embedded: %v", len(names), names)
	}
	if err := Warm(names...); err != nil {
		t.Fatal(err)
	}
	if err := Validate("no-such-schema", []byte(`{}`)); err == nil {
		t.Fatal("unknown schema name accepted")
	}
}

// An event names the parts it lacks from a closed list, each once.
func TestKernelEventIncompleteSchema(t *testing.T) {
	line := func(incomplete string) []byte {
		return []byte(`{"seq":0,"ts_ns":1,"kind":"exit","pid":1,"tid":1,"comm":"a","cgroup_id":1,"hook":"tp_btf/sched_process_exit","exit":{"code":0,"signal":0,"group_dead":true}` + incomplete + `}`)
	}
	if err := Validate("kernel-event", line(`,"incomplete":["read_failed","argv_truncated"]`)); err != nil {
		t.Fatalf("valid event rejected: %v", err)
	}
	for _, bad := range []string{`,"incomplete":[]`, `,"incomplete":["half_there"]`, `,"incomplete":["path_truncated","path_truncated"]`, `,"incomplete":"read_failed"`} {
		if err := Validate("kernel-event", line(bad)); err == nil {
			t.Errorf("event with %s accepted", bad)
		}
	}
}
