//go:build linux

package capture

import (
	"fmt"
	"strings"

	"vigil/internal/wire"
)

// ClassCoverage is one operation class the capture records: the hook its
// events come from, and where the recorded facts come from.
type ClassCoverage struct {
	Class  wire.Kind
	Hook   string
	Source string
}

// Uncovered is an operation class the capture does not record, and why.
type Uncovered struct {
	Class string
	Why   string
}

const (
	hookSysExit = "tp_btf/sys_exit"
	namesNote   = "result, flags and the directory a relative name is relative to from the kernel at the syscall's return; the name itself from the caller's memory, read after the call (another thread of the caller can change it during the call)"
)

// coverageTable is the declared coverage: every class the programs
// record, with its hook. A class whose hook did not attach stays in the
// list (attached false), so a reader sees what is missing.
var coverageTable = []ClassCoverage{
	{wire.KindFork, "tp_btf/sched_process_fork", "every task of the run (followed by descent from the first one, in the kernel) with its parent; io_uring workers from tp_btf/task_newtask"},
	{wire.KindExec, "tp_btf/sched_process_exec", "the executable the kernel opened (path walked from its dentry and mount), the name exec was given, and argv from the new image (first 4096 bytes; argv_truncated beyond)"},
	{wire.KindExecFailed, hookSysExit, "execve/execveat returning an error: errno from the kernel; the name from the caller's memory"},
	{wire.KindExit, "tp_btf/sched_process_exit", "every task of the run, with its exit status"},
	{wire.KindCgroupMigrate, "tp_btf/cgroup_attach_task", "moves of the run's tasks between cgroups, and tasks joining the session cgroup"},
	{wire.KindOpen, hookSysExit, "open/openat/openat2/creat/open_by_handle_at: on success the file the returned descriptor refers to, resolved by the kernel; on failure the requested name (none for a handle) and errno. " + namesNote},
	{wire.KindUnlink, hookSysExit, "unlink/unlinkat: " + namesNote},
	{wire.KindRmdir, hookSysExit, "rmdir and unlinkat(AT_REMOVEDIR): " + namesNote},
	{wire.KindMkdir, hookSysExit, "mkdir/mkdirat with mode: " + namesNote},
	{wire.KindMknod, hookSysExit, "mknod/mknodat with mode and device: " + namesNote},
	{wire.KindRename, hookSysExit, "rename/renameat/renameat2, old and new name: " + namesNote},
	{wire.KindLink, hookSysExit, "link/linkat, old and new name: " + namesNote},
	{wire.KindSymlink, hookSysExit, "symlink/symlinkat, target and name: " + namesNote},
	{wire.KindChmod, hookSysExit, "chmod/fchmod/fchmodat/fchmodat2 with the new mode; fchmod's file from its descriptor. " + namesNote},
	{wire.KindChown, hookSysExit, "chown/fchown/lchown/fchownat with the new owner; fchown's file from its descriptor. " + namesNote},
	{wire.KindTruncate, hookSysExit, "truncate/ftruncate with the length; ftruncate's file from its descriptor. " + namesNote},
	{wire.KindConnect, hookSysExit, "connect: the peer from the kernel's socket when it connected or is connecting (inet, inet6); otherwise (unix sockets, failures) the address from the caller's memory"},
	{wire.KindSend, hookSysExit, "sendto/sendmsg naming a destination (UDP, TCP Fast Open, unix datagrams), with the call's result; the destination from the caller's memory, read after the call"},
	{wire.KindBind, hookSysExit, "bind: the local address from the kernel's socket on success, from the caller's memory on failure"},
	{wire.KindListen, hookSysExit, "listen: the local address from the kernel's socket"},
	{wire.KindIOUring, "tp_btf/io_uring_complete", "every completed io_uring request of the run: opcode and result; for IORING_OP_OPENAT/OPENAT2, the file opened (resolved by the kernel) and whether the open created it; an open into the ring's fixed-file table is marked direct, without its file. For unlinkat, renameat, mkdirat, symlinkat and linkat, on kernels with tp_btf/io_uring_submit_req, the names from the kernel's own copy, kept at submission (tp_btf/io_uring_submit_req; at most 128 requests in flight, beyond which a completion has no names and is counted as unrecorded); a relative name is recorded without a directory (the kernel resolves the request's directory descriptor when the request runs, which no hook shows, and the workload can repoint it meanwhile), and such a request is counted as unrecorded. Requests whose completion is not recorded (IOSQE_CQE_SKIP_SUCCESS, a full CQ ring, a completion posted by a task not the run's such as a kworker tearing the ring down, a request still open when the capture ends) are counted from tp_btf/io_uring_submit_req, which follows every request of the run from submission, and tp_btf/io_uring_cqe_overflow (io_uring_untraced), and make the kernel layer partial; where those hooks do not attach, coverage lists io_uring_untraced as not covered. Other operations' arguments (the addresses of connect, send and bind, ftruncate's file) are not decoded"},
}

