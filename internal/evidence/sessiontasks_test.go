package evidence_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// Event builders for the session task table; seqs are assigned in order.
func tfork(ppid, ptid, cpid, ctid uint32) wire.Kernel {
	return wire.Kernel{Kind: wire.KindFork, PID: ppid, TID: ptid, Comm: "parent",
		Fork: &wire.Fork{ParentPID: ppid, ParentTID: ptid, ChildPID: cpid, ChildTID: ctid, Thread: cpid == ppid}}
}

func texit(pid, tid uint32, comm string) wire.Kernel {
	return wire.Kernel{Kind: wire.KindExit, PID: pid, TID: tid, Comm: wire.Bytes(comm), Exit: &wire.Exit{}}
}

func texec(pid, tid uint32, comm string) wire.Kernel {
	return wire.Kernel{Kind: wire.KindExec, PID: pid, TID: tid, Comm: wire.Bytes(comm), Exec: &wire.Exec{File: wire.ResolvedPath{Path: wire.Bytes("/bin/" + comm)}}}
}

func topen(pid, tid uint32) wire.Kernel {
	return wire.Kernel{Kind: wire.KindOpen, PID: pid, TID: tid, Comm: "x", Open: &wire.Open{Name: wire.Name{Requested: "/etc/hostname"}}}
}

func TestBalanceSessionTasks(t *testing.T) {
	const runner = 100
	cases := []struct {
		name          string
		events        []wire.Kernel
		left, entered uint64
		leftEx, entEx string
	}{
		{"empty", nil, 0, 0, "", ""},
		{"first child forks and exits", []wire.Kernel{
			tfork(runner, runner, 10, 10), texec(10, 10, "sh"), tfork(10, 10, 11, 11), texit(11, 11, "ls"), texit(10, 10, "sh"),
		}, 0, 0, "", ""},
		{"threads each exit", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 10, 12), tfork(10, 12, 10, 13),
			texit(10, 13, "go"), texit(10, 10, "go"), texit(10, 12, "go"),
		}, 0, 0, "", ""},
		{"tid reused after exit", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 11, 11), texit(11, 11, "a"), tfork(10, 10, 11, 11), texit(11, 11, "b"), texit(10, 10, "sh"),
		}, 0, 0, "", ""},
		{"tid reused, second use leaves", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 11, 11), texit(11, 11, "a"), tfork(10, 10, 11, 11), texec(11, 11, "b"), texit(10, 10, "sh"),
		}, 1, 0, "11/11/b", ""},
		{"child leaves the session", []wire.Kernel{
			tfork(runner, runner, 10, 10), texec(10, 10, "sh"), tfork(10, 10, 11, 11), texit(10, 10, "sh"),
		}, 1, 0, "11/11/parent", ""},
		{"first child leaves", []wire.Kernel{
			tfork(runner, runner, 10, 10), texec(10, 10, "sh"), topen(10, 10),
		}, 1, 0, "10/10/sh", ""},
		{"task entered from outside", []wire.Kernel{
			tfork(runner, runner, 10, 10), topen(20, 20), texit(20, 20, "sleep"), texit(10, 10, "sh"),
		}, 0, 1, "", "20/20/sleep"},
		{"left and entered", []wire.Kernel{
			tfork(runner, runner, 10, 10), texit(30, 31, "in"), tfork(10, 10, 11, 11), texit(10, 10, "sh"),
		}, 1, 1, "11/11/parent", "31/30/in"},
		{"non-leader thread execs", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 10, 12), tfork(10, 10, 10, 13),
			// 13 calls execve: 12 and the old leader exit, 13 takes TID 10.
			texit(10, 12, "go"), texit(10, 10, "go"), texec(10, 10, "sh"), texit(10, 10, "sh"),
		}, 0, 0, "", ""},
		{"leader execs with threads gone", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 10, 12), texit(10, 12, "go"), texec(10, 10, "sh"), texit(10, 10, "sh"),
		}, 0, 0, "", ""},
		{"non-leader exec with a thread that left", []wire.Kernel{
			tfork(runner, runner, 10, 10), tfork(10, 10, 10, 12), tfork(10, 10, 10, 13), tfork(10, 10, 10, 14),
			texit(10, 12, "go"), texit(10, 10, "go"), texec(10, 10, "sh"), texit(10, 10, "sh"),
		}, 1, 0, "14/10/parent", ""},
		{"kernel thread of a session process without fork", []wire.Kernel{
			tfork(runner, runner, 10, 10), texit(10, 10, "uring"), texit(10, 11, "iou-sqp-10"),
		}, 0, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.events {
				c.events[i].Seq = uint64(i)
			}
			s := evidence.BalanceSessionTasks(c.events)
			if s.Left != c.left || s.Entered != c.entered {
				t.Fatalf("left %d entered %d, want %d and %d", s.Left, s.Entered, c.left, c.entered)
			}
			if got := refs(s.LeftExamples); got != c.leftEx {
				t.Errorf("left examples %q, want %q", got, c.leftEx)
			}
			if got := refs(s.EnteredExamples); got != c.entEx {
				t.Errorf("entered examples %q, want %q", got, c.entEx)
			}
		})
	}
}

