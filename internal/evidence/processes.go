package evidence

import "vigil/internal/wire"

// Process is the life of one process (thread group) of the run as its
// kernel events tell it: from the fork that made it (or its first event)
// to the exit of its last thread (or its last event).
type Process struct {
	PID uint32
	// ParentPID is the process that forked it; 0 for the run's first task
	// (vigil placed it in the session) and for a process whose fork was
	// not seen.
	ParentPID uint32
	StartNS   uint64 // CLOCK_MONOTONIC, like wire.Kernel.TimeNS
	EndNS     uint64
	Comm      wire.Bytes // the comm of its last event
	Exec      *wire.Exec // its last successful exec; nil when it never exec'd
	Exit      *wire.Exit // its group exit; nil when the exit was not seen
	Entered   bool       // the run's first task
	Events    []uint64   // seqs of the events of its threads, ascending
}

// Processes rebuilds the run's processes from kernel (sorted by Seq), in
// order of appearance, a parent before the children it forked. A pid the
// kernel reused starts a new Process at the fork that reuses it; events
// after a group exit stay with the process (threads exiting together can
// each see the group dead).
func Processes(kernel []wire.Kernel) []Process {
	var out []Process
	live := map[uint32]int{} // pid -> index in out of its current life
	get := func(pid uint32, ts uint64) *Process {
		i, ok := live[pid]
		if !ok {
			out = append(out, Process{PID: pid, StartNS: ts, EndNS: ts})
			i = len(out) - 1
			live[pid] = i
		}
		return &out[i]
	}
	for i := range kernel {
		e := &kernel[i]
		if f := e.Fork; f != nil && !f.Thread {
			if !f.Entered {
				get(e.PID, e.TimeNS) // the parent first, should this be its first event
			}
			// A fork of a pid already in the record is a new life of it.
			delete(live, f.ChildPID)
			c := get(f.ChildPID, e.TimeNS)
			c.Comm, c.Entered = e.Comm, f.Entered
			if !f.Entered {
				c.ParentPID = f.ParentPID
			}
			if f.Entered {
				// The parent is vigil, not a process of the run: the
				// event belongs to the child.
				c.Events = append(c.Events, e.Seq)
				continue
			}
		}
		p := get(e.PID, e.TimeNS)
		p.Events = append(p.Events, e.Seq)
		p.EndNS = max(p.EndNS, e.TimeNS)
		p.Comm = e.Comm
		switch {
		case e.Exec != nil:
			p.Exec = e.Exec
		case e.Exit != nil && e.Exit.GroupDead:
			p.Exit = e.Exit
		}
	}
	return out
}
