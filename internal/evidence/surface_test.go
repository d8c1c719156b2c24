package evidence_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

func open(seq uint64, path, access string, ret int64, create, trunc, app bool) wire.Kernel {
	o := &wire.Open{Syscall: "openat", Name: wire.Name{Requested: wire.Bytes(path)}, Access: access, Ret: ret, Create: create, Truncate: trunc, Append: app}
	if ret >= 0 {
		o.File = &wire.ResolvedPath{Path: "/cwd/" + wire.Bytes(strings.TrimPrefix(path, "/"))}
	} else {
		o.Name.Dir = &wire.ResolvedPath{Path: "/cwd"}
	}
	return wire.Kernel{Seq: seq, TimeNS: seq, Kind: wire.KindOpen, Open: o}
}

func fileOp(seq uint64, kind wire.Kind, name string, ret int64) wire.Kernel {
	return wire.Kernel{Seq: seq, Kind: kind, FileOp: &wire.FileOp{Name: &wire.Name{Requested: wire.Bytes(name), Dir: &wire.ResolvedPath{Path: "/cwd"}}, Ret: ret}}
}

func net(seq uint64, kind wire.Kind, family, addr string, port uint16, ret int64) wire.Kernel {
	return wire.Kernel{Seq: seq, Kind: kind, Net: &wire.Net{Family: family, Addr: wire.Bytes(addr), Port: port, Ret: ret}}
}

