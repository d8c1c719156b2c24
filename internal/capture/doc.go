// Package capture records, at kernel level, what the tasks of one run do:
// processes (fork, exec, failed exec, exit, cgroup moves), files (opens,
// and every change to the file tree), sockets (connect, send with a
// destination, bind, listen) and io_uring requests, as wire.Kernel
// records.
//
// A task belongs to the run by descent: the kernel side marks the task
// vigil clones into the session cgroup and every task it or its
// descendants create, in task-local storage, wherever they go. What the
// kernel resolved is taken from its own objects (the opened file from the
// descriptor table, walked from dentry and mount; a connected socket's
// peer; the directory a relative name is relative to); names passed by
// pointer are read from the caller's memory and labelled as such.
// Coverage reports the classes recorded, their hooks, and what is not.
//
// The kernel side numbers every emitted record and counts, per kind and
// cause, every record it could not emit. Once the caller reports the
// session cgroup empty, Finish closes the capture (tasks of the run still
// alive outside it are counted, not recorded, from then on) and drains the
// ring until the records read equal the kernel's emission count: the
// drain is proven rather than timed.
//
// The reader puts records back in seq order (the ring gives them in
// reservation order) and passes the events on a reused block at a time to
// Config.Sink while the run goes, so a caller need not hold them; without
// a sink, Finish returns them.
//
// All programs attach to BTF tracepoints (tp_btf), which every kernel with
// BTF has; kprobes, fentry/fexit and the BPF LSM are not needed. Preflight
// starts, in the background, the one-time work of the first Open: parsing
// the embedded object, indexing the kernel's BTF and projecting it onto
// the few types the programs read (README.md).
//
// LoadResident pins loaded and verified programs in a BPF file system (a
// resident set), so that Open with Config.Resident can take them instead
// of doing that work again; one capture holds a set at a time, and every
// session starts from reset state (README.md, Resident sets).
//
// The compiled BPF objects and their Go bindings (vigilbpf_*_bpfel.*) are
// committed, so building needs only Go; README.md says how to regenerate
// them.
package capture
