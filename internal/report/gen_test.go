package report

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// genCfg describes a synthetic bench run. Wall and memory models get the
// cell, arm kind, block and a seeded generator; a shared per-block effect
// is added to every arm of a block so that pairing has something to remove.
type genCfg struct {
	arms      []string
	kinds     []wire.ArmKind
	cells     []wire.Cell
	blocks    int
	warmup    int
	seed      uint64
	spanLimit int
	hostClass string
	wall      func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64
	mem       func(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64
	// invalid, if set, may mark a first attempt invalid with a reason; the
	// generator then adds a valid re-measure (attempt 1).
	invalid func(c wire.Cell, arm string, block int) string
}

func boolp(b bool) *bool { return &b }

// defaultWall: bare 50 ms, Runner +12 ms, OTel +3 ms, additive, with
// 0.3 ms per-sample noise and a 3 ms per-block machine effect.
func defaultWall(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
	v := 50e6 + float64(c.KernelEvents)*2e3 + float64(c.SpanEvents)*1e3
	switch kind {
	case wire.ArmA:
		v += 12e6
	case wire.ArmB:
		v += 3e6
	case wire.ArmC:
		v += 15e6
	}
	return v + rng.NormFloat64()*0.3e6
}

// defaultMem: bare 20 MiB, Runner +8 MiB, OTel +4 MiB, additive, page noise.
func defaultMem(c wire.Cell, kind wire.ArmKind, block int, rng *rand.Rand) float64 {
	v := 20.0 * (1 << 20)
	switch kind {
	case wire.ArmA:
		v += 8 << 20
	case wire.ArmB:
		v += 4 << 20
	case wire.ArmC:
		v += 12 << 20
	}
	return v + float64(rng.IntN(64))*4096
}

func (g genCfg) build() (wire.Plan, []wire.Sample) {
	if g.hostClass == "" {
		g.hostClass = "linux-amd64-6.18.0"
	}
	if g.wall == nil {
		g.wall = defaultWall
	}
	if g.mem == nil {
		g.mem = defaultMem
	}
	if g.spanLimit == 0 {
		g.spanLimit = 128
	}
	hc := strings.SplitN(g.hostClass, "-", 3) // os-arch-kernel
	host := wire.BenchHost{Host: wire.Host{Hostname: "synth", OS: hc[0], Arch: hc[1], Kernel: hc[2], HostClass: g.hostClass}, CPUs: 2}
	vers := map[string]string{"vigil": "0.1.0-test", "go": "go1.26.0", "otel-sdk": "1.47.0"}
	p := wire.Plan{Schema: wire.PlanSchema, CreatedUnix: 1767225600, Arms: g.arms, ArmKinds: g.kinds, Cells: g.cells,
		Blocks: g.blocks, Warmup: g.warmup, Order: "random", Seed: int64(g.seed), MaxReruns: 2, Shard: "1/1", Host: host, Versions: vers}
	rng := rand.New(rand.NewPCG(g.seed, 7))
	var out []wire.Sample
	id := 0
	for _, c := range g.cells {
		for blk := -g.warmup; blk < g.blocks; blk++ {
			blockEffect := rng.NormFloat64() * 3e6
			order := rng.Perm(len(g.arms))
			for pos, ai := range order {
				arm, kind := g.arms[ai], g.kinds[ai]
				reason := ""
				if g.invalid != nil && blk >= 0 {
					reason = g.invalid(c, arm, blk)
				}
				attempts := 1
				if reason != "" {
					attempts = 2
				}
				for att := 0; att < attempts; att++ {
					id++
					s := wire.Sample{Schema: wire.SampleSchema, ID: fmt.Sprintf("%s-%s-b%d-a%d-%d", c.Name, arm, blk, att, id),
						Cell: c.Name, Arm: arm, ArmKind: kind, Block: blk, Position: pos, Attempt: att, Warmup: blk < 0, Seed: int64(g.seed),
						StartUnixNS: 1767225600e9 + int64(id)*1e9, Host: host, Versions: vers, Valid: true, TreePeakSource: "memory.peak"}
					w := g.wall(c, kind, blk, rng) + blockEffect
					s.WallNS = int64(w)
					s.UserNS = int64(w * 0.6)
					s.SysNS = int64(w * 0.2)
					m := g.mem(c, kind, blk, rng)
					s.TreePeakBytes = int64(m)
					s.MaxRSSBytes = int64(m * 0.9)
					if kind == wire.ArmA || kind == wire.ArmC {
						s.Health = &wire.SampleHealth{KernelLayer: "complete", CgroupCorrelation: "clean"}
						s.Artifacts.ArchiveBytes = int64(4096 + c.KernelEvents*60)
						s.Artifacts.ArchiveExtractedBytes = int64(16384 + c.KernelEvents*300)
						s.PhasesMS = map[string]float64{"attach": 2, "drain": 0.4}
						s.Calibration.KernelExpectedOpens = 2 * c.KernelEvents
						s.Calibration.KernelWriteOpens = c.KernelEvents
						s.Calibration.KernelReadOpens = c.KernelEvents
						s.Calibration.KernelMatch = boolp(true)
					}
					if kind == wire.ArmB || kind == wire.ArmC {
						s.Artifacts.TraceBytes = int64(2048 + min(c.SpanEvents, g.spanLimit)*200)
						req := c.SpanEvents
						ret := min(req, g.spanLimit)
						s.Calibration.SpanRequested = req
						s.Calibration.SpanRetained = ret
						s.Calibration.SpanDropped = req - ret
						s.Calibration.SpanLimit = g.spanLimit
						s.Calibration.RetainedFirstIndex, s.Calibration.RetainedLastIndex = -1, -1
						if ret > 0 {
							s.Calibration.RetainedFirstIndex, s.Calibration.RetainedLastIndex = req-ret, req-1
						}
						s.Calibration.SpanMatch = boolp(true)
					}
					if att == 0 && reason != "" {
						s.Valid = false
						s.InvalidReason = reason
						s.ExitCode = 1
					}
					out = append(out, s)
				}
			}
		}
	}
	return p, out
}

// writeDir writes plan.json and samples.jsonl into a new directory.
func writeDir(t *testing.T, p wire.Plan, ss []wire.Sample) string {
	t.Helper()
	dir := t.TempDir()
	pb, _ := json.Marshal(p)
	if err := os.WriteFile(filepath.Join(dir, PlanFile), pb, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, s := range ss {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	return dir
}

var (
	fourArms  = []string{"bare", "A", "B", "C"}
	fourKinds = []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC}
)

func cell(name string, files, spans, conc int) wire.Cell {
	return wire.Cell{Name: name, KernelEvents: files, SpanEvents: spans, Concurrency: conc, PayloadBytes: 128}
}
