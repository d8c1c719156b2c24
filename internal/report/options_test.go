package report

import (
	"math"
	"strings"
	"testing"

	"vigil/internal/wire"
)

func TestOptionsRejectNonFinite(t *testing.T) {
	p, ss := genCfg{arms: fourArms, kinds: fourKinds, cells: []wire.Cell{cell("control", 0, 0, 1)}, blocks: 6, seed: 1}.build()
	nan, inf := math.NaN(), math.Inf(1)
	for name, mod := range map[string]func(*Options){
		"confidence":    func(o *Options) { o.Confidence = nan },
		"tolerance":     func(o *Options) { o.TolerancePct = nan },
		"tolerance inf": func(o *Options) { o.TolerancePct = inf },
		"wall floor":    func(o *Options) { o.WallFloorNS = nan },
		"mem floor":     func(o *Options) { o.MemFloorBytes = inf },
		"alpha":         func(o *Options) { o.Alpha = nan },
	} {
		o := DefaultOptions()
		mod(&o)
		_, err := WriteAll(t.TempDir(), p, ss, o)
		if err == nil || strings.Contains(err.Error(), "json") {
			t.Errorf("%s: error %v, want a one-line rejection of the option", name, err)
		}
	}
}
