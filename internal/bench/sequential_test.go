//go:build linux

package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vigil/internal/stats"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// A sequential run adds blocks a look at a time, records each look with
// its spent alpha in plan.json, stops at the first decided look (or at
// the block budget) and reports once.
func TestRunSequential(t *testing.T) {
	testenv.RequireRoot(t)
	for _, c := range []struct {
		name      string
		decideAt  int // blocks at which decide first says yes; 0: never
		wantLooks []int
	}{
		{"decided at the second look", 6, []int{3, 6}},
		{"budget spent undecided", 0, []int{3, 6, 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testPlan(t, Options{Arms: []string{"bare"}, Cells: []string{"control"}, Blocks: 3, Command: []string{"true"}})
			p.Sequential = &wire.Sequential{Design: wire.SequentialDesign, Alpha: 0.05, MaxBlocks: 8, LookEvery: 3, Looks: []wire.Look{}}
			dir := filepath.Join(t.TempDir(), "out")
			if err := PrepareOut(dir, p); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			seen := []int{}
			decide := func(p wire.Plan, ss []wire.Sample) (bool, error) {
				blocks := map[int]bool{}
				for _, s := range ss {
					if s.Valid && !s.Warmup {
						blocks[s.Block] = true
					}
				}
				if len(blocks) != p.Blocks {
					t.Errorf("decide saw %d blocks with valid samples, plan has %d", len(blocks), p.Blocks)
				}
				seen = append(seen, p.Blocks)
				return c.decideAt > 0 && p.Blocks >= c.decideAt, nil
			}
			reports := 0
			cfg := Config{Plan: p, OutDir: dir, Log: &log, Report: func(string, wire.Plan, []wire.Sample) error { reports++; return nil }}
			out, err := RunSequential(context.Background(), cfg, decide)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			saved, err := LoadPlan(dir)
			if err != nil {
				t.Fatal(err)
			}
			var looks []int
			for _, l := range saved.Sequential.Looks {
				looks = append(looks, l.Blocks)
			}
			if !slices.Equal(looks, c.wantLooks) || !slices.Equal(seen, c.wantLooks) || saved.Blocks != c.wantLooks[len(c.wantLooks)-1] {
				t.Fatalf("looks %v (decide saw %v), plan blocks %d; want %v", looks, seen, saved.Blocks, c.wantLooks)
			}
			alphas, _ := stats.LookAlphas(0.05, c.wantLooks, 8)
			for i, l := range saved.Sequential.Looks {
				if l.Alpha != alphas[i] || l.Decided != (c.decideAt > 0 && l.Blocks >= c.decideAt) {
					t.Errorf("look %d: %+v; want alpha %v", i+1, l, alphas[i])
				}
			}
			if reports != 1 || out.Taken != saved.Blocks || len(out.Samples) != saved.Blocks {
				t.Errorf("%d reports, %d taken, %d samples; want 1 report and one sample per block (%d)", reports, out.Taken, len(out.Samples), saved.Blocks)
			}
			if c.decideAt == 0 && !strings.Contains(log.String(), "budget (8) is spent") {
				t.Errorf("no word on the spent budget:\n%s", log.String())
			}
		})
	}
}

func TestNewSequentialRefuses(t *testing.T) {
	four := testPlan(t, Options{})
	if _, err := NewSequential(four, 0.05, 6, 6, 60); err != nil {
		t.Fatalf("a valid design refused: %v", err)
	}
	bare := testPlan(t, Options{Arms: []string{"bare", "B"}})
	sharded := four
	sharded.Shard = "1/2"
	for name, c := range map[string]struct {
		p                 wire.Plan
		first, every, max int
		want              string
	}{
		"no four arms":   {bare, 6, 6, 60, "arm A is missing"},
		"sharded":        {sharded, 6, 6, 60, "cannot be sharded"},
		"no look step":   {four, 6, 0, 60, "--look-every"},
		"budget too low": {four, 6, 6, 5, "--max-blocks 5"},
	} {
		if _, err := NewSequential(c.p, 0.05, c.first, c.every, c.max); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error naming %q", name, err, c.want)
		}
	}
}