// notCovered lists what the capture does not see, so that "complete" is
// never read as more than it is.
var notCovered = []Uncovered{
	{"read_write_volume", "reads, writes and their byte counts are not recorded"},
	{"mmap", "memory mappings (mmap, mprotect) are not recorded"},
	{"ptrace", "ptrace, process_vm_readv/writev and other cross-process access are not recorded"},
	{"dns", "DNS names are not recorded; only the addresses connected to or sent to"},
	{"other_syscalls", "syscalls not listed as covered (e.g. name_to_handle_at, sendmmsg, setxattr, mount, kill) are not recorded"},
	{"compat_32bit", "32-bit (compat) and x32 syscalls of the covered classes are counted per kind (compat_syscalls; 32-bit socketcall under connect) but not decoded, which makes the kernel layer partial; on arm64, AArch32 tasks' syscalls are not counted"},
	{"network_namespaces", "addresses are as seen in the task's own network namespace; the namespace is not recorded"},
	{"mount_namespaces", "resolved paths are relative to the root of the task's mount namespace (a chroot is not subtracted); a name is as the task passed it, so after a chroot, or in another mount namespace, an absolute name (of an unlink, a rename, a failed open) is relative to that root, not the host's; the namespace and the root are not recorded"},
	{"failed_file_op_paths", "a name's path is the kernel's resolved directory joined with the name as read from the caller's memory after the call: a thread of the caller that rewrites the name during the call can make it differ from what the kernel used"},
	{"descriptor_replacement", "a descriptor's file or socket is read from the task's descriptor table after the call (at sys_exit, or when an io_uring completion is posted): a workload that replaces the descriptor (dup2) in between can make the record name another file or peer (another thread during a syscall; for an io_uring open done by the kernel's own thread, an io-wq worker or SQPOLL, the task itself, looping dup2 on the descriptor number it expects); on a ring whose completions wait for the task (IORING_SETUP_DEFER_TASKRUN), where the task itself can, an io_uring open records no file and is counted as unseen"},
	{"io_uring_arguments", "io_uring operations other than opens and the file-tree requests, opens into the ring's fixed-file table (direct), and file-tree requests whose names were not kept are recorded by opcode and result only (vigil check counts those a policy could deny as unseen)"},
	{"kernel_threads", "work done by kernel threads on the run's behalf (other than io_uring workers) is not attributed to the run"},
}

// Coverage is the declared coverage, with the attach state of each
// class's hook from the probes.
func (c *Capture) Coverage() ([]ClassCoverage, []Uncovered) {
	return append([]ClassCoverage(nil), coverageTable...), uncoveredGiven(c.probes)
}

// uncoveredGiven is notCovered, plus what the probes that did not attach
// leave unseen beside their class's own hook.
func uncoveredGiven(probes []ProbeStatus) []Uncovered {
	out := append([]Uncovered(nil), notCovered...)
	state := map[string]ProbeStatus{}
	for _, p := range probes {
		state[p.Name] = p
	}
	if !state["tp_btf/io_uring_complete"].Attached {
		return out // the io_uring class is not covered at all
	}
	var missing []string
	for _, h := range []string{"tp_btf/io_uring_submit_req", "tp_btf/io_uring_cqe_overflow"} {
		if p := state[h]; !p.Attached {
			missing = append(missing, fmt.Sprintf("%s did not attach (%s)", h, p.Error))
		}
	}
	if len(missing) > 0 {
		out = append(out, Uncovered{wire.UncoveredIOUringUntraced, "io_uring requests whose completion is not recorded (IOSQE_CQE_SKIP_SUCCESS, a full CQ ring, a completion posted by a task not the run's) are not counted: " + strings.Join(missing, "; ")})
	}
	return out
}
