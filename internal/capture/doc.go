// Package capture records what the tasks of one cgroup v2 session do at
// kernel level: exec, fork/clone, exit, openat/openat2 and connect, as
// event.Kernel records.
//
// The kernel side (bpf/capture.bpf.c) filters by cgroup before it reserves
// anything in its ring buffer, numbers every emitted record with a per-run
// sequence and counts, per event kind, every record it emitted and every
// record it could not emit. User space reads the ring continuously and, once
// the caller reports that the session cgroup is empty, drains it until the
// number of records read equals the kernel's emission count: the drain is
// proven complete rather than timed.
//
// All programs attach to raw tracepoints, which detach without waiting for
// RCU grace periods; syscall events are built at sys_exit from the saved
// registers. Preflight starts, in the background, the one-time work of the
// first Open: parsing the embedded object and projecting the kernel's BTF
// onto the few types the programs read (README.md).
//
// The compiled BPF object and its Go bindings (vigilbpf_bpfel.*) are
// committed, so building needs only Go; README.md says how to regenerate
// them.
package capture
