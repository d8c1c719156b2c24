package report

import (
	"fmt"

	"vigil/internal/wire"
)

// Build computes the summary for one or several bench output directories
// (plans[i] with samples[i]; sources[i] names the directory, for messages).
// Shards of one plan (same host_class and seed) are merged; other runs are
// summarized side by side.
func Build(plans []wire.Plan, samples [][]wire.Sample, sources []string, o Options) (*Summary, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	runs, err := mergeRuns(plans, samples, sources)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Schema: SummarySchema, Vigil: o.Version, Inputs: append([]string{}, sources...), Options: o}
	if sum.Inputs == nil {
		sum.Inputs = []string{}
	}
	for _, r := range runs {
		sum.Runs = append(sum.Runs, buildRun(r, o))
	}
	sum.Findings = findings(sum)
	if sum.Findings == nil {
		sum.Findings = []Finding{}
	}
	return sum, nil
}

func buildRun(r *run, o Options) *Run {
	p := r.plan
	out := &Run{HostClass: p.Host.HostClass, Host: p.Host, Seed: p.Seed, Shards: r.shards, Versions: p.Versions,
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
		cs := &CellSummary{Cell: cell, Comparisons: []*Comparison{}}
		for i, arm := range p.Arms {
			a := buildArm(r, cell.Name, arm, p.ArmKinds[i], o.Confidence)
			if p.ArmExports != nil {
				a.Export = p.ExportOf(arm)
			}
			cs.Arms = append(cs.Arms, a)
		}
		mm := memoryMetric(cs.Arms)
		for i := range cs.Arms {
			for j := i + 1; j < len(cs.Arms); j++ {
				for _, m := range []metric{metricWall, metricCPU, mm} {
					cs.Comparisons = append(cs.Comparisons, compare(cs.Arms[i], cs.Arms[j], m, o, p.Seed, cell.Name))
				}
			}
		}
		if it := decompose(cs.Arms, metricWall, o.WallFloorNS, od); it != nil {
			cs.Decomposition = append(cs.Decomposition, it, decompose(cs.Arms, mm, o.MemFloorBytes, od))
		}
		cs.Kernel = kernelFidelity(r, cell)
		cs.Spans = spanFidelity(r, cell)
		cs.Interference = cellInterference(r, cell.Name, cs.Arms, p.MaxForeignCPUs)
		out.Cells = append(out.Cells, cs)
	}
	out.Noise = noiseFloor(out.Cells, o.Confidence)
	return out
}

// scope is the one-line scope every finding of a run carries.
func (r *Run) scope() string {
	v := ""
	for _, k := range sortedKeys(r.Versions) {
		v += fmt.Sprintf(", %s %s", k, r.Versions[k])
	}
	return fmt.Sprintf("host_class %s (kernel %s, %s, %d CPUs)%s; %d blocks planned, %d warm-up, order %s, seed %d",
		r.HostClass, r.Host.Kernel, r.Host.Arch, r.Host.CPUs, v, r.Blocks, r.Warmup, r.Order, r.Seed)
}
