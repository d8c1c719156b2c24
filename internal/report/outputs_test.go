package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"vigil/internal/report/render"
	"vigil/internal/wire"
)

func writeReference(t *testing.T) (string, *wire.Summary, []wire.Sample) {
	t.Helper()
	p, ss := referenceRun().build()
	out := t.TempDir()
	s, err := WriteAll(out, p, ss, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return out, s, ss
}

func TestSummaryMatchesSchema(t *testing.T) {
	out, _, _ := writeReference(t)
	data, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("summary", data); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	// The schema is not vacuous: a broken verdict is rejected.
	bad := bytes.Replace(data, []byte(`"verdict": "additive"`), []byte(`"verdict": "maybe"`), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("no additive verdict to corrupt")
	}
	if err := wire.Validate("summary", bad); err == nil {
		t.Fatal("schema accepted an unknown verdict")
	}
}

func TestBMFShape(t *testing.T) {
	out, _, _ := writeReference(t)
	data, err := os.ReadFile(filepath.Join(out, BMFFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]float64
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("bmf.json is not benchmark -> measure -> {numbers}: %v", err)
	}
	if len(doc) != 12 {
		t.Errorf("%d benchmarks, want 12 (3 cells × 4 arms)", len(doc))
	}
	for name, measures := range doc {
		for _, m := range []string{"latency", "file-size", "peak-rss"} {
			v, ok := measures[m]
			if !ok {
				t.Errorf("%s: no %s", name, m)
				continue
			}
			for _, k := range []string{"value", "lower_value", "upper_value"} {
				if _, ok := v[k]; !ok {
					t.Errorf("%s/%s: no %s", name, m, k)
				}
			}
			if !(v["lower_value"] <= v["value"] && v["value"] <= v["upper_value"]) {
				t.Errorf("%s/%s: not lower <= value <= upper: %v", name, m, v)
			}
		}
	}
	if l := doc["control/B"]["latency"]["value"]; l < 850e6 || l > 910e6 {
		t.Errorf("control/B latency %v ns, want about 880 ms", l)
	}
}

func TestBenchTxtParses(t *testing.T) {
	out, _, ss := writeReference(t)
	f, err := os.Open(filepath.Join(out, BenchTxtFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, BenchTxtFile)
	valid := 0
	for _, s := range ss {
		if s.Valid && !s.Warmup {
			valid++
		}
	}
	n := 0
	byName := map[string]int{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("bench.txt: %v", rec)
		case *benchfmt.Result:
			n++
			byName[string(rec.Name)]++
			if v, ok := rec.Value("sec/op"); !ok || v <= 0 {
				t.Errorf("%s: no positive sec/op", rec.Name)
			}
			if _, ok := rec.Value("peak-rss-B"); !ok {
				t.Errorf("%s: no peak-rss-B", rec.Name)
			}
			if got := string(rec.GetConfig("host_class")); got != "linux-arm64-6.8.0-117-generic" {
				t.Errorf("host_class config %q", got)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != valid {
		t.Errorf("%d results, want one per valid non-warm-up sample (%d)", n, valid)
	}
	if byName["Vigil/cell=x1000/arm=C"] != 20 {
		t.Errorf("x1000/C has %d lines, want 20 (the discarded attempt excluded)", byName["Vigil/cell=x1000/arm=C"])
	}
}

func TestLoadErrors(t *testing.T) {
	p, ss := referenceRun().build()
	good := writeDir(t, p, ss)
	missing := filepath.Join(t.TempDir(), "nope")
	if _, _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing dir: %v", err)
	}
	empty := writeDir(t, p, nil)
	if _, _, err := Load(empty); err == nil || !strings.Contains(err.Error(), "samples.jsonl: no samples") {
		t.Errorf("no samples: %v", err)
	}
	broken := writeDir(t, p, ss[:5])
	sf := filepath.Join(broken, SamplesFile)
	data, _ := os.ReadFile(sf)
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = `{"schema":"vigil.sample/v1","id":` + "\n"
	os.WriteFile(sf, []byte(strings.Join(lines, "")), 0o644)
	if _, _, err := Load(good, broken); err == nil || !strings.Contains(err.Error(), sf+":3: malformed sample") || strings.Contains(err.Error(), "\n") {
		t.Errorf("malformed line 3: %v", err)
	}
	dup := writeDir(t, p, append(append([]wire.Sample{}, ss[:3]...), ss[1]))
	if _, _, err := Load(dup); err == nil || !strings.Contains(err.Error(), ":4: duplicate sample id") {
		t.Errorf("duplicate id: %v", err)
	}
	alien := append([]wire.Sample{}, ss[:2]...)
	alien[1].Cell = "k999"
	if _, _, err := Load(writeDir(t, p, alien)); err == nil || !strings.Contains(err.Error(), `:2: cell "k999" is not in the plan`) {
		t.Errorf("unknown cell: %v", err)
	}
}

func TestMergeShards(t *testing.T) {
	p, ss := referenceRun().build()
	// Shard by block parity: the union must give the same statistics as
	// the unsplit run.
	var even, odd []wire.Sample
	p1, p2s := p, p
	p1.Shard, p2s.Shard = "1/2", "2/2"
	for _, s := range ss {
		if s.Block%2 == 0 {
			even = append(even, s)
		} else {
			odd = append(odd, s)
		}
	}
	whole, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"all"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// One shard alone is complete for the blocks it owns.
	alone, err := Build([]wire.Plan{p1}, [][]wire.Sample{even}, []string{"s1"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if a := alone.Runs[0].Cells[0].Arms[0]; a.Planned != 10 || a.Incomplete {
		t.Errorf("shard 1/2 alone: planned %d, incomplete %v; want 10, false", a.Planned, a.Incomplete)
	}
	merged, err := Build([]wire.Plan{p1, p2s}, [][]wire.Sample{even, odd}, []string{"s1", "s2"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if a := merged.Runs[0].Cells[0].Arms[0]; a.Planned != 20 || a.Incomplete {
		t.Errorf("merged shards: planned %d, incomplete %v; want 20, false", a.Planned, a.Incomplete)
	}
	if len(merged.Runs) != 1 || len(merged.Runs[0].Shards) != 2 {
		t.Fatalf("shards not merged into one run: %d runs", len(merged.Runs))
	}
	a, b := whole.Runs[0].Cells[1].Decomposition[0], merged.Runs[0].Cells[1].Decomposition[0]
	if a.Estimate.Value != b.Estimate.Value || a.Verdict != b.Verdict {
		t.Errorf("merged shards differ from the whole run: %v/%s vs %v/%s", a.Estimate.Value, a.Verdict, b.Estimate.Value, b.Verdict)
	}
	// The same sample in two shards is refused.
	if _, err := Build([]wire.Plan{p, p}, [][]wire.Sample{even, append(odd, even[0])}, []string{"s1", "s2"}, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "duplicate sample id") {
		t.Errorf("duplicate across shards: %v", err)
	}
	// Another host class is a separate run, never subtracted.
	g := referenceRun()
	g.hostClass = "linux-amd64-6.18.0"
	p2, ss2 := g.build()
	two, err := Build([]wire.Plan{p, p2}, [][]wire.Sample{ss, ss2}, []string{"arm", "amd"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Runs) != 2 || two.Runs[0].HostClass == two.Runs[1].HostClass {
		t.Fatalf("host classes not kept apart")
	}
	for _, r := range two.Runs {
		for _, cs := range r.Cells {
			for _, c := range cs.Comparisons {
				if c.Pairs > r.Blocks {
					t.Errorf("%s: %d pairs exceed the run's %d blocks: samples crossed runs", r.HostClass, c.Pairs, r.Blocks)
				}
			}
		}
	}
	out := t.TempDir()
	if _, err := WriteMerged(out, []wire.Plan{p, p2}, [][]wire.Sample{ss, ss2}, []string{"arm", "amd"}, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, FindingsFile))
	if !strings.Contains(string(md), "never subtracted") || !strings.Contains(string(md), "## linux-amd64-6.18.0") {
		t.Error("findings.md does not keep host classes side by side")
	}
}

func TestNoiseFloorAA(t *testing.T) {
	g := genCfg{arms: []string{"A", "A2"}, kinds: []wire.ArmKind{wire.ArmA, wire.ArmA}, blocks: 20, seed: 5,
		cells: []wire.Cell{cell("control", 0, 0, 1), cell("x1000", 1000, 0, 16)}}
	p, ss := g.build()
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"aa"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	nf := s.Runs[0].Noise
	if nf == nil {
		t.Fatal("no noise floor for an A/A plan")
	}
	if nf.Comparisons != 6 { // 2 cells × (wall, cpu, memory)
		t.Errorf("%d A/A comparisons, want 6", nf.Comparisons)
	}
	if nf.FalseRate > 0.5 {
		t.Errorf("false-difference rate %v for identical arms", nf.FalseRate)
	}
	// The model's per-sample wall noise is 0.3 ms on ~52 ms: the A/A
	// interval half-width must be of that order, well under 2%.
	if nf.MedianRelHalfWidth <= 0 || nf.MedianRelHalfWidth > 0.02 {
		t.Errorf("median relative half-width %v", nf.MedianRelHalfWidth)
	}
	if len(s.Runs[0].Cells[0].Decomposition) != 0 {
		t.Error("an A/A plan has no four arms to decompose")
	}
	if findingOf(s, wire.FindingNoiseFloor) == nil {
		t.Error("no noise-floor finding")
	}
}

func TestIncompleteArm(t *testing.T) {
	g := referenceRun()
	g.invalid = func(c wire.Cell, arm string, block int) string {
		if c.Name == "control" && arm == string(wire.ArmA) {
			return "capture incomplete: ringbuf drops"
		}
		return ""
	}
	p, ss := g.build()
	// Drop the re-measures so that control/A never becomes valid.
	var kept []wire.Sample
	for _, s := range ss {
		if !(s.Cell == "control" && s.Arm == string(wire.ArmA) && s.Attempt > 0) {
			kept = append(kept, s)
		}
	}
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{kept}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	a := armNamed(s.Runs[0].Cells[0].Arms, string(wire.ArmA))
	if !a.Incomplete || a.Valid != 0 || a.ByReason["capture incomplete: ringbuf drops"] != 20 || a.Wall != nil {
		t.Errorf("control/A: %+v", a)
	}
	if d := s.Runs[0].Cells[0].Decomposition[0]; d.Verdict != wire.Inconclusive || d.Blocks != 0 {
		t.Errorf("decomposition without A: %s over %d blocks", d.Verdict, d.Blocks)
	}
	if _, err := render.SummaryJSON(s); err != nil {
		t.Errorf("summary with an empty arm: %v", err)
	}
}

func TestNoPartialOutputs(t *testing.T) {
	out := t.TempDir()
	p, ss := referenceRun().build()
	bad := DefaultOptions()
	bad.Confidence = 1.5
	if _, err := WriteAll(out, p, ss, bad); err == nil {
		t.Fatal("bad options accepted")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("files left after a failure: %v", ents)
	}
	if _, err := WriteAll(out, p, ss, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "bench.txt,bmf.json,findings.md,report.html,summary.json" {
		t.Errorf("outputs %v", names)
	}
}
