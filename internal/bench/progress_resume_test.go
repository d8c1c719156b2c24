//go:build linux

package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// On resume, a slot whose earlier try was invalid is finished by a
// re-measure (attempt 1), and a slot whose budget is already spent is
// skipped. Both were counted in the total; progress must still end at
// [total/total] rather than short of it.
func TestProgressReachesTotalOnResume(t *testing.T) {
	testenv.RequireRoot(t)
	p := testPlan(t, Options{Arms: []string{"bare"}, Cells: []string{"control", "k100"}, Blocks: 2, MaxReruns: 1, Seed: 4, Command: []string{"/bin/true"}})
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	st, _, _, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := func(cell string, block, attempt int) wire.Sample {
		return wire.Sample{Schema: wire.SampleSchema, ID: cell + ".bare.b" + string(rune('0'+block)) + ".t" + string(rune('0'+attempt)),
			Cell: cell, Arm: "bare", ArmKind: wire.ArmBare, Block: block, Attempt: attempt, ExitCode: 1, InvalidReason: "exit code 1", Host: p.Host}
	}
	// control block 0: one invalid try, budget left (re-measured on resume).
	// k100 block 0: two invalid tries, budget (1) spent (skipped on resume).
	for _, s := range []wire.Sample{bad("control", 0, 0), bad("k100", 0, 0), bad("k100", 0, 1)} {
		if err := st.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var log bytes.Buffer
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Resume: true, Log: &log})
	t.Logf("harness log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	if out.Taken != 3 {
		t.Fatalf("taken %d, want 3 (control b0 re-measure, control b1, k100 b1)", out.Taken)
	}
	var last string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(l, "] ") {
			last = l
		}
	}
	if !strings.HasPrefix(last, "vigil bench: [3/3] ") {
		t.Errorf("last progress line %q, want [3/3]", last)
	}
}
