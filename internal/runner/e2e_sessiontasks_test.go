//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/cgroup"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// TestE2ETaskLeavesSession: a child that moves itself out of the session
// into vigil's own cgroup stays a task of the run (tasks are followed by
// descent), so what it does next is in the archive; health says it left
// the session cgroup, which vigil can no longer wait on or kill it
// through.
func TestE2ETaskLeavesSession(t *testing.T) {
	testenv.RequireRoot(t)
	parent, err := cgroup.SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker-after-leaving")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "a.tar.gz")
	r := runVigil(t, dir, "record", "-q", "--run-id", "e2eleft", "--archive", arc, "--",
		"sh", "-c", `echo $$ > "$1/cgroup.procs" && cat "$2" > /dev/null`, "sh", parent, marker)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arc)
	assertNoSessions(t, "e2eleft")
	if n := len(opens(b, marker)); n != 1 {
		t.Fatalf("%d opens of the marker recorded after the task left the session, want 1", n)
	}
	h := b.Health
	c := h.CgroupCorrelation
	if c.MovedOutTasks == 0 || c.Status != wire.CorrelationPartial || c.LeftSessionTasks != 0 {
		t.Fatalf("cgroup correlation %+v: want partial with a task moved out, none alive at the end", c)
	}
	if h.KernelLayer.Status == wire.LayerComplete {
		t.Fatalf("kernel layer complete although a task left the session")
	}
	want := "out of the session cgroup: they stayed captured"
	if !strings.Contains(strings.Join(c.Reasons, "\n"), want) {
		t.Errorf("reasons %q lack %q", c.Reasons, want)
	}
	if len(c.MovedOutExamples) == 0 || c.MovedOutExamples[0].Comm != "sh" {
		t.Errorf("moved-out examples %+v, want the sh that moved", c.MovedOutExamples)
	}
	var moved bool
	for _, e := range b.Kernel {
		moved = moved || e.Kind == wire.KindCgroupMigrate && e.Migrate.WasTracked && !e.Migrate.IntoSession
	}
	if !moved {
		t.Error("no migration event in the kernel layer")
	}
}

// TestE2ERoundTripIsNotClean: a task that leaves the session cgroup, acts
// outside it and comes back is captured throughout, and correlation says
// that it left: a round trip is not a clean run.
func TestE2ERoundTripIsNotClean(t *testing.T) {
	testenv.RequireRoot(t)
	parent, err := cgroup.SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "written-outside")
	arc := filepath.Join(dir, "a.tar.gz")
	// $3 is the session: sh's own cgroup when it starts.
	r := runVigil(t, dir, "record", "-q", "--run-id", "e2etrip", "--archive", arc, "--",
		"sh", "-c", `s=/sys/fs/cgroup/unified$(sed -n 's/^0:://p' /proc/self/cgroup); [ -d "$s" ] || s=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup); echo $$ > "$1/cgroup.procs" && echo x > "$2" && echo $$ > "$s/cgroup.procs"`, "sh", parent, marker)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arc)
	assertNoSessions(t, "e2etrip")
	if n := len(opens(b, marker)); n != 1 {
		t.Fatalf("%d opens of the marker written outside, want 1", n)
	}
	var out, back int
	for _, e := range b.Kernel {
		if m := e.Migrate; m != nil && m.WasTracked && m.DefaultHierarchy {
			if m.IntoSession {
				back++
			} else {
				out++
			}
		}
	}
	c := b.Health.CgroupCorrelation
	if out == 0 || back == 0 || c.Status != wire.CorrelationPartial || c.MovedOutTasks == 0 || c.LeftSessionTasks != 0 {
		t.Fatalf("moves out %d, back %d; correlation %+v: want partial with the move out", out, back, c)
	}
}

// TestE2ECleanRunsBalanceTasks: ordinary workloads (a shell pipeline with
// a background job, the multi-threaded agent, a Go program calling execve
// from a non-leader thread) create and end every task inside the session,
// so none is reported as having left or entered it.
func TestE2ECleanRunsBalanceTasks(t *testing.T) {
	testenv.RequireRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		id  string
		cmd []string
	}{
		{"e2etasksh", []string{"sh", "-c", "ls / | sort | wc -l > /dev/null; (sleep 0.05 &); wait"}},
		{"e2etaskagent", []string{testenv.Vigil(t), "agent", "--kernel-events", "100", "--concurrency", "4"}},
		{"e2etaskexec", []string{"env", testenv.HelperEnv(testenv.ExecFromThread), self}},
	}
	for _, run := range runs {
		t.Run(run.id, func(t *testing.T) {
			dir := t.TempDir()
			arc := filepath.Join(dir, "a.tar.gz")
			args := append([]string{"record", "-q", "--run-id", run.id, "--archive", arc, "--"}, run.cmd...)
			if r := runVigil(t, dir, args...); r.code != 0 {
				t.Fatalf("exit %d, want 0; stderr: %s", r.code, r.stderr)
			}
			b := verifyAndRead(t, arc)
			assertNoSessions(t, run.id)
			assertHealthy(t, b.Health)
			c := b.Health.CgroupCorrelation
			if c.Status != wire.CorrelationClean || c.LeftSessionTasks != 0 || c.EnteredSessionTasks != 0 {
				t.Errorf("cgroup correlation %+v: want clean with no task left or entered", c)
			}
			if b.Health.Counts[wire.KindFork] < 2 {
				t.Errorf("only %d fork events: the workload did not create the tasks it was chosen for", b.Health.Counts[wire.KindFork])
			}
		})
	}
}
