//go:build linux

package bench

import (
	"context"
	"fmt"

	"vigil/internal/stats"
	"vigil/internal/wire"
)

// Decide reports whether every decomposition verdict that plan's samples
// support is decided, at the level of plan's last look.
type Decide func(plan wire.Plan, samples []wire.Sample) (bool, error)

// NewSequential checks and returns the design of a --until-decided run
// whose first look comes after first blocks.
func NewSequential(p wire.Plan, alpha float64, first, every, max int) (*wire.Sequential, error) {
	kinds := map[wire.ArmKind]bool{}
	for _, k := range p.ArmKinds {
		kinds[k] = true
	}
	for _, k := range []wire.ArmKind{wire.ArmBare, wire.ArmA, wire.ArmB, wire.ArmC} {
		if !kinds[k] {
			return nil, fmt.Errorf("--until-decided decides the decomposition, which needs the arms bare, A, B and C (arm %s is missing)", k)
		}
	}
	if p.Shard != "1/1" {
		return nil, fmt.Errorf("--until-decided cannot be sharded (--shard %s): every look needs all blocks", p.Shard)
	}
	if every < 1 {
		return nil, fmt.Errorf("--look-every %d: need at least one block between looks", every)
	}
	if max < first {
		return nil, fmt.Errorf("--max-blocks %d: below the first look's %d blocks (-n)", max, first)
	}
	if _, err := stats.LookAlphas(alpha, []int{first}, max); err != nil {
		return nil, fmt.Errorf("--until-decided: %v", err)
	}
	return &wire.Sequential{Design: wire.SequentialDesign, Alpha: alpha, MaxBlocks: max, LookEvery: every, Looks: []wire.Look{}}, nil
}

// RunSequential runs cfg.Plan (which has Sequential set) a look at a time:
// after the plan's blocks it looks at the samples with decide at the
// alpha spent so far, and either stops (every verdict decided, or
// MaxBlocks reached) or adds LookEvery blocks and continues. plan.json
// holds the looks taken, so an interrupted run resumes where it was. The
// report is written once, after the last look.
func RunSequential(ctx context.Context, cfg Config, decide Decide) (Outcome, error) {
	p := cfg.Plan
	sq := p.Sequential
	report := cfg.Report
	cfg.Report = nil
	var out Outcome
	taken, discarded := 0, 0
	for {
		cfg.Plan = p
		o, err := Run(ctx, cfg)
		taken += o.Taken
		discarded += o.Discarded
		o.Taken, o.Discarded = taken, discarded
		out = o
		if err != nil {
			return out, err
		}
		if n := len(sq.Looks); n == 0 || sq.Looks[n-1].Blocks < p.Blocks {
			blocks := []int{}
			for _, l := range sq.Looks {
				blocks = append(blocks, l.Blocks)
			}
			alphas, err := stats.LookAlphas(sq.Alpha, append(blocks, p.Blocks), sq.MaxBlocks)
			if err != nil {
				return out, err
			}
			sq.Looks = append(sq.Looks, wire.Look{Blocks: p.Blocks, Alpha: alphas[len(alphas)-1]})
			decided, err := decide(p, out.Samples)
			if err != nil {
				return out, err
			}
			sq.Looks[len(sq.Looks)-1].Decided = decided
		}
		last := sq.Looks[len(sq.Looks)-1]
		state := "undecided"
		if last.Decided {
			state = "every verdict decided"
		}
		fmt.Fprintf(cfg.Log, "vigil bench: look %d at %d blocks (level %.4g of overall %g): %s\n", len(sq.Looks), last.Blocks, last.Alpha, sq.Alpha, state)
		done := last.Decided || p.Blocks >= sq.MaxBlocks
		if !done {
			p.Blocks = min(p.Blocks+sq.LookEvery, sq.MaxBlocks)
		}
		if err := WritePlan(cfg.OutDir, p); err != nil {
			return out, err
		}
		if done {
			if !last.Decided {
				fmt.Fprintf(cfg.Log, "vigil bench: the block budget (%d) is spent with verdicts undecided\n", sq.MaxBlocks)
			}
			break
		}
		cfg.Resume = true
	}
	if report != nil {
		out.ReportErr = report(cfg.OutDir, p, out.Samples)
	}
	return out, nil
}
