package evidence

import (
	"fmt"
	"slices"
	"testing"

	"vigil/internal/wire"
)

func TestActions(t *testing.T) {
	name := func(s string) *wire.Name { return &wire.Name{Requested: wire.Bytes(s)} }
	net := func(kind wire.Kind, ret int64) wire.Kernel {
		return wire.Kernel{Kind: kind, Net: &wire.Net{Family: "inet", Addr: "10.0.0.1", Port: 53, Ret: ret}}
	}
	cases := []struct {
		e    wire.Kernel
		want []Action
	}{
		{wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{File: &wire.ResolvedPath{Path: "/f"}, Access: wire.AccessReadWrite, Create: true, Ret: 3}},
			[]Action{{Op: OpRead, Path: "/f"}, {Op: OpWrite, Path: "/f"}, {Op: OpCreate, Path: "/f"}}},
		{wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Name: wire.Name{Requested: "/x/../g"}, Access: wire.AccessRead, Ret: -2}},
			[]Action{{Op: OpRead, Path: "/g", Failed: true}}},
		{wire.Kernel{Kind: wire.KindRename, FileOp: &wire.FileOp{Name: name("/a"), NewName: name("/b/./c")}},
			[]Action{{Op: OpRename, Path: "/a", To: "/b/c"}}},
		{wire.Kernel{Kind: wire.KindSymlink, FileOp: &wire.FileOp{NewName: name("/l"), Target: ptr(wire.Bytes("t"))}},
			[]Action{{Op: OpLink, Path: "/l"}}},
		{wire.Kernel{Kind: wire.KindChown, FileOp: &wire.FileOp{File: &wire.ResolvedPath{Path: "/o"}, Ret: -1}},
			[]Action{{Op: OpChown, Path: "/o", Failed: true}}},
		{wire.Kernel{Kind: wire.KindExecFailed, ExecFailed: &wire.ExecFailed{Name: wire.Name{Requested: "/nope"}, Ret: -2}},
			[]Action{{Op: OpExec, Path: "/nope", Failed: true}}},
		{net(wire.KindConnect, -115), []Action{{Op: OpConnect, Endpoint: Endpoint{"inet", "10.0.0.1", 53}}}},
		{net(wire.KindConnect, -111), []Action{{Op: OpConnect, Endpoint: Endpoint{"inet", "10.0.0.1", 53}, Failed: true}}},
		{net(wire.KindSend, -1), []Action{{Op: OpSend, Endpoint: Endpoint{"inet", "10.0.0.1", 53}, Failed: true}}},
		{wire.Kernel{Kind: wire.KindFork, Fork: &wire.Fork{}}, nil},
		// An io_uring connect is no action: Unrecorded counts it.
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 16, Op: "connect"}}, nil},
		// io_uring file-tree requests with their names act as the
		// syscalls do; without them, no action (Unrecorded counts them).
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Name: name("/w/x")}},
			[]Action{{Op: OpDelete, Path: "/w/x"}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Res: -2, Name: name("/w/y")}},
			[]Action{{Op: OpDelete, Path: "/w/y", Failed: true}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 37, Op: "mkdirat", Name: name("/w/d")}},
			[]Action{{Op: OpMkdir, Path: "/w/d"}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 35, Op: "renameat", Name: name("/w/a"), NewName: name("/w/b")}},
			[]Action{{Op: OpRename, Path: "/w/a", To: "/w/b"}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 39, Op: "linkat", Name: name("/w/a"), NewName: name("/w/l")}},
			[]Action{{Op: OpLink, Path: "/w/l"}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 38, Op: "symlinkat", Target: ptr(wire.Bytes("t")), NewName: name("/w/s")}},
			[]Action{{Op: OpLink, Path: "/w/s"}}},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 35, Op: "renameat", Name: name("/w/a")}}, nil},
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat", Name: name("w/x")}}, nil}, // relative: no directory
		{wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat"}}, nil},
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
	var k []wire.Kernel
	for _, q := range []uint64{0, 1, 2, 4, 5, 7, 9} {
		k = append(k, wire.Kernel{Seq: q})
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

// Every io_uring operation Unrecorded knows is one the capture names, so
// a renamed opcode cannot fall silently out of vigil check's account.
func TestUnrecordedNamesCapturedOps(t *testing.T) {
	for name, ops := range ioUringUnrecorded {
		if !slices.Contains(wire.IOUringOps, name) {
			t.Errorf("io_uring %q is not an op the capture names", name)
		}
		// A record without the io_uring hook cannot show these: vigil
		// check learns it from OpKinds.
		for _, op := range ops {
			if !slices.Contains(OpKinds[op], wire.KindIOUring) {
				t.Errorf("io_uring %s may %s, yet OpKinds[%[2]s] lacks io_uring", name, op)
			}
		}
	}
	for _, c := range []struct {
		u       wire.IOUring
		ops     []Op
		failed  bool
		unknown bool
	}{
		{wire.IOUring{Op: "unlinkat", Res: 0}, []Op{OpDelete}, false, false},
		{wire.IOUring{Op: "connect", Res: -111}, []Op{OpConnect}, true, false},
		{wire.IOUring{Op: "connect", Res: -115}, []Op{OpConnect}, false, false}, // in progress: done, not failed
		{wire.IOUring{Op: "connect", Res: 0}, []Op{OpConnect}, false, false},
		{wire.IOUring{Op: "unlinkat", Res: 0, Name: &wire.Name{Requested: "/w/x"}}, nil, false, false},
		{wire.IOUring{Op: "renameat", Res: 0, Name: &wire.Name{Requested: "/w/a"}}, []Op{OpRename}, false, false},                                      // the new name was not kept
		{wire.IOUring{Op: "renameat", Res: 0, Name: &wire.Name{Requested: "/w/a"}, NewName: &wire.Name{Requested: "b"}}, []Op{OpRename}, false, false}, // relative
		{wire.IOUring{Op: "unlinkat", Res: -2, Name: &wire.Name{Requested: "x"}}, []Op{OpDelete}, true, false},
		{wire.IOUring{Op: "symlinkat", Res: -17, NewName: &wire.Name{Requested: "/w/s"}}, nil, false, false},
		{wire.IOUring{Op: "openat", Res: 0, Direct: true}, []Op{OpRead, OpWrite, OpCreate}, false, false},
		{wire.IOUring{Op: "openat", Res: 3, File: &wire.ResolvedPath{Path: "/x"}, Created: wire.BoolRef(false)}, nil, false, false},
		{wire.IOUring{Op: "openat", Res: 3, File: &wire.ResolvedPath{Path: "/x"}}, []Op{OpCreate}, false, false},
		{wire.IOUring{Op: "openat2", Res: -2}, []Op{OpRead, OpWrite, OpCreate}, true, false},
		{wire.IOUring{Op: "read", Res: 10}, nil, false, false},
		{wire.IOUring{Op: wire.IOUringOp(250), Res: 0}, nil, false, true},
	} {
		c.u.Opcode = opcodeOf(c.u.Op)
		what, ops, failed, unknown := Unrecorded(&wire.Kernel{Kind: wire.KindIOUring, IOUring: &c.u})
		if wantWhat := "io_uring " + c.u.Op; (len(c.ops) > 0 || c.unknown) && what != wantWhat || !(len(c.ops) > 0 || c.unknown) && what != "" {
			t.Errorf("%s: what %q", c.u.Op, what)
		}
		if !slices.Equal(ops, c.ops) || failed != c.failed || unknown != c.unknown {
			t.Errorf("%s (res %d): %v %v %v, want %v %v %v", c.u.Op, c.u.Res, ops, failed, unknown, c.ops, c.failed, c.unknown)
		}
	}
}

// A digest counts the events Unrecorded names as a held kernel layer
// does, so verify (which folds) and inspect (which holds) agree.
func TestDigestCountsUnrecorded(t *testing.T) {
	ring := func(op string, res int64) wire.Kernel {
		return wire.Kernel{Kind: wire.KindIOUring, IOUring: &wire.IOUring{Opcode: opcodeOf(op), Op: op, Res: res}}
	}
	k := []wire.Kernel{ring("unlinkat", 0), ring("read", 3), ring("connect", -111), ring("op_250", 0), {Kind: wire.KindOpen, Open: &wire.Open{}}}
	d := NewDigest()
	d.Add(k)
	held := (&Bundle{Kernel: k}).Unrecorded()
	if d.Unrecorded() != 3 || held != 3 {
		t.Fatalf("digest counts %d, held layer %d; want 3", d.Unrecorded(), held)
	}
}

// opcodeOf is the io_uring opcode named op (op_<n> for n).
func opcodeOf(op string) uint32 {
	if i := slices.Index(wire.IOUringOps, op); i >= 0 {
		return uint32(i)
	}
	var n uint32
	fmt.Sscanf(op, "op_%d", &n)
	return n
}

// An open by handle that names no file is an open the record cannot show
// (read, write or create, an attempt when it failed), not an action on
// the empty path.
func TestOpenByHandleWithoutFile(t *testing.T) {
	failed := wire.Kernel{Kind: wire.KindOpen, Open: &wire.Open{Syscall: "open_by_handle_at", Ret: -13, Access: wire.AccessRead,
		Name: wire.Name{Missing: true}}}
	if acts := Actions(&failed, nil); len(acts) != 0 {
		t.Errorf("actions %+v, want none", acts)
	}
	if s := BuildSurface([]wire.Kernel{failed}); len(s.OpenFailures) != 0 {
		t.Errorf("open_failures %q, want none", s.OpenFailures)
	}
	if s := Summarize(&Bundle{Kernel: []wire.Kernel{failed}}, 3); s.DistinctPaths != 0 {
		t.Errorf("top paths %+v, want none", s.TopPaths)
	}
	what, ops, isFailed, unknown := Unrecorded(&failed)
	if what != "open_by_handle_at" || !slices.Equal(ops, []Op{OpRead, OpWrite, OpCreate}) || !isFailed || unknown {
		t.Errorf("unrecorded %q %v %v %v", what, ops, isFailed, unknown)
	}
	opened := failed
	opened.Open = &wire.Open{Syscall: "open_by_handle_at", Ret: 3, Access: wire.AccessRead, File: &wire.ResolvedPath{Path: "/x"}, Created: wire.BoolRef(false)}
	if what, _, _, _ := Unrecorded(&opened); what != "" || len(Actions(&opened, nil)) != 1 {
		t.Errorf("an open by handle with its file: unrecorded %q, actions %+v", what, Actions(&opened, nil))
	}
}
