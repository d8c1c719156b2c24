package evidence_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"vigil/internal/event"
	"vigil/internal/evidence"
	"vigil/schema"
)

func open(seq uint64, path, access string, ret int64, create, trunc, app bool) event.Kernel {
	return event.Kernel{Seq: seq, TimeNS: seq, Kind: event.KindOpen, Open: &event.Open{
		Syscall: "openat", Path: path, Access: access, Ret: ret, Create: create, Truncate: trunc, Append: app}}
}

func TestBuildSurface(t *testing.T) {
	k := []event.Kernel{
		open(0, "/z/read", event.AccessRead, 3, false, false, false),
		open(1, "/a/read-again", event.AccessRead, 3, false, false, false),
		open(2, "/z/read", event.AccessRead, 4, false, false, false),
		open(3, "rel/rw", event.AccessReadWrite, 3, false, false, false),
		open(4, "/w/new", event.AccessWrite, 3, true, true, false),
		open(5, "/w/log", event.AccessWrite, 3, false, false, true),
		// O_RDONLY|O_TRUNC still changes the file: written, not read-only.
		open(6, "/w/trunc-ro", event.AccessRead, 3, false, true, false),
		open(7, "/denied", event.AccessWrite, -13, true, false, false),
		{Seq: 8, Kind: event.KindExec, Exec: &event.Exec{Filename: "/usr/bin/b", Argv0: "b"}},
		{Seq: 9, Kind: event.KindExec, Exec: &event.Exec{Filename: "/usr/bin/a", Argv0: "a"}},
		{Seq: 10, Kind: event.KindExec, Exec: &event.Exec{Filename: "/usr/bin/b", Argv0: "b"}},
		{Seq: 11, Kind: event.KindConnect, Connect: &event.Connect{Family: "inet6", Addr: "::1", Port: 80, Ret: 0}},
		{Seq: 12, Kind: event.KindConnect, Connect: &event.Connect{Family: "inet", Addr: "10.0.0.1", Port: 443, Ret: -115}},
		{Seq: 13, Kind: event.KindConnect, Connect: &event.Connect{Family: "inet", Addr: "10.0.0.1", Port: 80, Ret: -111}},
		{Seq: 14, Kind: event.KindConnect, Connect: &event.Connect{Family: "inet", Addr: "10.0.0.1", Port: 443, Ret: 0}},
		{Seq: 15, Kind: event.KindConnect, Connect: &event.Connect{Family: "unix", Addr: "/run/x.sock"}},
		{Seq: 16, Kind: event.KindFork, Fork: &event.Fork{}},
		{Seq: 17, Kind: event.KindExit, Exit: &event.Exit{}},
	}
	s := evidence.BuildSurface(k)
	want := evidence.CapabilitySurface{
		Schema:       evidence.SurfaceSchema,
		FilesRead:    []string{"/a/read-again", "/w/trunc-ro", "/z/read", "rel/rw"},
		FilesWritten: []string{"/w/log", "/w/new", "/w/trunc-ro", "rel/rw"},
		FilesCreated: []string{"/w/new"},
		OpenFailures: []string{"/denied"},
		Execs:        []string{"/usr/bin/a", "/usr/bin/b"},
		Network: []evidence.Endpoint{
			{Family: "inet", Addr: "10.0.0.1", Port: 80},
			{Family: "inet", Addr: "10.0.0.1", Port: 443},
			{Family: "inet6", Addr: "::1", Port: 80},
			{Family: "unix", Addr: "/run/x.sock"},
		},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("surface:\n got %+v\nwant %+v", s, want)
	}
	// Input order must not matter.
	rev := append([]event.Kernel(nil), k...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if got := evidence.BuildSurface(rev); !reflect.DeepEqual(got, want) {
		t.Fatalf("surface depends on event order:\n%+v", got)
	}
	s.RunID = "r"
	data, _ := json.Marshal(s)
	if err := schema.Validate("capability-surface", data); err != nil {
		t.Fatalf("schema: %v", err)
	}
	// An empty run still has every set, as [] rather than null.
	empty, _ := json.Marshal(evidence.BuildSurface(nil))
	if want := `{"schema":"vigil.capability-surface/v1","run_id":"","files_read":[],"files_written":[],"files_created":[],"open_failures":[],"execs":[],"network":[]}`; string(empty) != want {
		t.Fatalf("empty surface = %s", empty)
	}
}

func TestCorrelate(t *testing.T) {
	// Events at t = 100, 110, ..., 200 (seq 0..10), listed out of time
	// order to check the window uses time, not position.
	var k []event.Kernel
	for i := 10; i >= 0; i-- {
		kind, payload := event.KindOpen, event.Kernel{Open: &event.Open{Path: "p", Access: event.AccessRead}}
		if i == 5 {
			kind, payload = event.KindExec, event.Kernel{Exec: &event.Exec{Filename: "/bin/x"}}
		}
		payload.Seq, payload.TimeNS, payload.Kind = uint64(i), uint64(100+10*i), kind
		k = append(k, payload)
	}
	sdk := func(seq uint64, typ, id string, mono uint64, status string) event.SDK {
		return event.SDK{Schema: event.SDKSchema, RunID: "r", Seq: seq, Type: typ, ToolCallID: id, ToolName: "tool-" + id, MonoNS: mono, Status: status}
	}
	s := []event.SDK{
		sdk(0, event.SDKToolCallStarted, "a", 110, ""), // [110, 130]: seqs 1..3, inclusive ends
		sdk(1, event.SDKToolCallStarted, "b", 125, ""), // [125, 150]: seqs 3..5, overlaps a at seq 3
		sdk(2, event.SDKToolCallCompleted, "a", 130, "ok"),
		sdk(3, event.SDKToolCallCompleted, "b", 150, "error"),
		sdk(4, event.SDKToolCallCompleted, "ghost", 160, "ok"), // no start: ignored
		sdk(5, event.SDKToolCallStarted, "c", 185, ""),         // never completed: open to the end, seqs 9..10
	}
	r := evidence.Correlate(k, s)
	if len(r.ToolCalls) != 3 {
		t.Fatalf("tool calls = %+v, want a, b, c", r.ToolCalls)
	}
	check := func(i int, id string, completed bool, status string, ranges [][2]uint64, byKind map[event.Kind]uint64) {
		t.Helper()
		tc := r.ToolCalls[i]
		if tc.ToolCallID != id || tc.Completed != completed || tc.Status != status || tc.ToolName != "tool-"+id {
			t.Errorf("call %d = %+v", i, tc)
		}
		if !reflect.DeepEqual(tc.Kernel.SeqRanges, ranges) {
			t.Errorf("call %s seq ranges = %v, want %v", id, tc.Kernel.SeqRanges, ranges)
		}
		var total uint64
		for kind, n := range byKind {
			total += n
			if tc.Kernel.ByKind[kind] != n {
				t.Errorf("call %s by_kind[%s] = %d, want %d", id, kind, tc.Kernel.ByKind[kind], n)
			}
		}
		if tc.Kernel.Total != total || uint64(len(tc.Kernel.Seqs())) != total {
			t.Errorf("call %s total = %d (seqs %v), want %d", id, tc.Kernel.Total, tc.Kernel.Seqs(), total)
		}
	}
	check(0, "a", true, "ok", [][2]uint64{{1, 3}}, map[event.Kind]uint64{event.KindOpen: 3})
	check(1, "b", true, "error", [][2]uint64{{3, 5}}, map[event.Kind]uint64{event.KindOpen: 2, event.KindExec: 1})
	check(2, "c", false, "", [][2]uint64{{9, 10}}, map[event.Kind]uint64{event.KindOpen: 2})
	if r.ToolCalls[1].CompletedSeq != 3 || r.ToolCalls[1].CompletedMonoNS != 150 || r.ToolCalls[2].CompletedSeq != 0 {
		t.Errorf("completion fields wrong: %+v", r.ToolCalls)
	}
	// seqs 0, 6, 7, 8 are in no window.
	if !reflect.DeepEqual(r.Unattributed.SeqRanges, [][2]uint64{{0, 0}, {6, 8}}) || r.Unattributed.Total != 4 {
		t.Errorf("unattributed = %+v", r.Unattributed)
	}
	r.RunID = "r"
	data, _ := json.Marshal(r)
	if err := schema.Validate("correlation-report", data); err != nil {
		t.Fatalf("schema: %v", err)
	}
}
