//go:build linux

package bench

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
)

func TestArmOrderSeeded(t *testing.T) {
	a := ArmOrder(OrderRandom, 42, "x1000", 3, 4)
	b := ArmOrder(OrderRandom, 42, "x1000", 3, 4)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different orders: %v %v", a, b)
	}
	perm := append([]int{}, a...)
	sort.Ints(perm)
	if !reflect.DeepEqual(perm, []int{0, 1, 2, 3}) {
		t.Fatalf("not a permutation: %v", a)
	}
	// Over 20 blocks, two seeds must not produce the same sequence, and
	// one seed must not repeat one order in every block.
	seq := func(seed int64) []string {
		var out []string
		for b := 0; b < 20; b++ {
			out = append(out, fmt.Sprint(ArmOrder(OrderRandom, seed, "x1000", b, 4)))
		}
		return out
	}
	s1, s2 := seq(1), seq(2)
	if reflect.DeepEqual(s1, s2) {
		t.Fatal("seeds 1 and 2 give the same orders")
	}
	distinct := map[string]bool{}
	for _, o := range s1 {
		distinct[o] = true
	}
	if len(distinct) < 5 {
		t.Fatalf("only %d distinct orders in 20 blocks: %v", len(distinct), s1)
	}
	// The cell is part of the draw: cells do not share one order sequence.
	if fmt.Sprint(ArmOrder(OrderRandom, 1, "control", 0, 4)) == fmt.Sprint(ArmOrder(OrderRandom, 1, "x1000", 0, 4)) &&
		fmt.Sprint(ArmOrder(OrderRandom, 1, "control", 1, 4)) == fmt.Sprint(ArmOrder(OrderRandom, 1, "x1000", 1, 4)) {
		t.Fatal("cells share their orders")
	}
}

func TestArmOrderCounterbalancedCoversRotations(t *testing.T) {
	k := 4
	first := map[int]int{}
	for b := 0; b < 2*k; b++ {
		o := ArmOrder(OrderCounterbalanced, 0, "c", b, k)
		for pos, arm := range o {
			if arm != (pos+b)%k {
				t.Fatalf("block %d order %v is not rotation %d", b, o, b%k)
			}
		}
		first[o[0]]++
	}
	for arm := 0; arm < k; arm++ {
		if first[arm] != 2 {
			t.Fatalf("arm %d first %d times in %d blocks, want 2: %v", arm, first[arm], 2*k, first)
		}
	}
	// Warm-up blocks (negative indexes) are rotations too.
	if o := ArmOrder(OrderCounterbalanced, 0, "c", -1, k); !reflect.DeepEqual(o, []int{3, 0, 1, 2}) {
		t.Fatalf("block -1: %v", o)
	}
}

func TestScheduleShape(t *testing.T) {
	p := testPlan(t, Options{Blocks: 3, Warmup: 2, Seed: 9})
	blocks := Schedule(p, Shard{1, 1})
	if len(blocks) != (3+2)*len(p.Cells) {
		t.Fatalf("%d blocks", len(blocks))
	}
	// Warm-ups first, then rounds of every cell.
	for i, b := range blocks[:2*len(p.Cells)] {
		if !b.Warmup() {
			t.Fatalf("block %d not a warm-up: %+v", i, b)
		}
	}
	for i, b := range blocks[2*len(p.Cells):] {
		if b.Warmup() || b.Index != i/len(p.Cells) || b.Cell != i%len(p.Cells) {
			t.Fatalf("measured block %d: %+v", i, b)
		}
		if !reflect.DeepEqual(b.Order, ArmOrder(p.Order, p.Seed, p.Cells[b.Cell].Name, b.Index, len(p.Arms))) {
			t.Fatalf("block order differs from ArmOrder")
		}
	}
}

func TestShardSlicing(t *testing.T) {
	p := testPlan(t, Options{Blocks: 11, Warmup: 1, Seed: 5})
	for _, n := range []int{1, 2, 3, 4, 11, 12} {
		owner := map[[2]int]int{}
		for i := 1; i <= n; i++ {
			s := Shard{i, n}
			warm := 0
			for _, b := range Schedule(p, s) {
				if b.Warmup() {
					warm++
					continue
				}
				k := [2]int{b.Cell, b.Index}
				if prev, dup := owner[k]; dup {
					t.Fatalf("n=%d: block %v in shards %d and %d", n, k, prev, i)
				}
				owner[k] = i
			}
			if warm != len(p.Cells) {
				t.Fatalf("shard %v has %d warm-up blocks, want %d", s, warm, len(p.Cells))
			}
		}
		if len(owner) != p.Blocks*len(p.Cells) {
			t.Fatalf("n=%d: shards cover %d blocks, want %d", n, len(owner), p.Blocks*len(p.Cells))
		}
		// Deterministic: the same shard gives the same blocks again.
		if !reflect.DeepEqual(Schedule(p, Shard{1, n}), Schedule(p, Shard{1, n})) {
			t.Fatal("schedule not deterministic")
		}
	}
	for _, bad := range []string{"0/1", "2/1", "a/b", "1", "1/0", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
	if s, err := ParseShard("2/3"); err != nil || s != (Shard{2, 3}) {
		t.Fatalf("2/3: %v %v", s, err)
	}
}
