//go:build linux

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// --cpus pins the sample's tree, and only it: the harness keeps its CPUs.
func TestCPUsPinSamples(t *testing.T) {
	testenv.RequireRoot(t)
	var before unix.CPUSet
	unix.SchedGetaffinity(0, &before)
	if before.Count() < 2 {
		t.Fatalf("this test needs 2 CPUs, the process has %d", before.Count())
	}
	out := filepath.Join(t.TempDir(), "allowed")
	p := testPlan(t, Options{Arms: []string{"bare"}, Cells: []string{"control"}, Blocks: 2, CPUs: "1",
		Command: []string{"/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status >> " + out}})
	dir := filepath.Join(t.TempDir(), "out")
	if err := PrepareOut(dir, p); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), Config{Plan: p, OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	if got := strings.Fields(string(data)); len(got) != 4 || got[1] != "1" || got[3] != "1" {
		t.Errorf("samples ran with %q; want Cpus_allowed_list 1 twice", data)
	}
	var after unix.CPUSet
	unix.SchedGetaffinity(0, &after)
	if after != before {
		t.Errorf("the harness's affinity changed")
	}
}

// --runner-cpus reaches vigil record in the Runner arms only, with the
// workload's CPUs beside it.
func TestRunnerCPUsInArmCommand(t *testing.T) {
	cell := wire.Cell{Name: "c", KernelEvents: 1, Concurrency: 1}
	p := samplePaths{Archive: "a", PhaseLog: "p", Work: "w", Result: "r", Trace: "t"}
	for kind, want := range map[wire.ArmKind]string{
		wire.ArmA:    "record --archive a --phase-log p --programs load --runner-cpus 0 --cpus 1 --",
		wire.ArmC:    "record --archive a --phase-log p --programs load --runner-cpus 0 --cpus 1 --",
		wire.ArmBare: "",
		wire.ArmB:    "",
	} {
		argv, _ := armCommand("vigil", kind, cell, nil, p, "1", "0", "", "")
		line := strings.Join(argv, " ")
		if (want == "") != !strings.Contains(line, "record") || (want != "" && !strings.Contains(line, want)) {
			t.Errorf("%s: %q; want %q", kind, line, want)
		}
	}
}

// --programs resident reaches vigil record in the Runner arms; without it
// they load their programs, whatever resident set the host has.
func TestProgramsInArmCommand(t *testing.T) {
	cell := wire.Cell{Name: "c", KernelEvents: 1, Concurrency: 1}
	p := samplePaths{Archive: "a", PhaseLog: "p", Work: "w", Result: "r", Trace: "t"}
	for programs, want := range map[string]string{"": "--programs load --", "resident": "--programs resident --"} {
		for _, kind := range []wire.ArmKind{wire.ArmA, wire.ArmC} {
			argv, _ := armCommand("vigil", kind, cell, nil, p, "", "", programs, "")
			if line := strings.Join(argv, " "); !strings.Contains(line, want) {
				t.Errorf("%s, programs %q: %q; want %q", kind, programs, line, want)
			}
		}
	}
	if _, err := NewPlan(Options{Arms: []string{"bare", "A"}, Cells: []string{"control"}, Blocks: 1, Order: OrderRandom, Programs: "pinned"}, HostInfo(), nil); err == nil || !strings.Contains(err.Error(), `--programs "pinned"`) {
		t.Errorf("--programs pinned: %v", err)
	}
}
