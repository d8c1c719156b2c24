//go:build linux

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// runUser runs the harness in-process on a user command.
func runUser(t *testing.T, opts Options, cmd ...string) (string, Outcome, error) {
	t.Helper()
	opts.Command = cmd
	p := testPlan(t, opts)
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Log: &log})
	t.Logf("harness log:\n%s", log.String())
	return dir, out, err
}

// A workload that fails every third run (a counter file) is discarded with
// its reason, re-measured at once in the same block, and never counted.
func TestFailingSamplesAreDiscardedAndRemeasured(t *testing.T) {
	testenv.RequireRoot(t)
	counter := filepath.Join(t.TempDir(), "count")
	script := `n=$(cat "$0" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0"
if [ $((n % 3)) -eq 0 ]; then echo "injected failure $n" >&2; exit 7; fi`
	dir, out, err := runUser(t, Options{Arms: []string{"bare", "B"}, Cells: []string{"control"}, Blocks: 5, Warmup: 1, MaxReruns: 6, Seed: 11},
		"/bin/sh", "-c", script, counter)
	if err != nil {
		t.Fatal(err)
	}
	p, ss := readOut(t, dir)
	if len(out.Shortfalls) != 0 {
		t.Fatalf("shortfalls %v", out.Incomplete())
	}
	// Runs 1-2 are the warm-ups; the 10 measured slots then take runs
	// 3..17, of which the multiples of 3 (3, 6, 9, 12, 15) fail and are
	// repeated.
	if len(ss) != 17 || out.Taken != 17 || out.Discarded != 5 {
		t.Fatalf("%d samples (%d taken, %d discarded), want 17/17/5", len(ss), out.Taken, out.Discarded)
	}
	valid := map[string]int{}
	for i, s := range ss {
		if s.Valid != (s.ExitCode == 0) {
			t.Fatalf("sample %s valid=%v with exit %d", s.ID, s.Valid, s.ExitCode)
		}
		if !s.Valid {
			if !strings.Contains(s.InvalidReason, "exit code 7") || !strings.Contains(s.InvalidReason, "injected failure") {
				t.Fatalf("reason %q lacks exit code and stderr", s.InvalidReason)
			}
			if s.Warmup {
				continue // warm-ups are not re-measured
			}
			next := ss[i+1]
			if next.Cell != s.Cell || next.Block != s.Block || next.Arm != s.Arm || next.Attempt != s.Attempt+1 || next.Position != s.Position {
				t.Fatalf("%s not re-measured right after: next is %s", s.ID, next.ID)
			}
			continue
		}
		if !s.Warmup {
			valid[s.Arm]++
		}
	}
	if valid["bare"] != p.Blocks || valid["B"] != p.Blocks {
		t.Fatalf("valid per arm %v, want %d each", valid, p.Blocks)
	}
}

