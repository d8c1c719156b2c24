package evidence

import (
	"sort"

	"vigil/internal/wire"
)

// maxTaskExamples bounds the example tasks a SessionTasks lists.
const maxTaskExamples = 5

// SessionTasks accounts for the run's tasks. The capture follows tasks by
// descent: it reports every task of the run with a fork event (the first
// one cloned into the session cgroup, io_uring workers included), a task
// that joins the session cgroup from outside with a migration event, every
// move of a task of the run to another cgroup, and every exit. A task
// created but never seen exiting was still alive when the capture closed.
type SessionTasks struct {
	// Left counts tasks created (or joined) but not seen exiting: alive
	// when the capture closed, what they did afterwards was not captured.
	Left uint64
	// Entered counts exit events of tasks neither created nor joined in
	// the run (their fork was lost).
	Entered uint64
	// MovedOut counts moves of tasks of the run out of the session cgroup
	// (cgroup v2); they stayed captured, but vigil can no longer wait for
	// or kill them through the cgroup.
	MovedOut uint64
	// Joined counts tasks that joined the session cgroup from outside;
	// captured from then on.
	Joined uint64
	// The first few tasks of each, in TID order.
	LeftExamples, EnteredExamples, MovedOutExamples, JoinedExamples []wire.TaskRef
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
func BalanceSessionTasks(kernel []wire.Kernel) SessionTasks {
	var b taskBalance
	for i := range kernel {
		b.add(&kernel[i])
	}
	return b.result()
}

// taskBalance folds events into SessionTasks. Names are copied, so an
// event's memory may be reused once add returns.
type taskBalance struct {
	open                      map[uint32]int            // TID -> forks not yet closed
	last                      map[uint32]wire.TaskRef   // TID -> latest identity
	groups                    map[uint32]map[uint32]int // PID -> open TIDs of that group
	s                         SessionTasks
	entered, movedOut, joined []wire.TaskRef
	comm                      wire.Bytes // the last name copied, reused while it repeats
}

// keep returns comm copied (or the copy already made of the same name).
func (b *taskBalance) keep(comm wire.Bytes) wire.Bytes {
	if comm != b.comm {
		b.comm = cloneBytes(comm)
	}
	return b.comm
}

func (b *taskBalance) ref(e *wire.Kernel) wire.TaskRef {
	return wire.TaskRef{TID: e.TID, PID: e.PID, Comm: b.keep(e.Comm)}
}

func (b *taskBalance) openTID(tid, pid uint32, comm wire.Bytes) {
	if b.open == nil {
		b.open, b.last, b.groups = map[uint32]int{}, map[uint32]wire.TaskRef{}, map[uint32]map[uint32]int{}
	}
	b.open[tid]++
	b.last[tid] = wire.TaskRef{TID: tid, PID: pid, Comm: b.keep(comm)}
	if b.groups[pid] == nil {
		b.groups[pid] = map[uint32]int{}
	}
	b.groups[pid][tid]++
}

func (b *taskBalance) closeTID(tid uint32) {
	ref := b.last[tid]
	if b.open[tid]--; b.open[tid] == 0 {
		delete(b.open, tid)
	}
	if g := b.groups[ref.PID]; g != nil {
		if g[tid]--; g[tid] <= 0 {
			delete(g, tid)
		}
	}
}

func (b *taskBalance) add(e *wire.Kernel) {
	switch e.Kind {
	case wire.KindFork:
		if f := e.Fork; f != nil {
			b.openTID(f.ChildTID, f.ChildPID, e.Comm)
		}
	case wire.KindExec:
		if _, ok := b.open[e.TID]; ok {
			if r := b.last[e.TID]; r.PID == e.PID {
				r.Comm = b.keep(e.Comm)
				b.last[e.TID] = r
			}
			return
		}
		// The leader's TID is closed: the exec came from another
		// thread of the group, which now carries the leader's TID.
		for _, tid := range sortedTIDs(b.groups[e.PID]) {
			if tid != e.TID {
				b.closeTID(tid)
				b.openTID(e.TID, e.PID, e.Comm)
				break
			}
		}
	case wire.KindCgroupMigrate:
		m := e.Migrate
		if m == nil {
			return
		}
		switch {
		case !m.WasTracked:
			b.s.Joined++
			b.joined = append(b.joined, b.ref(e))
			b.openTID(e.TID, e.PID, e.Comm)
		case m.DefaultHierarchy && !m.IntoSession:
			b.s.MovedOut++
			b.movedOut = append(b.movedOut, b.ref(e))
		}
	case wire.KindExit:
		if _, ok := b.open[e.TID]; ok {
			b.closeTID(e.TID)
			return
		}
		if _, known := b.groups[e.PID]; known {
			return
		}
		b.s.Entered++
		b.entered = append(b.entered, b.ref(e))
	}
}

// result is the balance of the events so far.
func (b *taskBalance) result() SessionTasks {
	s := b.s
	var left []wire.TaskRef
	for tid, n := range b.open {
		s.Left += uint64(n)
		left = append(left, b.last[tid])
	}
	s.LeftExamples = examples(left)
	s.EnteredExamples = examples(append([]wire.TaskRef(nil), b.entered...))
	s.MovedOutExamples = examples(append([]wire.TaskRef(nil), b.movedOut...))
	s.JoinedExamples = examples(append([]wire.TaskRef(nil), b.joined...))
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
func examples(refs []wire.TaskRef) []wire.TaskRef {
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].TID < refs[j].TID })
	if len(refs) > maxTaskExamples {
		refs = refs[:maxTaskExamples]
	}
	return append([]wire.TaskRef{}, refs...)
}
