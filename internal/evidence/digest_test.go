package evidence_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// scribble overwrites every string of k in place, as a recording reusing
// its decode buffers would after Digest.Add returned.
func scribble(k []wire.Kernel) {
	for i := range k {
		k[i] = wire.Kernel{Seq: k[i].Seq, Kind: "scribbled", Comm: wire.Bytes(strings.Repeat("x", 3))}
	}
}

// A digest fed the layer in blocks of any size, each overwritten once
// added, derives exactly what the one-shot functions derive from the
// whole layer.
func TestDigestInBlocksMatchesWholeLayer(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 30 {
		b := evidencetest.Bundle(8+r.IntN(3000), r.IntN(4))
		k := b.Kernel
		if round%3 == 0 {
			// A seq gap, and a repeat, in the middle.
			k = append(append([]wire.Kernel(nil), k[:len(k)/2]...), k[len(k)/2+1:]...)
			k = append(k[:len(k)/3+1], k[len(k)/3:]...)
		}
		d := evidence.NewDigest()
		limits := evidence.SpillLimits{Paths: 2 + r.IntN(20), Runs: 2 + r.IntN(8)}
		if round%2 == 1 {
			// Paths moved to a scratch store every few, the runs
			// merged every few.
			d.SpillTo(&evidence.MemScratch{}, limits)
		}
		for rest := k; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(700))
			block := append([]wire.Kernel(nil), rest[:n]...)
			d.Add(block)
			scribble(block)
			rest = rest[n:]
		}
		whole := evidence.DigestOf(k)
		checks := []struct {
			what      string
			got, want any
		}{
			{"events", d.Events(), uint64(len(k))},
			{"counts", d.Counts(), evidence.CountKinds(k)},
			{"seq gaps", d.SeqGaps(), whole.SeqGaps()},
			{"disorder", d.Disorder(), whole.Disorder()},
			{"session tasks", d.SessionTasks(), evidence.BalanceSessionTasks(k)},
			{"surface", d.Surface(), evidence.BuildSurface(k)},
			{"correlation", mustCorrelate(t, d, b.SDK), evidence.Correlate(k, b.SDK)},
			{"outside", d.OutsideOf(map[uint64]bool{}), uint64(len(k))},
		}
		for _, c := range checks {
			g, _ := json.Marshal(c.got)
			w, _ := json.Marshal(c.want)
			if string(g) != string(w) {
				t.Fatalf("round %d: %s in blocks is %s, whole %s", round, c.what, g, w)
			}
		}
		distinct := map[wire.Bytes]bool{}
		whole.SurfaceWithoutPaths()
		for l := range evidence.PathList(evidence.NumPathLists) {
			whole.EachSurfacePath(l, func(p wire.Bytes) error { distinct[wire.Bytes(strings.Clone(string(p)))] = true; return nil })
		}
		if st := d.Spilled(); round%2 == 1 && (len(distinct) > limits.Paths) != (st.PathRuns > 0) || st.Err != nil {
			t.Fatalf("round %d: spilled %+v, want runs and no error", round, st)
		}
		if round%3 == 0 && (whole.SeqGaps() != 1 || whole.Disorder() == "") {
			t.Fatalf("round %d: a gap and a repeat give seq_gaps %d and disorder %q", round, whole.SeqGaps(), whole.Disorder())
		}
	}
}

