package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/wire"
)

// Every output rendered again from summary.json alone is the file written
// from the samples, byte for byte: the summary holds everything the
// renderers use, and its numbers survive JSON.
func TestRerenderFromSummaryIsIdentical(t *testing.T) {
	interfered := referenceRun()
	interfered.blocks = 8
	aa := genCfg{arms: []string{"A", "A2", "bare", "B", "C"}, kinds: []wire.ArmKind{wire.ArmA, wire.ArmA, wire.ArmBare, wire.ArmB, wire.ArmC},
		blocks: 4, seed: 5, cells: []wire.Cell{cell("control", 0, 0, 1), cell("s500", 0, 500, 1)}}
	for name, g := range map[string]genCfg{"reference": referenceRun(), "interference": interfered, "aa-short": aa} {
		t.Run(name, func(t *testing.T) {
			p, ss := g.build()
			if name == "interference" {
				p.MaxForeignCPUs = 0.5
				withInterference(ss, func(s *wire.Sample) float64 { return float64(s.Block%3) * 0.3 })
			}
			from := t.TempDir()
			if _, err := WriteAll(from, p, ss, DefaultOptions()); err != nil {
				t.Fatal(err)
			}
			s, err := ReadSummary(filepath.Join(from, SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			again := t.TempDir()
			if err := WriteFromSummary(again, s); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{SummaryFile, BMFFile, BenchTxtFile, FindingsFile, HTMLFile} {
				a, errA := os.ReadFile(filepath.Join(from, f))
				b, errB := os.ReadFile(filepath.Join(again, f))
				if errA != nil || errB != nil {
					t.Fatalf("%s: %v, %v", f, errA, errB)
				}
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s differs when rendered from summary.json (%d vs %d bytes)", f, len(a), len(b))
				}
			}
		})
	}
}

func TestReadSummaryRejects(t *testing.T) {
	p, ss := referenceRun().build()
	dir := t.TempDir()
	if _, err := WriteAll(dir, p, ss, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	for name, data := range map[string]string{
		"old schema":    strings.Replace(string(good), wire.SummarySchema, "vigil.summary/v1", 1),
		"unknown field": strings.Replace(string(good), `"vigil_version"`, `"surprise": 1, "vigil_version"`, 1),
		"truncated":     string(good[:len(good)/2]),
	} {
		f := filepath.Join(t.TempDir(), SummaryFile)
		os.WriteFile(f, []byte(data), 0o644)
		_, err := ReadSummary(f)
		if err == nil || !strings.Contains(err.Error(), f) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming the file", name, err)
		}
	}
}

// The interval level is the one asked for, in the table and the page.
func TestConfidenceLabel(t *testing.T) {
	p, ss := referenceRun().build()
	o := DefaultOptions()
	o.Confidence = 0.8
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"x"}, o)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, s); err != nil {
		t.Fatal(err)
	}
	page, err := render.HTML(s)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"table": table.String(), "report.html": string(page)} {
		if !strings.Contains(text, "wall median [80% CI]") {
			t.Errorf("%s does not label the median interval 80%% CI", name)
		}
		if strings.Contains(text, "95%") {
			t.Errorf("%s still mentions 95%%", name)
		}
	}
	if !strings.Contains(string(page), "interaction [80% CI]") || !strings.Contains(string(page), "80% intervals") {
		t.Error("report.html does not label the decomposition and its header at 80%")
	}
}

// A summary.json that passes its schema but names, in a finding, a cell or
// arm its run does not have is refused with one line naming the file; it
// never reaches a renderer (which would dereference the missing cell).
func TestReadSummaryRejectsDanglingReferences(t *testing.T) {
	p, ss := referenceRun().build()
	dir := t.TempDir()
	if _, err := WriteAll(dir, p, ss, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	good, err := ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	mutations := 0
	for i := range good.Findings {
		for _, spoil := range []func(f *wire.Finding) bool{
			func(f *wire.Finding) bool { ok := f.Cell != ""; f.Cell = "nosuch"; return ok },
			func(f *wire.Finding) bool { ok := len(f.Cells) > 0; f.Cells = append(f.Cells, "nosuch"); return ok },
			func(f *wire.Finding) bool { ok := f.HealthyThrough != ""; f.HealthyThrough = "nosuch"; return ok },
			func(f *wire.Finding) bool {
				if len(f.Verdicts) == 0 {
					return false
				}
				f.Verdicts = append([]wire.CellVerdict{}, f.Verdicts...)
				f.Verdicts[0].Cell = "nosuch"
				return true
			},
			func(f *wire.Finding) bool {
				if len(f.Costs) == 0 {
					return false
				}
				f.Costs = append([]wire.Cost{}, f.Costs...)
				f.Costs[0].Other = "nosuch"
				return true
			},
		} {
			var s wire.Summary
			data, _ := json.Marshal(good)
			json.Unmarshal(data, &s)
			if !spoil(&s.Findings[i]) {
				continue
			}
			mutations++
			data, err := json.Marshal(&s)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(t.TempDir(), SummaryFile)
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadSummary(f)
			if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "nosuch") || strings.Contains(err.Error(), "\n") {
				t.Errorf("finding %d (%s) spoiled: error %v, want one line naming the file and the cell", i+1, s.Findings[i].Kind, err)
			}
		}
	}
	if mutations < 5 {
		t.Fatalf("only %d references spoiled: the reference run lacks the findings this test needs", mutations)
	}
}
