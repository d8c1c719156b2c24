package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-1", []int{0, 1}},
		{"1,0", []int{0, 1}},
	} {
		set, err := ParseCPUList(c.in)
		if err != nil {
			if runtime.NumCPU() < 2 {
				continue
			}
			t.Fatalf("%q: %v", c.in, err)
		}
		if set.Count() != len(c.want) {
			t.Errorf("%q: %d CPUs, want %v", c.in, set.Count(), c.want)
		}
		for _, cpu := range c.want {
			if !set.IsSet(cpu) {
				t.Errorf("%q: CPU %d not set", c.in, cpu)
			}
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0,,1", "1023", "5000"} {
		if _, err := ParseCPUList(bad); err == nil || !strings.Contains(err.Error(), "--cpus") {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}

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
