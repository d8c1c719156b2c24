package evidence

import (
	"testing"

	"vigil/internal/wire"
)

func TestProcesses(t *testing.T) {
	fork := func(parent, child uint32, entered bool) wire.Kernel {
		return wire.Kernel{Kind: wire.KindFork, PID: parent, TID: parent, Fork: &wire.Fork{ParentPID: parent, ChildPID: child, ChildTID: child, Entered: entered}}
	}
	exit := func(pid, tid uint32, code int32) wire.Kernel {
		return wire.Kernel{Kind: wire.KindExit, PID: pid, TID: tid, Exit: &wire.Exit{Code: code, GroupDead: true}}
	}
	open := func(pid uint32) wire.Kernel {
		return wire.Kernel{Kind: wire.KindOpen, PID: pid, TID: pid, Open: &wire.Open{}}
	}
	type want struct {
		pid, parent uint32
		events      int
		exited      bool
	}
	for _, tc := range []struct {
		name   string
		events []wire.Kernel
		want   []want
	}{
		{"first task, child, exits", []wire.Kernel{fork(1, 10, true), fork(10, 11, false), open(11), exit(11, 11, 0), exit(10, 10, 0)},
			[]want{{10, 0, 3, true}, {11, 10, 2, true}}},
		// Threads exiting together can each see the group dead.
		{"two group-dead exits are one process", []wire.Kernel{fork(1, 10, true), exit(10, 12, 0), exit(10, 10, 0)},
			[]want{{10, 0, 3, true}}},
		// A parent whose own fork was not seen comes before its child.
		{"parent first seen at its fork", []wire.Kernel{fork(20, 21, false), exit(21, 21, 0)},
			[]want{{20, 0, 1, false}, {21, 20, 1, true}}},
		{"pid reused after exit", []wire.Kernel{fork(1, 10, true), fork(10, 11, false), exit(11, 11, 1), fork(10, 11, false), open(11)},
			[]want{{10, 0, 3, false}, {11, 10, 1, true}, {11, 10, 1, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.events {
				tc.events[i].Seq, tc.events[i].TimeNS = uint64(i), uint64(100+i)
			}
			got := Processes(tc.events)
			if len(got) != len(tc.want) {
				t.Fatalf("%d processes, want %d: %+v", len(got), len(tc.want), got)
			}
			seen := 0
			for i, w := range tc.want {
				p := got[i]
				seen += len(p.Events)
				if p.PID != w.pid || p.ParentPID != w.parent || len(p.Events) != w.events || (p.Exit != nil) != w.exited {
					t.Errorf("process %d: pid %d parent %d events %v exited %v, want %+v", i, p.PID, p.ParentPID, p.Events, p.Exit != nil, w)
				}
			}
			if seen != len(tc.events) {
				t.Errorf("%d events assigned, %d given", seen, len(tc.events))
			}
		})
	}
}
