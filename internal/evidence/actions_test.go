package evidence

import (
	"testing"

	"vigil/internal/event"
)

func TestActions(t *testing.T) {
	name := func(s string) *event.Name { return &event.Name{Requested: event.Bytes(s)} }
	net := func(kind event.Kind, ret int64) event.Kernel {
		return event.Kernel{Kind: kind, Net: &event.Net{Family: "inet", Addr: "10.0.0.1", Port: 53, Ret: ret}}
	}
	cases := []struct {
		e    event.Kernel
		want []Action
	}{
		{event.Kernel{Kind: event.KindOpen, Open: &event.Open{File: &event.ResolvedPath{Path: "/f"}, Access: event.AccessReadWrite, Create: true, Ret: 3}},
			[]Action{{Op: OpRead, Path: "/f"}, {Op: OpWrite, Path: "/f"}, {Op: OpCreate, Path: "/f"}}},
		{event.Kernel{Kind: event.KindOpen, Open: &event.Open{Name: event.Name{Requested: "/x/../g"}, Access: event.AccessRead, Ret: -2}},
			[]Action{{Op: OpRead, Path: "/g", Failed: true}}},
		{event.Kernel{Kind: event.KindRename, FileOp: &event.FileOp{Name: name("/a"), NewName: name("/b/./c")}},
			[]Action{{Op: OpRename, Path: "/a", To: "/b/c"}}},
		{event.Kernel{Kind: event.KindSymlink, FileOp: &event.FileOp{NewName: name("/l"), Target: ptr(event.Bytes("t"))}},
			[]Action{{Op: OpLink, Path: "/l"}}},
		{event.Kernel{Kind: event.KindChown, FileOp: &event.FileOp{File: &event.ResolvedPath{Path: "/o"}, Ret: -1}},
			[]Action{{Op: OpChown, Path: "/o", Failed: true}}},
		{event.Kernel{Kind: event.KindExecFailed, ExecFailed: &event.ExecFailed{Name: event.Name{Requested: "/nope"}, Ret: -2}},
			[]Action{{Op: OpExec, Path: "/nope", Failed: true}}},
		{net(event.KindConnect, -115), []Action{{Op: OpConnect, Endpoint: Endpoint{"inet", "10.0.0.1", 53}}}},
		{net(event.KindConnect, -111), []Action{{Op: OpConnect, Endpoint: Endpoint{"inet", "10.0.0.1", 53}, Failed: true}}},
		{net(event.KindSend, -1), []Action{{Op: OpSend, Endpoint: Endpoint{"inet", "10.0.0.1", 53}, Failed: true}}},
		{event.Kernel{Kind: event.KindFork, Fork: &event.Fork{}}, nil},
	}
	for i, c := range cases {
		got := Actions(&c.e, nil)
		if len(got) != len(c.want) {
			t.Errorf("case %d (%s): %+v, want %+v", i, c.e.Kind, got, c.want)
			continue
		}
		for j := range got {
			if got[j] != c.want[j] {
				t.Errorf("case %d (%s) action %d: %+v, want %+v", i, c.e.Kind, j, got[j], c.want[j])
			}
		}
	}
	if s := (Endpoint{"inet6", "::1", 53}).String(); s != "inet6:[::1]:53" {
		t.Errorf("endpoint %q", s)
	}
}

func ptr[T any](v T) *T { return &v }

func TestEventSetEvents(t *testing.T) {
	var k []event.Kernel
	for _, q := range []uint64{0, 1, 2, 4, 5, 7, 9} {
		k = append(k, event.Kernel{Seq: q})
	}
	s := EventSet{Total: 5, SeqRanges: [][2]uint64{{1, 2}, {4, 6}, {9, 9}}}
	var got []uint64
	for _, e := range s.Events(k) {
		got = append(got, e.Seq)
	}
	if want := []uint64{1, 2, 4, 5, 9}; len(got) != len(want) || got[0] != 1 || got[2] != 4 || got[4] != 9 {
		t.Errorf("events %v, want %v", got, want)
	}
}
