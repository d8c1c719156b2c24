package report

import (
	"vigil/internal/wire"
)

// Build computes the summary for one or several bench output directories
// (plans[i] with samples[i]; sources[i] names the directory, for messages).
// Shards of one plan (same host_class and seed) are merged; other runs are
// summarized side by side.
func Build(plans []wire.Plan, samples [][]wire.Sample, sources []string, o Options) (*wire.Summary, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	runs, err := mergeRuns(plans, samples, sources)
	if err != nil {
		return nil, err
	}
	sum := &wire.Summary{Schema: wire.SummarySchema, Vigil: o.Version, Inputs: append([]string{}, sources...), Options: wire.ReportOptions{
		Confidence: o.Confidence, TolerancePct: o.TolerancePct, WallFloorNS: o.WallFloorNS, MemFloorBytes: o.MemFloorBytes,
		BootstrapReps: o.BootstrapReps, Alpha: o.Alpha}}
	if sum.Inputs == nil {
		sum.Inputs = []string{}
	}
	for _, r := range runs {
		sum.Runs = append(sum.Runs, buildRun(r, o))
	}
	sum.Findings = findings(sum)
	return sum, nil
}

func buildRun(r *run, o Options) *wire.RunSummary {
	p := r.plan
	out := &wire.RunSummary{HostClass: p.Host.HostClass, Host: p.Host, Seed: p.Seed, Shards: r.shards, Versions: p.Versions,
		Arms: p.Arms, ArmKinds: p.ArmKinds, Blocks: p.Blocks, Warmup: p.Warmup, Order: p.Order, Samples: len(r.samples),
		HostState: p.HostState, MaxForeignCPUs: p.MaxForeignCPUs, Sequential: p.Sequential}
	// A sequential run decides at its last look's spent alpha.
	od := o
	if sq := p.Sequential; sq != nil && len(sq.Looks) > 0 {
		od.Confidence = 1 - sq.Looks[len(sq.Looks)-1].Alpha
	}
	if out.Versions == nil {
		out.Versions = map[string]string{}
	}
	for _, cell := range p.Cells {
		cs := &wire.CellSummary{Cell: cell, Comparisons: []*wire.Comparison{}}
		var arms []*armData
		for i, arm := range p.Arms {
			a := buildArm(r, cell.Name, arm, p.ArmKinds[i], o.Confidence)
			if p.ArmExports != nil {
				a.Export = p.ExportOf(arm)
			}
			arms = append(arms, a)
			cs.Arms = append(cs.Arms, a.ArmSummary)
		}
		mm := memoryMetric(arms)
		cs.MemoryMetric = mm.name
		for i := range arms {
			for j := i + 1; j < len(arms); j++ {
				for _, m := range []metric{metricWall, metricCPU, mm} {
					cs.Comparisons = append(cs.Comparisons, compare(arms[i], arms[j], m, o, p.Seed, cell.Name))
				}
			}
		}
		if it := decompose(arms, metricWall, o.WallFloorNS, od); it != nil {
			cs.Decomposition = append(cs.Decomposition, it, decompose(arms, mm, o.MemFloorBytes, od))
		}
		cs.Kernel = kernelFidelity(r, cell)
		cs.Spans = spanFidelity(r, cell)
		cs.Interference = cellInterference(r, cell.Name, arms, p.MaxForeignCPUs)
		out.Cells = append(out.Cells, cs)
	}
	out.Noise = noiseFloor(out.Cells, o.Confidence)
	return out
}
