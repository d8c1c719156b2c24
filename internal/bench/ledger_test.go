//go:build linux

package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"vigil/internal/wire"
)

func smp(cell, arm string, block, attempt int, valid, warm bool) wire.Sample {
	return wire.Sample{Schema: wire.SampleSchema, ID: "x", Cell: cell, Arm: arm, ArmKind: wire.ArmKind(arm), Block: block, Attempt: attempt, Valid: valid, Warmup: warm}
}

func TestLedgerResumeBookkeeping(t *testing.T) {
	p := testPlan(t, Options{Arms: []string{"bare", "B"}, Cells: []string{"control"}, Blocks: 3, Warmup: 1, MaxReruns: 2, Seed: 3})
	prior := []wire.Sample{
		smp("control", "bare", -1, 0, true, true),
		smp("control", "B", -1, 0, true, true),
		smp("control", "bare", 0, 0, true, false),
		smp("control", "B", 0, 0, false, false), // discarded ...
		smp("control", "B", 0, 1, true, false),  // ... and re-measured
		smp("control", "bare", 1, 0, false, false),
	}
	l := newLedger(prior)
	if l.reruns[cellArm{"control", "B"}] != 1 || l.reruns[cellArm{"control", "bare"}] != 0 {
		t.Fatalf("reruns %v", l.reruns)
	}
	if l.tries[slot{"control", 0, "B"}] != 2 || l.tries[slot{"control", 1, "bare"}] != 1 {
		t.Fatalf("tries %v", l.tries)
	}
	blocks := Schedule(p, Shard{1, 1})
	var need [][]string
	for _, b := range blocks {
		var arms []string
		for _, a := range l.pending(p, b, true) {
			arms = append(arms, p.Arms[a])
		}
		need = append(need, arms)
	}
	// Warm-up runs again in full; block 0 is done; block 1 needs both
	// (bare was invalid); block 2 needs both.
	if len(need[0]) != 2 || len(need[1]) != 0 || len(need[2]) != 2 || len(need[3]) != 2 {
		t.Fatalf("pending %v", need)
	}
	if got := l.pending(p, blocks[0], false); got != nil {
		t.Fatalf("warm-up of a finished cell pending: %v", got)
	}
	short := l.shortfalls(p, Shard{1, 1})
	want := []shortfall{{"control", "bare", 1, 3}, {"control", "B", 1, 3}}
	if !reflect.DeepEqual(short, want) {
		t.Fatalf("shortfalls %+v", short)
	}
	// Shard 2/2 owns only block 1.
	if s := l.shortfalls(p, Shard{2, 2}); len(s) != 2 || s[0].Want != 1 || s[0].Valid != 0 {
		t.Fatalf("shard shortfalls %+v", s)
	}
}

func TestStoreAppendAndTornLine(t *testing.T) {
	dir := t.TempDir()
	st, existing, torn, err := OpenStore(dir)
	if err != nil || len(existing) != 0 || torn != 0 {
		t.Fatal(existing, torn, err)
	}
	for i := 0; i < 3; i++ {
		if err := st.Append(smp("c", "A", i, 0, true, false)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	path := filepath.Join(dir, SamplesFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"schema":"vigil.sample/v1","id":"half`)
	f.Close()
	st, existing, torn, err = OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(existing) != 3 || torn != len(`{"schema":"vigil.sample/v1","id":"half`) {
		t.Fatalf("%d samples, torn %d", len(existing), torn)
	}
	st.Append(smp("c", "A", 3, 0, true, false))
	st.Close()
	data, _ := os.ReadFile(path)
	got, n, err := ParseSamples(data)
	if err != nil || len(got) != 4 || n != len(data) {
		t.Fatalf("after repair: %d samples, %d of %d bytes, %v", len(got), n, len(data), err)
	}
	os.WriteFile(path, []byte("{\"schema\":\"vigil.sample/v1\"}\nnot json\n"), 0o644)
	if _, _, _, err := OpenStore(dir); err == nil {
		t.Fatal("corrupt complete line accepted")
	}
}