// A cell/arm that keeps failing exhausts its re-measure budget and is
// reported incomplete; the other arm is unaffected.
func TestExhaustedBudgetIsIncomplete(t *testing.T) {
	testenv.RequireRoot(t)
	// Fails only with tracing on (arm B).
	script := `[ "$OTEL_SDK_DISABLED" = true ] || { echo "tracing arm broken" >&2; exit 9; }`
	dir, out, err := runUser(t, Options{Arms: []string{"bare", "B"}, Cells: []string{"control"}, Blocks: 3, MaxReruns: 2, Seed: 1},
		"/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	_, ss := readOut(t, dir)
	inc := out.Incomplete()
	if len(inc) != 1 || inc[0] != "control/B (0 of 3 valid)" {
		t.Fatalf("incomplete %v", inc)
	}
	bad := 0
	for _, s := range ss {
		if s.Arm == "B" {
			if s.Valid {
				t.Fatalf("failing sample %s counted valid", s.ID)
			}
			bad++
		}
	}
	// 3 first attempts + 2 re-measures.
	if bad != 5 {
		t.Fatalf("%d B samples, want 5", bad)
	}
	// Resuming does not grant a fresh budget.
	p, _ := LoadPlan(dir)
	again, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Taken != 0 || len(again.Incomplete()) != 1 {
		t.Fatalf("resume took %d samples, incomplete %v; want 0 and still incomplete", again.Taken, again.Incomplete())
	}
}

// Samples of a block are adjacent in time; arm orders follow the seed.
func TestBlocksAreAdjacentAndOrdered(t *testing.T) {
	testenv.RequireRoot(t)
	dir, _, err := runUser(t, Options{Arms: []string{"bare", "B", "bare"}, Cells: []string{"control", "s100"}, Blocks: 6, Warmup: 1, Seed: 77}, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	p, ss := readOut(t, dir)
	sort.Slice(ss, func(i, j int) bool { return ss[i].StartUnixNS < ss[j].StartUnixNS })
	type bk struct {
		cell  string
		block int
	}
	var seq []bk
	orders := map[bk][]string{}
	for _, s := range ss {
		k := bk{s.Cell, s.Block}
		if len(seq) == 0 || seq[len(seq)-1] != k {
			seq = append(seq, k)
		}
		orders[k] = append(orders[k], s.Arm)
		if s.WallNS <= 0 || s.Seed != p.Seed {
			t.Fatalf("sample %s: wall %d seed %d", s.ID, s.WallNS, s.Seed)
		}
	}
	if len(seq) != len(orders) {
		t.Fatalf("blocks interleave in time: %v", seq)
	}
	distinct := map[string]bool{}
	for k, arms := range orders {
		ci := 0
		for i, c := range p.Cells {
			if c.Name == k.cell {
				ci = i
			}
		}
		var want []string
		for _, a := range ArmOrder(p.Order, p.Seed, p.Cells[ci].Name, k.block, len(p.Arms)) {
			want = append(want, p.Arms[a])
		}
		if fmt.Sprint(arms) != fmt.Sprint(want) {
			t.Fatalf("block %v ran %v, seed says %v", k, arms, want)
		}
		distinct[fmt.Sprint(arms)] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("one arm order in every block: %v", distinct)
	}
	if strings.Join(p.Arms, ",") != "bare,B,bare2" || fmt.Sprint(p.ArmKinds) != "[bare B bare]" {
		t.Fatalf("labels %v kinds %v", p.Arms, p.ArmKinds)
	}
}

func TestOutDirMustBeEmpty(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	err := PrepareOut(dir, wire.Plan{})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("non-empty --out accepted: %v", err)
	}
}

// processesWithMarker lists live processes whose environment holds marker.
func processesWithMarker(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if bytes.Contains(data, []byte(marker)) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !bytes.Contains(st, []byte(") Z ")) {
				var pid int
				fmt.Sscan(e.Name(), &pid)
				out = append(out, pid)
			}
		}
	}
	return out
}