func TestBalanceSessionTasksBoundsExamples(t *testing.T) {
	ev := []wire.Kernel{tfork(100, 100, 10, 10)}
	for tid := uint32(30); tid > 20; tid-- {
		ev = append(ev, tfork(10, 10, tid, tid))
	}
	for i := range ev {
		ev[i].Seq = uint64(i)
	}
	s := evidence.BalanceSessionTasks(ev)
	if s.Left != 11 || len(s.LeftExamples) != 5 {
		t.Fatalf("left %d with %d examples", s.Left, len(s.LeftExamples))
	}
	if got := refs(s.LeftExamples); got != "10/10/parent 21/21/parent 22/22/parent 23/23/parent 24/24/parent" {
		t.Fatalf("examples not the lowest TIDs in order: %s", got)
	}
}

func refs(r []wire.TaskRef) string {
	var parts []string
	for _, x := range r {
		parts = append(parts, fmt.Sprintf("%d/%d/%s", x.TID, x.PID, x.Comm))
	}
	return strings.Join(parts, " ")
}

func TestSessionTasksInHealth(t *testing.T) {
	base := evidencetest.CleanInput()
	cases := []struct {
		name   string
		mod    func(in *evidence.HealthInput)
		status wire.CorrelationStatus
		reason string
	}{
		{"balanced", func(in *evidence.HealthInput) {}, wire.CorrelationClean, ""},
		{"left, nothing lost", func(in *evidence.HealthInput) { in.SessionTasks.Left = 2 }, wire.CorrelationPartial,
			"2 task(s) of the run were not seen exiting: still alive when the capture closed, and what they did afterwards was not captured"},
		{"left with drops", func(in *evidence.HealthInput) {
			in.SessionTasks.Left = 1
			in.Drops = map[wire.Kind]uint64{wire.KindExit: 1}
		}, wire.CorrelationPartial, "1 task(s) of the run were not seen exiting: still alive when the capture closed, or their exit was lost"},
		{"left with drain unproven", func(in *evidence.HealthInput) {
			in.SessionTasks.Left = 1
			in.DrainProven = false
		}, wire.CorrelationPartial, "still alive when the capture closed, or their exit was lost"},
		{"entered", func(in *evidence.HealthInput) { in.SessionTasks.Entered = 3 }, wire.CorrelationPartial,
			"3 task(s) exited that were not seen created or joining: their fork was lost"},
		{"entered with drops", func(in *evidence.HealthInput) {
			in.SessionTasks.Entered = 1
			in.Drops = map[wire.Kind]uint64{wire.KindFork: 1}
		}, wire.CorrelationPartial, "1 task(s) exited that were not seen created or joining: their fork was lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base
			c.mod(&in)
			h := evidence.BuildHealth("run-x", in)
			got := h.CgroupCorrelation
			if got.Status != c.status || got.LeftSessionTasks != in.SessionTasks.Left || got.EnteredSessionTasks != in.SessionTasks.Entered {
				t.Fatalf("correlation %+v", got)
			}
			if c.status == wire.CorrelationClean {
				return
			}
			if h.KernelLayer.Status == wire.LayerComplete {
				t.Fatal("kernel layer complete while tasks left or entered the session")
			}
			if !strings.Contains(strings.Join(got.Reasons, "\n"), c.reason) {
				t.Fatalf("reasons %q lack %q", got.Reasons, c.reason)
			}
			if back := evidence.InputOf(h); !reflect.DeepEqual(back.SessionTasks.Left, in.SessionTasks.Left) || back.SessionTasks.Entered != in.SessionTasks.Entered {
				t.Fatalf("InputOf lost the task balance: %+v", back.SessionTasks)
			}
		})
	}
}

// BenchmarkBalanceSessionTasks measures the balance over a run of 100k
// events: 10k short-lived processes, each with opens between fork and exit.
func BenchmarkBalanceSessionTasks(b *testing.B) {
	var ev []wire.Kernel
	ev = append(ev, tfork(100, 100, 10, 10))
	for i := 0; len(ev) < 100_000; i++ {
		tid := uint32(1000 + i%30000)
		ev = append(ev, tfork(10, 10, tid, tid))
		for j := 0; j < 8; j++ {
			ev = append(ev, topen(tid, tid))
		}
		ev = append(ev, texit(tid, tid, "w"))
	}
	ev = append(ev, texit(10, 10, "sh"))
	for i := range ev {
		ev[i].Seq = uint64(i)
	}
	b.ResetTimer()
	for b.Loop() {
		if s := evidence.BalanceSessionTasks(ev); s.Left != 0 || s.Entered != 0 {
			b.Fatalf("left %d entered %d", s.Left, s.Entered)
		}
	}
}