func TestBuildSurface(t *testing.T) {
	rename := fileOp(24, wire.KindRename, "old", 0)
	rename.FileOp.NewName = &wire.Name{Requested: "/abs/new"}
	link := fileOp(25, wire.KindSymlink, "", 0)
	link.FileOp.Name = nil
	link.FileOp.NewName = &wire.Name{Requested: "ln", Dir: &wire.ResolvedPath{Path: "/"}}
	k := []wire.Kernel{
		open(0, "/z/read", wire.AccessRead, 3, false, false, false),
		open(1, "/a/read-again", wire.AccessRead, 3, false, false, false),
		open(2, "/z/read", wire.AccessRead, 4, false, false, false),
		open(3, "rel/rw", wire.AccessReadWrite, 3, false, false, false),
		open(4, "/w/new", wire.AccessWrite, 3, true, true, false),
		open(5, "/w/log", wire.AccessWrite, 3, false, false, true),
		// O_RDONLY|O_TRUNC still changes the file: written, not read-only.
		open(6, "/w/trunc-ro", wire.AccessRead, 3, false, true, false),
		open(7, "denied", wire.AccessWrite, -13, true, false, false),
		{Seq: 8, Kind: wire.KindExec, Exec: &wire.Exec{File: wire.ResolvedPath{Path: "/usr/bin/b"}, Filename: "b"}},
		{Seq: 9, Kind: wire.KindExec, Exec: &wire.Exec{File: wire.ResolvedPath{Path: "/usr/bin/a"}, Filename: "a"}},
		{Seq: 10, Kind: wire.KindExec, Exec: &wire.Exec{File: wire.ResolvedPath{Path: "/usr/bin/b"}, Filename: "/usr/bin/b"}},
		net(11, wire.KindConnect, "inet6", "::1", 80, 0),
		net(12, wire.KindConnect, "inet", "10.0.0.1", 443, -115),
		net(13, wire.KindConnect, "inet", "10.0.0.1", 80, -111),
		net(14, wire.KindConnect, "inet", "10.0.0.1", 443, 0),
		net(15, wire.KindConnect, "unix", "/run/x.sock", 0, 0),
		{Seq: 16, Kind: wire.KindFork, Fork: &wire.Fork{}},
		{Seq: 17, Kind: wire.KindExit, Exit: &wire.Exit{}},
		{Seq: 18, Kind: wire.KindExecFailed, ExecFailed: &wire.ExecFailed{Ret: -2, Name: wire.Name{Requested: "/nope"}}},
		fileOp(19, wire.KindUnlink, "gone", 0),
		fileOp(30, wire.KindUnlink, "sub/../gone2", 0), // one file, one spelling
		fileOp(20, wire.KindUnlink, "refused", -13),
		fileOp(21, wire.KindMkdir, "d", 0),
		fileOp(22, wire.KindChmod, "gone", 0),
		fileOp(23, wire.KindTruncate, "t", 0),
		rename, link,
		net(26, wire.KindSend, "inet", "127.0.0.1", 53, 12),
		net(27, wire.KindSend, "inet", "127.0.0.2", 53, -1),
		net(28, wire.KindListen, "inet", "0.0.0.0", 8080, 0),
		{Seq: 29, Kind: wire.KindIOUring, IOUring: &wire.IOUring{Op: "openat", Res: 5, File: &wire.ResolvedPath{Path: "/u/ring"}, Access: wire.AccessRead}},
	}
	s := evidence.BuildSurface(k)
	want := evidence.CapabilitySurface{
		Schema:         evidence.SurfaceSchema,
		FilesRead:      []wire.Bytes{"/cwd/a/read-again", "/cwd/rel/rw", "/cwd/w/trunc-ro", "/cwd/z/read", "/u/ring"},
		FilesWritten:   []wire.Bytes{"/cwd/rel/rw", "/cwd/w/log", "/cwd/w/new", "/cwd/w/trunc-ro"},
		FilesCreated:   []wire.Bytes{"/cwd/w/new"},
		OpenFailures:   []wire.Bytes{"/cwd/denied"},
		FilesDeleted:   []wire.Bytes{"/cwd/gone", "/cwd/gone2"},
		DirsCreated:    []wire.Bytes{"/cwd/d"},
		FilesRenamed:   []evidence.Rename{{From: "/cwd/old", To: "/abs/new"}},
		LinksCreated:   []wire.Bytes{"/ln"},
		ModeChanged:    []wire.Bytes{"/cwd/gone"},
		FilesTruncated: []wire.Bytes{"/cwd/t"},
		Execs:          []wire.Bytes{"/usr/bin/a", "/usr/bin/b"},
		ExecFailures:   []wire.Bytes{"/nope"},
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
	rev := append([]wire.Kernel(nil), k...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if got := evidence.BuildSurface(rev); !reflect.DeepEqual(got, want) {
		t.Fatalf("surface depends on event order:\n%+v", got)
	}
	s.RunID = "r"
	data, _ := json.Marshal(s)
	if err := wire.Validate("capability-surface", data); err != nil {
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
	var k []wire.Kernel
	for i := 10; i >= 0; i-- {
		kind, payload := wire.KindOpen, wire.Kernel{Open: &wire.Open{Name: wire.Name{Requested: "p"}, Access: wire.AccessRead}}
		if i == 5 {
			kind, payload = wire.KindExec, wire.Kernel{Exec: &wire.Exec{File: wire.ResolvedPath{Path: "/bin/x"}}}
		}
		payload.Seq, payload.TimeNS, payload.Kind = uint64(i), uint64(100+10*i), kind
		k = append(k, payload)
	}
	sdk := func(seq uint64, typ, id string, mono uint64, status string) wire.SDK {
		return wire.SDK{Schema: wire.SDKSchema, RunID: "r", Seq: seq, Type: typ, ToolCallID: id, ToolName: "tool-" + id, MonoNS: mono, Status: wire.Status(status)}
	}
	s := []wire.SDK{
		sdk(0, wire.SDKToolCallStarted, "a", 110, ""), // [110, 130]: seqs 1..3, inclusive ends
		sdk(1, wire.SDKToolCallStarted, "b", 125, ""), // [125, 150]: seqs 3..5, overlaps a at seq 3
		sdk(2, wire.SDKToolCallCompleted, "a", 130, "ok"),
		sdk(3, wire.SDKToolCallCompleted, "b", 150, "error"),
		sdk(4, wire.SDKToolCallCompleted, "ghost", 160, "ok"), // no start: ignored
		sdk(5, wire.SDKToolCallStarted, "c", 185, ""),         // never completed: open to the end, seqs 9..10
	}
	r := evidence.Correlate(k, s)
	if len(r.ToolCalls) != 3 {
		t.Fatalf("tool calls = %+v, want a, b, c", r.ToolCalls)
	}
	check := func(i int, id string, completed bool, status string, ranges [][2]uint64, byKind map[wire.Kind]uint64) {
		t.Helper()
		tc := r.ToolCalls[i]
		if tc.ToolCallID != id || tc.Completed != completed || string(tc.Status) != status || tc.ToolName != "tool-"+id {
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
	check(0, "a", true, "ok", [][2]uint64{{1, 3}}, map[wire.Kind]uint64{wire.KindOpen: 3})
	check(1, "b", true, "error", [][2]uint64{{3, 5}}, map[wire.Kind]uint64{wire.KindOpen: 2, wire.KindExec: 1})
	check(2, "c", false, "", [][2]uint64{{9, 10}}, map[wire.Kind]uint64{wire.KindOpen: 2})
	if r.ToolCalls[1].CompletedSeq != 3 || r.ToolCalls[1].CompletedMonoNS != 150 || r.ToolCalls[2].CompletedSeq != 0 {
		t.Errorf("completion fields wrong: %+v", r.ToolCalls)
	}
	// seqs 0, 6, 7, 8 are in no window.
	if !reflect.DeepEqual(r.Unattributed.SeqRanges, [][2]uint64{{0, 0}, {6, 8}}) || r.Unattributed.Total != 4 {
		t.Errorf("unattributed = %+v", r.Unattributed)
	}
	r.RunID = "r"
	data, _ := json.Marshal(r)
	if err := wire.Validate("correlation-report", data); err != nil {
		t.Fatalf("schema: %v", err)
	}
}

// referenceSurface is BuildSurface written the plain way, a map and a sort
// per set, to hold the one-index version to.
func referenceSurface(kernel []wire.Kernel) evidence.CapabilitySurface {
	sets := map[string]map[wire.Bytes]bool{}
	add := func(set string, p wire.Bytes) {
		if sets[set] == nil {
			sets[set] = map[wire.Bytes]bool{}
		}
		sets[set][p] = true
	}
	for i := range kernel {
		e := &kernel[i]
		if o := e.Open; o != nil && (o.Ret < 0 || o.File == nil) {
			add("open_failures", wire.Bytes(path.Clean(string(o.Name.Path()))))
			continue
		}
		for _, a := range evidence.Actions(e, nil) {
			if a.Failed {
				if a.Op == evidence.OpExec {
					add("exec_failures", a.Path)
				}
				continue
			}
			switch a.Op {
			case evidence.OpRead:
				add("read", a.Path)
			case evidence.OpWrite:
				add("written", a.Path)
			case evidence.OpCreate:
				add("created", a.Path)
			case evidence.OpDelete:
				add("deleted", a.Path)
			case evidence.OpMkdir:
				add("dirs", a.Path)
			case evidence.OpLink:
				add("links", a.Path)
			case evidence.OpChmod, evidence.OpChown:
				add("modes", a.Path)
			case evidence.OpTruncate:
				add("truncated", a.Path)
			case evidence.OpExec:
				add("execs", a.Path)
			}
		}
	}
	sorted := func(set string) []wire.Bytes {
		out := []wire.Bytes{}
		for p := range sets[set] {
			out = append(out, p)
		}
		slices.Sort(out)
		return out
	}
	return evidence.CapabilitySurface{
		FilesRead: sorted("read"), FilesWritten: sorted("written"), FilesCreated: sorted("created"),
		OpenFailures: sorted("open_failures"), FilesDeleted: sorted("deleted"), DirsCreated: sorted("dirs"),
		LinksCreated: sorted("links"), ModeChanged: sorted("modes"), FilesTruncated: sorted("truncated"),
		Execs: sorted("execs"), ExecFailures: sorted("exec_failures"),
	}
}

// TestBuildSurfaceMatchesReference: on random mixes of opens and file
// operations over a small pool of paths (so that paths repeat, in a row
// and apart, and fall into several sets), every set of paths is what the
// plain per-set derivation gives.
func TestBuildSurfaceMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pool := []string{"a", "b", "/z", "dir/../a", "b/./c", "/abs/x", "é", "", "\xff", "a\x00b"}
	kinds := []wire.Kind{wire.KindUnlink, wire.KindRmdir, wire.KindMkdir, wire.KindChmod, wire.KindChown, wire.KindTruncate, wire.KindLink, wire.KindSymlink, wire.KindMknod}
	accesses := []string{wire.AccessRead, wire.AccessWrite, wire.AccessReadWrite, wire.AccessPath}
	// Every tenth round draws 6000 actions from 2500 more paths, so the
	// path index's table grows several times while paths repeat.
	wide := slices.Clone(pool)
	for i := range 2500 {
		wide = append(wide, fmt.Sprintf("/w/%d", r.IntN(1_000_000)+i*1_000_000))
	}
	for round := range 200 {
		var k []wire.Kernel
		pool, events := pool, 40
		if round%10 == 0 {
			pool, events = wide, 6000
		}
		for i := range events {
			p := pool[r.IntN(len(pool))]
			ret := int64(0)
			if r.IntN(5) == 0 {
				ret = -2
			}
			if r.IntN(2) == 0 {
				k = append(k, open(uint64(i), p, accesses[r.IntN(len(accesses))], ret, r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0))
				continue
			}
			e := fileOp(uint64(i), kinds[r.IntN(len(kinds))], p, ret)
			if e.Kind == wire.KindLink || e.Kind == wire.KindSymlink {
				e.FileOp.NewName = &wire.Name{Requested: wire.Bytes(pool[r.IntN(len(pool))]), Dir: &wire.ResolvedPath{Path: "/cwd"}}
			}
			k = append(k, e)
		}
		got, want := evidence.BuildSurface(k), referenceSurface(k)
		got.Schema, got.FilesRenamed, got.Network, got.NetworkSent, got.NetworkLocal = "", nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("round %d: BuildSurface gives\n%s\nthe reference gives\n%s", round, g, w)
		}
	}
}

// BenchmarkBuildSurface derives the surface of the two shapes a run's
// paths take: every file created once then changed twice (an archive
// extracted: as many paths as files), and a few thousand files read over
// and over in no order (a build re-reading its headers).
func BenchmarkBuildSurface(b *testing.B) {
	distinct := make([]wire.Kernel, 0, 300_000)
	for i := range 100_000 {
		p := fmt.Sprintf("out/d%04d/f%07d.dat", i/1000, i)
		distinct = append(distinct, open(uint64(len(distinct)), p, wire.AccessWrite, 3, true, false, false))
		distinct = append(distinct, fileOp(uint64(len(distinct)), wire.KindChown, p, 0))
		distinct = append(distinct, fileOp(uint64(len(distinct)), wire.KindChmod, p, 0))
	}
	r := rand.New(rand.NewPCG(1, 2))
	repeated := make([]wire.Kernel, 300_000)
	for i := range repeated {
		j := r.IntN(20_000)
		p := fmt.Sprintf("/usr/include/x86_64-linux-gnu/sys/d%03d/header%05d.h", j%200, j)
		repeated[i] = open(uint64(i), p, wire.AccessRead, 3, false, false, false)
	}
	for _, c := range []struct {
		name string
		k    []wire.Kernel
	}{{"distinct", distinct}, {"repeated", repeated}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evidence.BuildSurface(c.k)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.k)), "ns/event")
		})
	}
}