// workloadsWithMarker lists marked processes other than the harness and
// its spawning shells: a sample's workload is running.
func workloadsWithMarker(marker string, harness int) []int {
	var out []int
	for _, pid := range processesWithMarker(marker) {
		if pid == harness {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(comm, []byte("read -r _")) {
			continue // the spawning shell, before the workload starts
		}
		out = append(out, pid)
	}
	return out
}

// interruptAndResume starts the harness as a child process, sends SIGINT
// once `after` samples are recorded, checks that nothing is left behind,
// then resumes in-process to completion.
func interruptAndResume(t *testing.T, p wire.Plan, vigil string, after int) []wire.Sample {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("VIGIL_BENCH_TEST_MARKER=%d", time.Now().UnixNano())
	workRoot := t.TempDir()
	child := testenv.HelperCommand(t, "harness", dir, vigil, workRoot)
	child.Env = append(child.Env, marker)
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	samplesPath := filepath.Join(dir, SamplesFile)
	// Signal once `after` samples are recorded and the next sample's
	// workload is running, so the signal lands inside a sample.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		data, _ := os.ReadFile(samplesPath)
		if bytes.Count(data, []byte("\n")) >= after && len(workloadsWithMarker(marker, child.Process.Pid)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			child.Wait()
			t.Fatalf("no %d samples and a running workload in time; harness said:\n%s", after, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := child.Wait()
	t.Logf("interrupted harness said:\n%s", stderr.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("harness exit %v, want 130", err)
	}
	data, err := os.ReadFile(samplesPath)
	if err != nil {
		t.Fatal(err)
	}
	before, n, err := ParseSamples(data)
	if err != nil || n != len(data) || len(before) < after {
		t.Fatalf("after SIGINT: %d samples, %d of %d bytes parse: %v", len(before), n, len(data), err)
	}
	if !strings.Contains(stderr.String(), "interrupted during") {
		t.Fatalf("signal did not land inside a sample (log: %s)", stderr.String())
	}
	if left := leftoverMemcgs(t, child.Process.Pid); len(left) > 0 {
		t.Fatalf("memory cgroups left: %v", left)
	}
	if left := processesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
	if left, _ := os.ReadDir(workRoot); len(left) > 0 {
		t.Fatalf("work directories left in %s: %v", workRoot, left)
	}

	var log bytes.Buffer
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Resume: true, VigilBin: vigil, Log: &log})
	t.Logf("resumed harness said:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Shortfalls) != 0 {
		t.Fatalf("resume left %v", out.Incomplete())
	}
	_, all := readOut(t, dir)
	// Nothing valid was redone: each measured slot has exactly one valid
	// sample, and the samples from before the signal are unchanged.
	if !bytes.HasPrefix(mustRead(t, samplesPath), data) {
		t.Fatal("resume rewrote earlier samples")
	}
	perSlot := map[slot]int{}
	for _, s := range all {
		if s.Valid && !s.Warmup {
			perSlot[slot{s.Cell, s.Block, s.Arm}]++
		}
	}
	if len(perSlot) != p.Blocks*len(p.Arms)*len(p.Cells) {
		t.Fatalf("%d slots valid, want %d", len(perSlot), p.Blocks*len(p.Arms)*len(p.Cells))
	}
	for k, n := range perSlot {
		if n != 1 {
			t.Fatalf("slot %v measured validly %d times", k, n)
		}
	}
	return all
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestInterruptLeavesNothingAndResumeCompletes(t *testing.T) {
	testenv.RequireRoot(t)
	// Each sample has a grandchild, so killing only the direct child would
	// leave something behind.
	p := testPlan(t, Options{Arms: []string{"bare", "B"}, Cells: []string{"control"}, Blocks: 6, Warmup: 1, Seed: 5,
		Command: []string{"/bin/sh", "-c", "sleep 0.2 & sleep 0.3; wait"}})
	interruptAndResume(t, p, "", 3)
}

// A sample that overruns --timeout is stopped, its whole tree killed, and
// recorded as invalid with the reason.
func TestTimeoutStopsSample(t *testing.T) {
	testenv.RequireRoot(t)
	p := testPlan(t, Options{Arms: []string{"bare"}, Cells: []string{"control"}, Blocks: 1, MaxReruns: 0, Seed: 1,
		Command: []string{"/bin/sh", "-c", "sleep 30 & sleep 30; wait"}})
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("VIGIL_BENCH_TEST_MARKER=%d", time.Now().UnixNano())
	t.Setenv("VIGIL_BENCH_TEST_MARKER", marker[len("VIGIL_BENCH_TEST_MARKER="):])
	out, err := Run(context.Background(), Config{Plan: p, OutDir: dir, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, ss := readOut(t, dir)
	if len(ss) != 1 || ss[0].Valid || !strings.Contains(ss[0].InvalidReason, "timed out") || ss[0].ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("samples %+v", ss)
	}
	if inc := out.Incomplete(); len(inc) != 1 {
		t.Fatalf("incomplete %v", inc)
	}
	if left := processesWithMarker(marker); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}