// A streamed bundle (kernel layer written as it arrived) checks like the
// bundle holding its events, and a wrong document in it is still caught.
func TestCheckStreamedBundle(t *testing.T) {
	b := evidencetest.Bundle(500, 3)
	s := mustAssembleStreamed(t, b, evidence.DigestOf(b.Kernel))
	if err := evidence.Check(s); err != nil {
		t.Fatalf("streamed bundle: %v", err)
	}
	if s.Events() != 500 || len(s.Kernel) != 0 {
		t.Fatalf("streamed bundle holds %d events, %d of its own", s.Events(), len(s.Kernel))
	}
	for l := range evidence.PathList(evidence.NumPathLists) {
		if s.Surface.Paths(l) != nil {
			t.Fatalf("streamed bundle's surface holds path list %d", l)
		}
	}
	if !reflect.DeepEqual(withPaths(t, s), b.Surface) || !reflect.DeepEqual(s.Health, b.Health) || !reflect.DeepEqual(s.Correlation, b.Correlation) {
		t.Fatal("streamed bundle's documents differ from the whole layer's")
	}
	for _, c := range []struct {
		name, entry string
		edit        func(*evidence.Bundle)
	}{
		{"surface paths", evidence.EntrySurface, func(x *evidence.Bundle) { x.Surface.FilesRead = append(x.Surface.FilesRead, "/forged") }},
		{"surface renames", evidence.EntrySurface, func(x *evidence.Bundle) {
			x.Surface.FilesRenamed = append(x.Surface.FilesRenamed, evidence.Rename{From: "/a", To: "/b"})
		}},
		{"counts", evidence.EntryHealth, func(x *evidence.Bundle) { x.Health.Counts[wire.KindOpen]++ }},
		{"events of its own", evidence.EntryKernel, func(x *evidence.Bundle) { x.Kernel = b.Kernel[:1] }},
		{"exit", evidence.EntryRun, func(x *evidence.Bundle) { x.Run.ExitCode = 7 }},
	} {
		x := mustAssembleStreamed(t, b, evidence.DigestOf(b.Kernel))
		c.edit(x)
		err := evidence.Check(x)
		var ee *evidence.EntryError
		if !errors.As(err, &ee) || ee.Entry != c.entry {
			t.Errorf("%s: Check gives %v, want an error in %s", c.name, err, c.entry)
		}
	}
}

