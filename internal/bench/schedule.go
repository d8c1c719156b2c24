//go:build linux

package bench

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// Orders.
const (
	OrderRandom          = "random"
	OrderCounterbalanced = "counterbalanced"
)

// Block is one run of every arm of one cell.
type Block struct {
	Cell  int   // index into Plan.Cells
	Index int   // 0..Blocks-1 measured; -Warmup..-1 warm-up
	Order []int // indexes into Plan.Arms, in the order they run
}

// Warmup reports whether the block is a discarded warm-up block.
func (b Block) Warmup() bool { return b.Index < 0 }

// Shard is the slice "i/n" (1 <= i <= n) of a plan one host runs.
type Shard struct{ I, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard parses "i/n"; "" means 1/1.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{1, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n", s)
	}
	return Shard{i, n}, nil
}

// Owns reports whether measured block index b belongs to the shard. Blocks
// are dealt round-robin, so every shard gets every cell and shards differ in
// size by at most one block per cell.
func (s Shard) Owns(b int) bool { return b%s.N == s.I-1 }

// ArmOrder is the order of a block's arms: a permutation drawn from a
// generator seeded by (seed, cell, block), so it does not depend on which
// shard runs the block or on what ran before; or, counterbalanced, the
// arm list rotated by the block index (k consecutive blocks cover all k
// rotations, so every arm takes every position equally often).
func ArmOrder(order string, seed int64, cell string, block, arms int) []int {
	out := make([]int, arms)
	if order == OrderCounterbalanced {
		rot := ((block % arms) + arms) % arms
		for i := range out {
			out[i] = (i + rot) % arms
		}
		return out
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", cell, block)
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	copy(out, r.Perm(arms))
	return out
}

// Schedule lists the blocks a shard runs, in time order: every cell's
// warm-up blocks first (each shard warms up its own host), then measured
// rounds, each round running block b of every cell, so slow drift of the
// machine spreads over all cells instead of landing on one.
func Schedule(p wire.Plan, s Shard) []Block {
	var out []Block
	for w := -p.Warmup; w < 0; w++ {
		for ci, c := range p.Cells {
			out = append(out, Block{Cell: ci, Index: w, Order: ArmOrder(p.Order, p.Seed, c.Name, w, len(p.Arms))})
		}
	}
	for b := 0; b < p.Blocks; b++ {
		if !s.Owns(b) {
			continue
		}
		for ci, c := range p.Cells {
			out = append(out, Block{Cell: ci, Index: b, Order: ArmOrder(p.Order, p.Seed, c.Name, b, len(p.Arms))})
		}
	}
	return out
}