// An open that says whether it created its file is believed; one that
// does not (recorded before it was kept) counts O_CREAT, as then.
func TestFilesCreatedTakesTheKernelsWord(t *testing.T) {
	withCreated := func(e wire.Kernel, created bool) wire.Kernel {
		e.Open.Created = wire.BoolRef(created)
		return e
	}
	events := []wire.Kernel{
		withCreated(open(0, "new", wire.AccessWrite, 3, true, false, false), true),
		withCreated(open(1, "found", wire.AccessWrite, 3, true, false, false), false),
		withCreated(open(2, "read-only-creat", wire.AccessRead, 3, true, false, false), false),
		open(3, "older", wire.AccessWrite, 3, true, false, false),
	}
	s := evidence.BuildSurface(events)
	if want := []wire.Bytes{"/cwd/new", "/cwd/older"}; !slices.Equal(s.FilesCreated, want) {
		t.Errorf("files_created %q, want %q", s.FilesCreated, want)
	}
	// An O_RDONLY|O_CREAT open that found its file wrote nothing.
	if want := []wire.Bytes{"/cwd/found", "/cwd/new", "/cwd/older"}; !slices.Equal(s.FilesWritten, want) {
		t.Errorf("files_written %q, want %q", s.FilesWritten, want)
	}
}

