package report

import (
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/wire"
)

// withInterference gives every sample an interference record: foreign
// CPUs from fn, contended when the sample was discarded as such.
func withInterference(ss []wire.Sample, fn func(s *wire.Sample) float64) {
	for i := range ss {
		s := &ss[i]
		if strings.HasPrefix(s.InvalidReason, "contended") {
			s.Contended = true
		}
		v := fn(s)
		s.Interference = &wire.Interference{ForeignCPUs: &v}
	}
}

// findingOf returns the first finding of a kind, or nil.
func findingOf(s *wire.Summary, kind wire.FindingKind) *wire.Finding {
	for i := range s.Findings {
		if s.Findings[i].Kind == kind {
			return &s.Findings[i]
		}
	}
	return nil
}

func TestInterferenceFinding(t *testing.T) {
	four := genCfg{arms: []string{"bare", "A", "B", "C"}, kinds: []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC},
		blocks: 10, seed: 3, cells: []wire.Cell{cell("control", 0, 0, 1), cell("x1000", 1000, 0, 16)}}

	t.Run("quiet host", func(t *testing.T) {
		p, ss := four.build()
		p.MaxForeignCPUs = 0.5
		withInterference(ss, func(*wire.Sample) float64 { return 0.04 })
		s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"quiet"}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		f := findingOf(s, wire.FindingInterference)
		if f == nil || f.Status != wire.StatusLow || len(f.Cells) != 0 {
			t.Fatalf("finding %+v; want interference low", f)
		}
		ci := s.Runs[0].Cells[1].Interference
		if ci.Measured != 40 || ci.Contended != 0 || ci.UsedMedianForeignCPUs != 0.04 || len(ci.Points) != 40 {
			t.Errorf("cell interference %+v", ci)
		}
		if md := string(render.Findings(s)); !strings.Contains(md, "interference stayed low in every cell") || strings.Contains(md, "Interference stayed high") {
			t.Errorf("a quiet run flagged or not called quiet:\n%s", md)
		}
	})

	t.Run("a hog beside one cell", func(t *testing.T) {
		g := four
		// Half the first attempts of x1000 ran beside a hog, were
		// contended and re-measured.
		g.invalid = func(c wire.Cell, arm string, block int) string {
			if c.Name == "x1000" && block%2 == 0 {
				return "contended: more than 0.50 CPUs busy outside the sample on average"
			}
			return ""
		}
		p, ss := g.build()
		p.MaxForeignCPUs = 0.5
		withInterference(ss, func(s *wire.Sample) float64 {
			if s.Contended {
				return 1.1
			}
			return 0.05
		})
		s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"hog"}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		ci := s.Runs[0].Cells[1].Interference
		if ci.Contended != 20 || ci.Measured != 60 || !ci.High {
			t.Errorf("x1000 interference %+v; want 20 of 60 contended, high", ci)
		}
		if s.Runs[0].Cells[0].Interference.High {
			t.Error("the quiet cell is flagged")
		}
		f := findingOf(s, wire.FindingInterference)
		if f == nil || f.Status != wire.StatusHigh || strings.Join(f.Cells, ",") != "x1000" {
			t.Fatalf("finding %+v", f)
		}
		md := string(render.Findings(s))
		for _, want := range []string{"interference stayed HIGH in x1000",
			"Interference stayed high in x1000 (see Host interference): the verdicts there may describe the host, not the arms.",
			"Interference stayed high in this cell (20 of 60 samples were contended (more than 25%))"} {
			if !strings.Contains(md, want) {
				t.Errorf("findings.md lacks %q", want)
			}
		}
		page, err := render.HTML(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Interference over time: 20 of 60 samples contended", `aria-label="Wall time and foreign CPU over time, cell x1000"`, "gate 0.50 CPUs"} {
			if !strings.Contains(string(page), want) {
				t.Errorf("report.html lacks %q", want)
			}
		}
		if a := s.Runs[0].Cells[1].Arms[0]; a.ByReason["contended: more than 0.50 CPUs busy outside the sample on average"] != 5 {
			t.Errorf("contended samples not counted under one reason: %v", a.ByReason)
		}
	})

	t.Run("gate off, busy host", func(t *testing.T) {
		p, ss := four.build()
		withInterference(ss, func(*wire.Sample) float64 { return 0.9 })
		s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"off"}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if f := findingOf(s, wire.FindingInterference); f == nil || f.Status != wire.StatusHigh {
			t.Errorf("finding %+v; want interference high", f)
		}
		if md := string(render.Findings(s)); !strings.Contains(md, "Host interference (gate off)") {
			t.Errorf("findings.md does not say the gate was off:\n%s", md)
		}
	})

	t.Run("samples without records", func(t *testing.T) {
		p, ss := four.build()
		s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"old"}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if findingOf(s, wire.FindingInterference) != nil || s.Runs[0].Cells[0].Interference != nil {
			t.Error("interference reported for samples that have no record")
		}
	})
}
