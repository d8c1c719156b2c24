package report

import (
	"strings"
	"testing"

	"vigil/internal/report/render"
	"vigil/internal/wire"
)

func TestUndefinedRatioIsNotZero(t *testing.T) {
	g := genCfg{arms: fourArms, kinds: fourKinds, cells: []wire.Cell{cell("control", 0, 0, 1)}, blocks: 6, seed: 2}
	p, ss := g.build()
	for i := range ss {
		if ss[i].ArmKind == wire.ArmBare {
			ss[i].TreePeakBytes = 0 // e.g. a peak the cgroup did not see
		}
	}
	s, err := Build([]wire.Plan{p}, [][]wire.Sample{ss}, []string{"x"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	md := string(render.Findings(s))
	if strings.Contains(md, "0.000×") {
		t.Errorf("findings print an undefined ratio as 0.000×:\n%s", md)
	}
	if !strings.Contains(md, "ratio of medians undefined") {
		t.Errorf("findings do not say the ratio is undefined")
	}
}
