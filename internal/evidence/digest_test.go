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
			{"correlation", d.Correlate(b.SDK), evidence.Correlate(k, b.SDK)},
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
		for l := range evidence.PathList(11) {
			whole.EachSurfacePath(l, func(p wire.Bytes) error { distinct[wire.Bytes(strings.Clone(string(p)))] = true; return nil })
		}
		if st := d.Spilled(); round%2 == 1 && (len(distinct) > limits.Paths) != (st.Runs > 0) || st.Err != nil {
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
	s := evidence.AssembleStreamed(b.Run, evidence.DigestOf(b.Kernel), b.SDK, evidence.InputOf(b.Health))
	if err := evidence.Check(s); err != nil {
		t.Fatalf("streamed bundle: %v", err)
	}
	if s.Events() != 500 || len(s.Kernel) != 0 {
		t.Fatalf("streamed bundle holds %d events, %d of its own", s.Events(), len(s.Kernel))
	}
	for l := range evidence.PathList(11) {
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
		x := evidence.AssembleStreamed(b.Run, evidence.DigestOf(b.Kernel), b.SDK, evidence.InputOf(b.Health))
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
	s := b.Surface
	lists := []*[]wire.Bytes{&s.FilesRead, &s.FilesWritten, &s.FilesCreated, &s.OpenFailures, &s.FilesDeleted,
		&s.DirsCreated, &s.LinksCreated, &s.ModeChanged, &s.FilesTruncated, &s.Execs, &s.ExecFailures}
	for l, list := range lists {
		*list = []wire.Bytes{}
		err := b.Streamed.EachSurfacePath(evidence.PathList(l), func(p wire.Bytes) error {
			*list = append(*list, wire.Bytes(strings.Clone(string(p))))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
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
// one seq past its first chunks still names every seq rightly.
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
	for i := 0; i < n; i += 1000 {
		d.Add(k[i : i+1000])
	}
	for _, r := range []*evidence.CorrelationReport{evidence.Correlate(k, sdk), d.Correlate(sdk)} {
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
