package evidence

import (
	"sort"

	"vigil/internal/event"
)

// maxTaskExamples bounds the example tasks a SessionTasks lists.
const maxTaskExamples = 5

// TaskRef names one task in a health document.
type TaskRef struct {
	TID  uint32 `json:"tid"`
	PID  uint32 `json:"pid"`
	Comm string `json:"comm"`
}

// SessionTasks balances the tasks created in the session against the
// tasks that exited in it. The capture reports every task created in the
// session (including the first one, cloned into the session cgroup) with a
// fork event and every task that exits in the session with an exit event;
// a task created but never seen exiting left the session cgroup (or its
// exit was lost), and what it did afterwards was not captured.
type SessionTasks struct {
	// Left counts fork events not followed by an exit of the same TID.
	Left uint64
	// Entered counts exit events of tasks that no fork created in the
	// session: they joined from outside.
	Entered uint64
	// LeftExamples and EnteredExamples are the first few such tasks, in
	// TID order.
	LeftExamples, EnteredExamples []TaskRef
}

// BalanceSessionTasks derives SessionTasks from kernel events sorted by
// Seq. A TID may be reused within a run, so each fork of a TID opens one
// count and each later exit of that TID closes one.
//
// Two kernel behaviours are accounted for. A non-leader thread that calls
// execve takes over the thread-group leader's TID: the old leader's exit
// is reported under that TID, the exec then comes from the leader's TID
// and the thread's own TID never exits; so at an exec of a group whose
// leader TID is closed, one open thread of the group is renamed to the
// leader. And kernel-created threads of a session process (io_uring
// workers) start without a fork event, so an exit whose thread group was
// created in the session is not counted as having entered from outside.
func BalanceSessionTasks(kernel []event.Kernel) SessionTasks {
	open := map[uint32]int{}              // TID -> forks not yet closed
	last := map[uint32]TaskRef{}          // TID -> latest identity
	groups := map[uint32]map[uint32]int{} // PID -> open TIDs of that group
	var s SessionTasks
	var entered []TaskRef
	openTID := func(tid, pid uint32, comm string) {
		open[tid]++
		last[tid] = TaskRef{TID: tid, PID: pid, Comm: comm}
		if groups[pid] == nil {
			groups[pid] = map[uint32]int{}
		}
		groups[pid][tid]++
	}
	closeTID := func(tid uint32) {
		ref := last[tid]
		if open[tid]--; open[tid] == 0 {
			delete(open, tid)
		}
		if g := groups[ref.PID]; g != nil {
			if g[tid]--; g[tid] <= 0 {
				delete(g, tid)
			}
		}
	}
	for i := range kernel {
		e := &kernel[i]
		switch e.Kind {
		case event.KindFork:
			if f := e.Fork; f != nil {
				openTID(f.ChildTID, f.ChildPID, e.Comm)
			}
		case event.KindExec:
			if _, ok := open[e.TID]; ok {
				if r := last[e.TID]; r.PID == e.PID {
					r.Comm = e.Comm
					last[e.TID] = r
				}
				continue
			}
			// The leader's TID is closed: the exec came from another
			// thread of the group, which now carries the leader's TID.
			for _, tid := range sortedTIDs(groups[e.PID]) {
				if tid != e.TID {
					closeTID(tid)
					openTID(e.TID, e.PID, e.Comm)
					break
				}
			}
		case event.KindExit:
			if _, ok := open[e.TID]; ok {
				closeTID(e.TID)
				continue
			}
			if _, known := groups[e.PID]; known {
				continue
			}
			s.Entered++
			entered = append(entered, TaskRef{TID: e.TID, PID: e.PID, Comm: e.Comm})
		}
	}
	var left []TaskRef
	for tid, n := range open {
		s.Left += uint64(n)
		left = append(left, last[tid])
	}
	s.LeftExamples = examples(left)
	s.EnteredExamples = examples(entered)
	return s
}

func sortedTIDs(m map[uint32]int) []uint32 {
	out := make([]uint32, 0, len(m))
	for tid := range m {
		out = append(out, tid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// examples returns at most maxTaskExamples refs in TID order; never nil,
// so the document always carries the list.
func examples(refs []TaskRef) []TaskRef {
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].TID < refs[j].TID })
	if len(refs) > maxTaskExamples {
		refs = refs[:maxTaskExamples]
	}
	return append([]TaskRef{}, refs...)
}