// An io_uring open is a creation when the kernel says so; one recorded
// before it was kept (no created) never is, as then.
func TestIOUringOpenCreates(t *testing.T) {
	ring := func(seq uint64, path string, created *bool) wire.Kernel {
		return wire.Kernel{Seq: seq, Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
			IOUring: &wire.IOUring{Opcode: 18, Op: "openat", Res: 3, File: &wire.ResolvedPath{Path: wire.Bytes(path)},
				Access: wire.AccessWrite, Created: created}}
	}
	s := evidence.BuildSurface([]wire.Kernel{
		ring(0, "/w/new", wire.BoolRef(true)),
		ring(1, "/w/found", wire.BoolRef(false)),
		ring(2, "/w/older", nil),
	})
	if want := []wire.Bytes{"/w/new"}; !slices.Equal(s.FilesCreated, want) {
		t.Errorf("files_created %q, want %q", s.FilesCreated, want)
	}
	if want := []wire.Bytes{"/w/found", "/w/new", "/w/older"}; !slices.Equal(s.FilesWritten, want) {
		t.Errorf("files_written %q, want %q", s.FilesWritten, want)
	}
}

// A pipe reached through /dev/stdin or /proc/self/fd resolves to an
// empty detached path, and a null name pointer to an empty name: the
// surface lists them as they are, as it always has (archives recorded
// before derive the surface they hold).
func TestSurfaceKeepsEmptyPaths(t *testing.T) {
	pipe := open(0, "x", wire.AccessRead, 3, false, false, false)
	pipe.Open.File = &wire.ResolvedPath{Path: "", Detached: true}
	null := open(1, "", wire.AccessRead, -14, false, false, false)
	null.Open.Name = wire.Name{Missing: true}
	s := evidence.BuildSurface([]wire.Kernel{pipe, null})
	if !slices.Equal(s.FilesRead, []wire.Bytes{""}) || !slices.Equal(s.OpenFailures, []wire.Bytes{""}) {
		t.Errorf("files_read %q, open_failures %q; want each to list the empty path", s.FilesRead, s.OpenFailures)
	}
}