// withPaths is the streamed bundle b's surface with the path lists its
// digest gives.
func withPaths(t *testing.T, b *evidence.Bundle) evidence.CapabilitySurface {
	t.Helper()
	s, err := b.WholeSurface()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A digest whose surface was taken refuses more events.
func TestDigestSealedBySurface(t *testing.T) {
	d := evidence.DigestOf(evidencetest.Kernel(10, 0))
	d.Surface()
	defer func() {
		if recover() == nil {
			t.Fatal("Add after Surface did not panic")
		}
	}()
	d.Add(evidencetest.Kernel(10, 0))
}

// Correlation's time index keeps seqs only once they stop being the
// events' indexes, filling in the earlier ones then: a layer that loses
// one seq past its first chunks still names every seq rightly, whether
// the chunks are held or in a scratch store.
func TestCorrelateAfterAGapFarIn(t *testing.T) {
	const n, gap = 40000, 30000
	k := make([]wire.Kernel, n)
	for i := range k {
		seq := uint64(i)
		if i >= gap {
			seq++
		}
		k[i] = wire.Kernel{Seq: seq, TimeNS: uint64(1000 + i), Kind: wire.KindOpen}
	}
	k[7].Kind = wire.KindExec
	sdk := []wire.SDK{
		{Type: wire.SDKToolCallStarted, ToolCallID: "a", MonoNS: 1000},
		{Type: wire.SDKToolCallCompleted, ToolCallID: "a", MonoNS: 1000 + gap + 10, Status: "ok"},
	}
	d := evidence.NewDigest()
	// The same with full chunks moved to a scratch store, to one that
	// refuses them after the first (the rest stay in memory).
	stored := evidence.NewDigest().SpillTo(&evidence.MemScratch{}, evidence.SpillLimits{})
	refused := evidence.NewDigest().SpillTo(&evidence.MemScratch{FailAfter: 200 << 10}, evidence.SpillLimits{})
	for i := 0; i < n; i += 1000 {
		for _, x := range []*evidence.Digest{d, stored, refused} {
			block := append([]wire.Kernel(nil), k[i:i+1000]...)
			x.Add(block)
			scribble(block)
		}
	}
	if st := stored.Spilled(); st.TimeChunks != 2 || st.Err != nil {
		t.Fatalf("stored: %+v, want 2 of 3 chunks out", st)
	}
	if st := refused.Spilled(); st.TimeChunks != 1 || st.Err == nil {
		t.Fatalf("refused: %+v, want 1 chunk out, then an error", st)
	}
	for _, r := range []*evidence.CorrelationReport{evidence.Correlate(k, sdk), mustCorrelate(t, d, sdk), mustCorrelate(t, stored, sdk), mustCorrelate(t, refused, sdk)} {
		got := r.ToolCalls[0].Kernel
		want := [][2]uint64{{0, gap - 1}, {gap + 1, gap + 11}}
		if !reflect.DeepEqual(got.SeqRanges, want) || got.Total != gap+11 || got.ByKind[wire.KindExec] != 1 {
			t.Fatalf("tool call holds %d events %v (%d execs), want %v", got.Total, got.SeqRanges, got.ByKind[wire.KindExec], want)
		}
		if u := r.Unattributed; u.Total != n-gap-11 || u.SeqRanges[0][0] != gap+12 || u.SeqRanges[0][1] != n {
			t.Fatalf("unattributed %d events %v", u.Total, u.SeqRanges)
		}
	}
}

func mustCorrelate(t *testing.T, d *evidence.Digest, sdk []wire.SDK) *evidence.CorrelationReport {
	t.Helper()
	r, err := d.Correlate(sdk)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mustAssembleStreamed is AssembleStreamed of b's documents with d.
func mustAssembleStreamed(t *testing.T, b *evidence.Bundle, d *evidence.Digest) *evidence.Bundle {
	t.Helper()
	s, err := evidence.AssembleStreamed(b.Run, d, b.SDK, evidence.InputOf(b.Health))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A scratch store that cannot give back the time index it took fails
// correlation, rather than correlating fewer events.
func TestCorrelateStoreReadError(t *testing.T) {
	st := &evidence.MemScratch{}
	d := evidence.NewDigest().SpillTo(st, evidence.SpillLimits{})
	d.Add(evidencetest.Kernel(40000, 0))
	st.ReadErr = errors.New("disk gone")
	if _, err := d.Correlate([]wire.SDK{{Type: wire.SDKToolCallStarted, ToolCallID: "a"}}); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("Correlate with an unreadable store = %v", err)
	}
}

// A bundle whose layer was folded into a digest that moved its paths to a
// scratch store (an archive verified folding) is checked as the bundle
// holding its events is: the same verdict and the same message for every
// surface edited, its paths compared as the store gives them back.
func TestCheckWithStoredPaths(t *testing.T) {
	b := evidencetest.Bundle(3000, 3)
	edits := []struct {
		name string
		edit func(s *evidence.CapabilitySurface)
	}{
		{"none", func(*evidence.CapabilitySurface) {}},
		{"a path added", func(s *evidence.CapabilitySurface) { s.FilesRead = append(s.FilesRead, "/zz/forged") }},
		{"a path dropped", func(s *evidence.CapabilitySurface) { s.FilesRead = s.FilesRead[1:] }},
		{"a path changed", func(s *evidence.CapabilitySurface) {
			s.FilesRead = append([]wire.Bytes{"/a/forged"}, s.FilesRead[1:]...)
		}},
		{"a list null", func(s *evidence.CapabilitySurface) { s.DirsCreated = nil }},
		{"a list emptied", func(s *evidence.CapabilitySurface) { s.Execs = []wire.Bytes{} }},
		{"a rename added", func(s *evidence.CapabilitySurface) {
			s.FilesRenamed = append(s.FilesRenamed, evidence.Rename{From: "/a", To: "/b"})
		}},
		{"the schema", func(s *evidence.CapabilitySurface) { s.Schema = "other" }},
	}
	for _, e := range edits {
		held := *b
		held.Surface = cloneSurface(b.Surface)
		e.edit(&held.Surface)
		want := evidence.Check(&held)

		d := evidence.NewDigest().SpillTo(&evidence.MemScratch{}, evidence.SpillLimits{Paths: 50})
		d.Add(append([]wire.Kernel(nil), b.Kernel...))
		folded := held
		folded.Kernel, folded.Streamed = nil, d
		got := evidence.Check(&folded)
		if d.Spilled().PathRuns == 0 {
			t.Fatalf("%s: no path went to the store", e.name)
		}
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("%s: with the paths stored %v; held %v", e.name, got, want)
		}
		if e.name != "none" && got == nil {
			t.Fatalf("%s: accepted", e.name)
		}
	}
}

func cloneSurface(s evidence.CapabilitySurface) evidence.CapabilitySurface {
	data, _ := json.Marshal(s)
	var c evidence.CapabilitySurface
	json.Unmarshal(data, &c)
	return c
}
