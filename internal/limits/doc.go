// Package limits caps what a recorded command's process tree may take: the
// number of tasks (the pids controller, against fork bombs) and memory (the
// memory controller, against a workload that would exhaust the host), and
// reads back how often each cap bit.
//
// A limit is written into the session cgroup itself when the host enables
// the controller there (cgroup v2: the parent's cgroup.subtree_control
// lists it). Otherwise, on a hybrid host, it goes into a group of the
// controller's cgroup v1 hierarchy, named like the session, below vigil's
// own group there. A v1 group cannot be entered at clone time, so the
// thread that forks the command steps into it for the fork (the child
// inherits the thread's v1 groups) and steps out before the command can
// have forked much. vigil never changes a cgroup's controller
// configuration: when neither way is open the limit is refused with the
// reason, before anything runs.
package limits
