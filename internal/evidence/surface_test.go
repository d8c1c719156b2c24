package evidence_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/event"
	"vigil/internal/evidence"
	"vigil/schema"
)

func open(seq uint64, path, access string, ret int64, create, trunc, app bool) event.Kernel {
	o := &event.Open{Syscall: "openat", Name: event.Name{Requested: event.Bytes(path)}, Access: access, Ret: ret, Create: create, Truncate: trunc, Append: app}
	if ret >= 0 {
		o.File = &event.ResolvedPath{Path: "/cwd/" + event.Bytes(strings.TrimPrefix(path, "/"))}
	} else {
		o.Name.Dir = &event.ResolvedPath{Path: "/cwd"}
	}
	return event.Kernel{Seq: seq, TimeNS: seq, Kind: event.KindOpen, Open: o}
}

func fileOp(seq uint64, kind event.Kind, name string, ret int64) event.Kernel {
	return event.Kernel{Seq: seq, Kind: kind, FileOp: &event.FileOp{Name: &event.Name{Requested: event.Bytes(name), Dir: &event.ResolvedPath{Path: "/cwd"}}, Ret: ret}}
}

func net(seq uint64, kind event.Kind, family, addr string, port uint16, ret int64) event.Kernel {
	return event.Kernel{Seq: seq, Kind: kind, Net: &event.Net{Family: family, Addr: event.Bytes(addr), Port: port, Ret: ret}}
}

func TestBuildSurface(t *testing.T) {
	rename := fileOp(24, event.KindRename, "old", 0)
	rename.FileOp.NewName = &event.Name{Requested: "/abs/new"}
	link := fileOp(25, event.KindSymlink, "", 0)
	link.FileOp.Name = nil
	link.FileOp.NewName = &event.Name{Requested: "ln", Dir: &event.ResolvedPath{Path: "/"}}
	k := []event.Kernel{
		open(0, "/z/read", event.AccessRead, 3, false, false, false),
		open(1, "/a/read-again", event.AccessRead, 3, false, false, false),
		open(2, "/z/read", event.AccessRead, 4, false, false, false),
		open(3, "rel/rw", event.AccessReadWrite, 3, false, false, false),
		open(4, "/w/new", event.AccessWrite, 3, true, true, false),
		open(5, "/w/log", event.AccessWrite, 3, false, false, true),
		// O_RDONLY|O_TRUNC still changes the file: written, not read-only.
		open(6, "/w/trunc-ro", event.AccessRead, 3, false, true, false),
		open(7, "denied", event.AccessWrite, -13, true, false, false),
		{Seq: 8, Kind: event.KindExec, Exec: &event.Exec{File: event.ResolvedPath{Path: "/usr/bin/b"}, Filename: "b"}},
		{Seq: 9, Kind: event.KindExec, Exec: &event.Exec{File: event.ResolvedPath{Path: "/usr/bin/a"}, Filename: "a"}},
		{Seq: 10, Kind: event.KindExec, Exec: &event.Exec{File: event.ResolvedPath{Path: "/usr/bin/b"}, Filename: "/usr/bin/b"}},
		net(11, event.KindConnect, "inet6", "::1", 80, 0),
		net(12, event.KindConnect, "inet", "10.0.0.1", 443, -115),
		net(13, event.KindConnect, "inet", "10.0.0.1", 80, -111),
		net(14, event.KindConnect, "inet", "10.0.0.1", 443, 0),
		net(15, event.KindConnect, "unix", "/run/x.sock", 0, 0),
		{Seq: 16, Kind: event.KindFork, Fork: &event.Fork{}},
		{Seq: 17, Kind: event.KindExit, Exit: &event.Exit{}},
		{Seq: 18, Kind: event.KindExecFailed, ExecFailed: &event.ExecFailed{Ret: -2, Name: event.Name{Requested: "/nope"}}},
		fileOp(19, event.KindUnlink, "gone", 0),
		fileOp(30, event.KindUnlink, "sub/../gone2", 0), // one file, one spelling
		fileOp(20, event.KindUnlink, "refused", -13),
		fileOp(21, event.KindMkdir, "d", 0),
		fileOp(22, event.KindChmod, "gone", 0),
		fileOp(23, event.KindTruncate, "t", 0),
		rename, link,
		net(26, event.KindSend, "inet", "127.0.0.1", 53, 12),
		net(27, event.KindSend, "inet", "127.0.0.2", 53, -1),
		net(28, event.KindListen, "inet", "0.0.0.0", 8080, 0),
		{Seq: 29, Kind: event.KindIOUring, IOUring: &event.IOUring{Op: "openat", Res: 5, File: &event.ResolvedPath{Path: "/u/ring"}, Access: event.AccessRead}},
	}
	s := evidence.BuildSurface(k)
	want := evidence.CapabilitySurface{
		Schema:         evidence.SurfaceSchema,
		FilesRead:      []event.Bytes{"/cwd/a/read-again", "/cwd/rel/rw", "/cwd/w/trunc-ro", "/cwd/z/read", "/u/ring"},
		FilesWritten:   []event.Bytes{"/cwd/rel/rw", "/cwd/w/log", "/cwd/w/new", "/cwd/w/trunc-ro"},
		FilesCreated:   []event.Bytes{"/cwd/w/new"},
		OpenFailures:   []event.Bytes{"/cwd/denied"},
		FilesDeleted:   []event.Bytes{"/cwd/gone", "/cwd/gone2"},
		DirsCreated:    []event.Bytes{"/cwd/d"},
		FilesRenamed:   []evidence.Rename{{From: "/cwd/old", To: "/abs/new"}},
		LinksCreated:   []event.Bytes{"/ln"},
		ModeChanged:    []event.Bytes{"/cwd/gone"},
		FilesTruncated: []event.Bytes{"/cwd/t"},
		Execs:          []event.Bytes{"/usr/bin/a", "/usr/bin/b"},
		ExecFailures:   []event.Bytes{"/nope"},
		Network: []evidence.Endpoint{
			{Family: "inet", Addr: "10.0.0.1", Port: 80},
			{Family: "inet", Addr: "10.0.0.1", Port: 443},
			{Family: "inet6", Addr: "::1", Port: 80},
			{Family: "unix", Addr: "/run/x.sock"},
		},
		NetworkSent:  []evidence.Endpoint{{Family: "inet", Addr: "127.0.0.1", Port: 53}},
		NetworkLocal: []evidence.Endpoint{{Family: "inet", Addr: "0.0.0.0", Port: 8080}},
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
	if strings.Contains(string(empty), "null") {
		t.Fatalf("empty surface has a null set: %s", empty)
	}
}

func TestCorrelate(t *testing.T) {
	// Events at t = 100, 110, ..., 200 (seq 0..10), listed out of time
	// order to check the window uses time, not position.
	var k []event.Kernel
	for i := 10; i >= 0; i-- {
		kind, payload := event.KindOpen, event.Kernel{Open: &event.Open{Name: event.Name{Requested: "p"}, Access: event.AccessRead}}
		if i == 5 {
			kind, payload = event.KindExec, event.Kernel{Exec: &event.Exec{File: event.ResolvedPath{Path: "/bin/x"}}}
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
