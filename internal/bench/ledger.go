//go:build linux

package bench

import "vigil/internal/wire"

// slot names one arm of one block of one cell.
type slot struct {
	cell  string
	block int
	arm   string
}

// cellArm names the unit a re-measure budget belongs to.
type cellArm struct{ cell, arm string }

// ledger is the bookkeeping a run (or a resumed run) starts from: which
// slots already have a valid sample, how many tries each slot has had (for
// unique sample ids), and how much of each cell/arm re-measure budget is
// spent.
type ledger struct {
	valid  map[slot]bool
	tries  map[slot]int
	reruns map[cellArm]int
}

func newLedger(samples []wire.Sample) *ledger {
	l := &ledger{valid: map[slot]bool{}, tries: map[slot]int{}, reruns: map[cellArm]int{}}
	for _, s := range samples {
		l.record(s)
	}
	return l
}

func (l *ledger) record(s wire.Sample) {
	k := slot{s.Cell, s.Block, s.Arm}
	l.tries[k]++
	if s.Warmup {
		return
	}
	if s.Valid {
		l.valid[k] = true
	}
	if s.Attempt > 0 {
		l.reruns[cellArm{s.Cell, s.Arm}]++
	}
}

// pending lists the arms (as indexes into plan.Arms, in the block's order)
// a block still needs. Warm-up blocks always run in full: a run that starts
// (or resumes) on a cold machine warms it up again; but a resumed run skips
// a cell's warm-up when that cell has nothing left to measure.
func (l *ledger) pending(p wire.Plan, b Block, cellHasWork bool) []int {
	cell := p.Cells[b.Cell].Name
	if b.Warmup() {
		if !cellHasWork {
			return nil
		}
		return b.Order
	}
	var out []int
	for _, a := range b.Order {
		if !l.valid[slot{cell, b.Index, p.Arms[a]}] {
			out = append(out, a)
		}
	}
	return out
}

// shortfall lists, per cell and arm, how many of the shard's measured
// blocks lack a valid sample.
type shortfall struct {
	Cell, Arm   string
	Valid, Want int
}

func (l *ledger) shortfalls(p wire.Plan, s Shard) []shortfall {
	var out []shortfall
	for _, c := range p.Cells {
		for _, a := range p.Arms {
			want, got := 0, 0
			for b := 0; b < p.Blocks; b++ {
				if !s.Owns(b) {
					continue
				}
				want++
				if l.valid[slot{c.Name, b, a}] {
					got++
				}
			}
			if got < want {
				out = append(out, shortfall{c.Name, a, got, want})
			}
		}
	}
	return out
}
