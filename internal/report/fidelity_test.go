package report

import (
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/wire"
)

func TestDroppedEnd(t *testing.T) {
	for _, c := range []struct {
		req, ret, first, last int
		want                  wire.DroppedEnd
	}{
		{500, 128, 372, 499, "oldest"},
		{500, 128, 0, 127, "newest"},
		{100, 100, 0, 99, "none"},
		{500, 128, 10, 137, "mixed"},
		{500, 0, -1, -1, "all"},
	} {
		cal := wire.Calibration{SpanRequested: c.req, SpanRetained: c.ret, SpanDropped: c.req - c.ret, RetainedFirstIndex: c.first, RetainedLastIndex: c.last}
		if got := droppedEnd(cal); got != c.want {
			t.Errorf("%+v: %s, want %s", c, got, c.want)
		}
	}
}

func TestKernelUnhealthyCell(t *testing.T) {
	p, ss := referenceRun().build()
	for i := range ss {
		if ss[i].Cell == "x1000" && ss[i].Block == 7 && ss[i].ArmKind == wire.ArmC {
			ss[i].Health.RingbufDrops = 12
			ss[i].Health.KernelLayer = "partial"
			ss[i].Calibration.KernelReadOpens = 991
			ss[i].Calibration.KernelMatch = boolp(false)
			ss[i].Valid = false
			ss[i].InvalidReason = "calibration mismatch"
		}
	}
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := findingOf(s, wire.FindingKernel)
	if f == nil {
		t.Fatal("no kernel finding")
	}
	if f.Status != wire.StatusHealthyThrough || f.HealthyThrough != "s500" || strings.Join(f.Unhealthy, ",") != "x1000" {
		t.Errorf("kernel finding %+v, want healthy through s500 (the cells by size: control, s500, x1000), not in x1000", f)
	}
	md := string(render.Findings(s))
	if !strings.Contains(md, "Kernel capture is healthy through s500 (0 worker files) but not in x1000.") {
		t.Errorf("findings.md does not name the unhealthy cell:\n%s", md)
	}
	joined := md
	if !strings.Contains(joined, "40/41 A/C samples matched calibration (write opens 1000 of 1000 expected, read opens 991–1000 of 1000); ringbuf_drops 12; kernel_layer complete 40/41") {
		t.Errorf("evidence does not carry the counts:\n%s", joined)
	}
	k := s.Runs[0].Cells[1].Kernel
	if k.Healthy || k.AllMatched {
		t.Errorf("x1000 kernel fidelity %+v", k)
	}
}

func TestSpanFidelityIgnoresSamplesWithoutSpanData(t *testing.T) {
	g := genCfg{arms: []string{"bare", "B"}, kinds: []wire.ArmKind{wire.ArmBare, wire.ArmB}, blocks: 6, seed: 11,
		cells: []wire.Cell{cell("s500", 0, 500, 1)},
		invalid: func(c wire.Cell, arm string, block int) string {
			if arm == string(wire.ArmB) && block == 2 {
				return "timed out after 10m0s; agent result: no result written"
			}
			return ""
		}}
	p, ss := g.build()
	found := false
	for i := range ss {
		s := &ss[i]
		if !s.Valid {
			// What the harness records without an agent result.
			s.Calibration = wire.Calibration{SpanRequested: 500, SpanLimit: -1, RetainedFirstIndex: -1, RetainedLastIndex: -1}
			s.Artifacts.TraceBytes = 0
			found = true
		}
	}
	if !found {
		t.Fatal("generator made no invalid sample")
	}
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := s.Runs[0].Cells[0].Spans
	if f == nil {
		t.Fatal("no span fidelity")
	}
	if f.DroppedEnd != "oldest" || f.RetainedMin != 128 || f.RetainedMax != 128 || f.DroppedMin != 372 || f.Limit != 128 {
		t.Errorf("span fidelity %+v, want oldest dropped, 128 retained, 372 dropped, limit 128", f)
	}
	if f.Samples != 6 {
		t.Errorf("%d samples with span data, want the 6 valid B samples", f.Samples)
	}
}
