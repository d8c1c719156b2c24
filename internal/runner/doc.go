// Package runner implements vigil record: it runs a command inside a fresh
// cgroup v2 session with kernel capture attached to that session, waits
// until every process of the session is gone, drains the capture and writes
// a verifiable evidence archive.
//
// The sequence is: preflight (privileges, cgroup v2, BPF/BTF), removal of
// stale sessions, session creation, capture attach, spawn of the child
// directly into the session (clone3 with CLONE_INTO_CGROUP), waiting for the
// child and then for the session to empty (stragglers get a grace period,
// then cgroup.kill, and are counted), drain, teardown, archive write. Each
// phase is timed; nothing in it sleeps for a fixed time. The kernel layer
// is written while the child runs: the capture's sink feeds the events to
// an archive.KernelStream, and the archive is assembled around it after
// the drain.
//
// The child's exit code becomes vigil's (128+N for signal N). vigil's own
// failures carry an *Error with ExitFailure, or ExitCannotExecute /
// ExitNotFound when the command cannot be started; a failure never leaves a
// session cgroup, a running child or a partial archive behind.
package runner
