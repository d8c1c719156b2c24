package wire

import "strconv"

// Kind names a kernel event kind. Each kind is one operation class of the
// declared coverage (see observation-health.json).
type Kind string

const (
	KindExec          Kind = "exec"
	KindExecFailed    Kind = "exec_failed"
	KindFork          Kind = "fork"
	KindExit          Kind = "exit"
	KindOpen          Kind = "open"
	KindUnlink        Kind = "unlink"
	KindRmdir         Kind = "rmdir"
	KindMkdir         Kind = "mkdir"
	KindMknod         Kind = "mknod"
	KindRename        Kind = "rename"
	KindLink          Kind = "link"
	KindSymlink       Kind = "symlink"
	KindChmod         Kind = "chmod"
	KindChown         Kind = "chown"
	KindTruncate      Kind = "truncate"
	KindConnect       Kind = "connect"
	KindSend          Kind = "send"
	KindBind          Kind = "bind"
	KindListen        Kind = "listen"
	KindCgroupMigrate Kind = "cgroup_migrate"
	KindIOUring       Kind = "io_uring"
)

// Kinds lists every kernel event kind in a fixed order (the kernel's
// numbering, used for per-kind counters and reports).
var Kinds = []Kind{
	KindExec, KindExecFailed, KindFork, KindExit, KindOpen,
	KindUnlink, KindRmdir, KindMkdir, KindMknod, KindRename, KindLink, KindSymlink, KindChmod, KindChown, KindTruncate,
	KindConnect, KindSend, KindBind, KindListen, KindCgroupMigrate, KindIOUring,
}

// Total is the sum of per-kind counts.
func Total(m map[Kind]uint64) uint64 {
	var t uint64
	for _, v := range m {
		t += v
	}
	return t
}

// FileOpKinds are the kinds whose payload is FileOp.
var FileOpKinds = []Kind{KindUnlink, KindRmdir, KindMkdir, KindMknod, KindRename, KindLink, KindSymlink, KindChmod, KindChown, KindTruncate}

// NetKinds are the kinds whose payload is Net.
var NetKinds = []Kind{KindConnect, KindSend, KindBind, KindListen}

// Kernel is one event observed in the kernel for a task of the run: the
// task vigil started, or a descendant of it, wherever it lives. Exactly one
// payload is set: the one its Kind names (FileOp for the FileOpKinds, Net
// for the NetKinds).
type Kernel struct {
	// Seq is the per-run sequence number, assigned in the kernel at
	// successful ring-buffer reservation; contiguous from 0 in an archive.
	Seq uint64 `json:"seq"`
	// TimeNS is CLOCK_MONOTONIC in nanoseconds (bpf_ktime_get_ns).
	TimeNS   uint64 `json:"ts_ns"`
	Kind     Kind   `json:"kind"`
	PID      uint32 `json:"pid"` // thread-group id
	TID      uint32 `json:"tid"`
	Comm     Bytes  `json:"comm"`
	CgroupID uint64 `json:"cgroup_id"` // the task's cgroup v2 id
	// Hook is the kernel hook the record came from, e.g.
	// "fexit/do_filp_open".
	Hook string `json:"hook"`
	// IOWorker is true when an io_uring worker thread did it on behalf of
	// the task.
	IOWorker bool `json:"io_worker,omitempty"`

	Exec       *Exec       `json:"exec,omitempty"`
	ExecFailed *ExecFailed `json:"exec_failed,omitempty"`
	Fork       *Fork       `json:"fork,omitempty"`
	Exit       *Exit       `json:"exit,omitempty"`
	Open       *Open       `json:"open,omitempty"`
	FileOp     *FileOp     `json:"file_op,omitempty"`
	Net        *Net        `json:"net,omitempty"`
	Migrate    *Migrate    `json:"cgroup_migrate,omitempty"`
	IOUring    *IOUring    `json:"io_uring,omitempty"`
	// Incomplete names, in IncompleteOrder order, the parts of the event
	// the capture could not record whole; absent when none. Health counts
	// such an event once in read_faults, and under each part it names in
	// incomplete_parts.
	Incomplete []string `json:"incomplete,omitempty"`
}

// The parts an event can lack (Kernel.Incomplete).
const (
	// IncompleteReadFailed: a memory read failed (a bad pointer among
	// the caller's arguments, or kernel memory that could not be read);
	// the field it would have filled is empty or zero.
	IncompleteReadFailed = "read_failed"
	// IncompletePath: a path the kernel resolved was longer than the
	// capture keeps (4095 bytes or 64 components); a ResolvedPath says
	// so itself (truncated), a cgroup_migrate dst_path only here.
	IncompletePath = "path_truncated"
	// IncompleteName: a name, symlink target or exec filename was longer
	// than the capture keeps (4095 bytes); a Name says so itself
	// (truncated), a target or filename only here.
	IncompleteName = "name_truncated"
	// IncompleteArgv: the arguments of an exec were longer than the
	// capture keeps (4096 bytes); argv_truncated is set.
	IncompleteArgv = "argv_truncated"
)

// IncompleteOrder lists every part an event can lack, in the order
// Kernel.Incomplete names them.
var IncompleteOrder = []string{IncompleteReadFailed, IncompletePath, IncompleteName, IncompleteArgv}

// ResolvedPath is a file's absolute path as the kernel resolved it: walked
// from the file's dentry and mount up to the root of its mount namespace.
type ResolvedPath struct {
	Path Bytes `json:"path"`
	// Detached: the file has no place under a mount namespace root (a
	// memfd, pipe or socket, an internal or lazily unmounted mount); Path
	// is then the name of what it is, e.g. "memfd:x".
	Detached bool `json:"detached,omitempty"`
	// Deleted: the last component was already unlinked.
	Deleted bool `json:"deleted,omitempty"`
	// Truncated: the path was longer than the capture keeps (4095 bytes or
	// 64 components); Path holds its last components, without a leading
	// "/".
	Truncated bool `json:"truncated,omitempty"`
}

// Exec is a successful execve/execveat, recorded when the new image is in
// place, from the kernel's own objects.
type Exec struct {
	// File is the program the kernel runs: the executable, or for a
	// script its interpreter (Filename then names the script).
	File ResolvedPath `json:"file"`
	// Filename is the name exec was given, as the kernel holds it
	// ("/dev/fd/N" or "/dev/fd/N/name" for fexecve and execveat with a
	// descriptor).
	Filename Bytes `json:"filename"`
	// Via is "path", or "fd" when the program came from a descriptor
	// (fexecve, execveat with AT_EMPTY_PATH, a memfd).
	Via  string  `json:"via"`
	Argv []Bytes `json:"argv"`
	Argc uint32  `json:"argc"`
	// ArgvTruncated: the arguments were longer than the capture keeps
	// (4096 bytes); Argv holds the first ones, the last possibly cut.
	ArgvTruncated bool   `json:"argv_truncated,omitempty"`
	Ino           uint64 `json:"ino"`
	Dev           uint32 `json:"dev"`
	// OldTID is the thread that called exec, when it was not the
	// thread-group leader (the kernel then gives it the leader's id).
	OldTID uint32 `json:"old_tid,omitempty"`
}

// ExecFailed is an execve/execveat that returned an error.
type ExecFailed struct {
	Syscall string `json:"syscall"` // "execve" or "execveat"
	Ret     int64  `json:"ret"`     // -errno
	Name    Name   `json:"name"`
}

// Name is a file name as a caller passed it to a syscall. Requested is
// read from the caller's memory when the call returned: another thread of
// the caller can change that memory during the call, so it may differ from
// what the kernel used. Dir is what the kernel resolved the name against
// (the descriptor's directory, or the working directory), present when
// Requested is relative; Dir and Requested joined is the name's path
// unless a symlink or ".." leads elsewhere.
type Name struct {
	Requested Bytes         `json:"requested"`
	Dir       *ResolvedPath `json:"dir,omitempty"`
	// Missing: the name could not be read (a bad or null pointer), or
	// the call takes none (open_by_handle_at); Dir is then absent, and
	// the name has no path.
	Missing bool `json:"missing,omitempty"`
	// Truncated: the name was longer than the capture keeps (4095
	// bytes); Requested holds its start.
	Truncated bool `json:"truncated,omitempty"`
}

// Fork is a clone/fork/vfork; Thread is true for CLONE_THREAD.
type Fork struct {
	ParentPID uint32 `json:"parent_pid"`
	ParentTID uint32 `json:"parent_tid"`
	ChildPID  uint32 `json:"child_pid"`
	ChildTID  uint32 `json:"child_tid"`
	Thread    bool   `json:"thread"`
	// Entered: the parent is not a task of the run; the child was cloned
	// straight into the session cgroup (how vigil starts the run).
	Entered bool `json:"entered,omitempty"`
	// IOWorker: the child is an io_uring worker thread.
	IOWorker bool `json:"io_worker,omitempty"`
}

// Exit is a task exit. Code is the exit status (0-255) when Signal is 0.
// GroupDead is true when this was the last thread of the process.
type Exit struct {
	Code      int32 `json:"code"`
	Signal    int32 `json:"signal"`
	GroupDead bool  `json:"group_dead"`
}

// Access modes derived from open flags.
const (
	AccessRead      = "read"
	AccessWrite     = "write"
	AccessReadWrite = "read_write"
	AccessPath      = "path" // O_PATH: a handle, no data access
)

// Open is an open(2), openat(2), openat2(2) or creat(2), recorded at its
// return. Opens by io_uring are IOUring events; exec's own open of the
// program is the Exec event.
type Open struct {
	// File is the file the returned descriptor refers to, resolved by the
	// kernel; absent when the open failed.
	File *ResolvedPath `json:"file,omitempty"`
	// Name is the name the caller passed.
	Name  Name   `json:"name"`
	Dirfd int32  `json:"dirfd"`
	Flags uint64 `json:"flags"`
	Mode  uint64 `json:"mode"`
	Ret   int64  `json:"ret"` // the descriptor, or -errno
	// Access is from the opened file's mode when the open succeeded, from
	// the flags otherwise.
	Access   string `json:"access"`
	Create   bool   `json:"create"`
	Truncate bool   `json:"truncate"`
	Append   bool   `json:"append"`
	Syscall  string `json:"syscall"` // "open", "openat", "openat2", "creat" or "open_by_handle_at" (mount_fd in Dirfd, no name)
	Ino      uint64 `json:"ino,omitempty"`
	Dev      uint32 `json:"dev,omitempty"`
	// Created says whether this open created the file, from the opened
	// file's mode (the kernel's FMODE_CREATED); Create only says O_CREAT
	// was asked for. Present for a successful open; absent for a failed
	// one, and in archives recorded before it was kept.
	Created *bool `json:"created,omitempty"`
}

// BoolRef points at a shared true or false: for the optional booleans of
// events, made by the million, without an allocation each. Never write
// through it.
func BoolRef(b bool) *bool {
	if b {
		return &boolTrue
	}
	return &boolFalse
}

var boolTrue, boolFalse = true, false

// FileOp is a change to the file tree, recorded at the syscall's return
// with its result: unlink/unlinkat, rmdir, mkdir/mkdirat, mknod/mknodat,
// rename/renameat/renameat2, link/linkat, symlink/symlinkat,
// chmod/fchmod/fchmodat, chown/fchown/lchown/fchownat, truncate/ftruncate.
type FileOp struct {
	// File is the object of a descriptor-based call (fchmod, fchown,
	// ftruncate), resolved by the kernel.
	File *ResolvedPath `json:"file,omitempty"`
	// Name is the object's name (absent for a descriptor-based call).
	Name *Name `json:"name,omitempty"`
	// NewName is a rename's destination, a link's new name, or a
	// symlink's own name.
	NewName *Name `json:"new_name,omitempty"`
	// Target is a symlink's content, as given.
	Target *Bytes  `json:"target,omitempty"`
	Mode   *uint32 `json:"mode,omitempty"`   // chmod, mkdir, mknod
	UID    *uint32 `json:"uid,omitempty"`    // chown (4294967295: unchanged)
	GID    *uint32 `json:"gid,omitempty"`    // chown
	Length *int64  `json:"length,omitempty"` // truncate
	// Flags are the call's flags argument (rename's RENAME_*, the
	// AT_* flags of the *at calls), or mknod's device number.
	Flags   uint64 `json:"flags,omitempty"`
	Syscall string `json:"syscall"`
	Ret     int64  `json:"ret"` // 0, or -errno
}

// Net is a socket call with an address, recorded at its return: connect
// (the destination), sendto/sendmsg naming a destination, bind (the local
// address) and listen (the local address).
type Net struct {
	Family string `json:"family"` // "inet", "inet6", "unix", or "af_<n>"
	// Addr is the IP address text, or the unix socket path ("@name" for
	// an abstract one).
	Addr Bytes  `json:"addr"`
	Port uint16 `json:"port"`
	// AddrFrom says where the address was read: "socket" (the kernel's
	// socket after the call: a connected peer, a bound local end) or
	// "caller" (the sockaddr in the caller's memory, read after the call;
	// another thread can change it during the call).
	AddrFrom string `json:"addr_from"`
	SockType string `json:"sock_type"` // "stream", "dgram", "seqpacket", "raw", or "type_<n>"
	Fd       int32  `json:"fd"`
	Syscall  string `json:"syscall"`
	// Ret is the call's result: 0 or a byte count, or -errno
	// (-EINPROGRESS for a non-blocking connect; a restart code when a
	// signal interrupted it, see Interrupted).
	Ret int64 `json:"ret"`
}

// Migrate is a task of the run moved to another cgroup, or a task outside
// the run moved into the session cgroup (WasTracked false: from then on it
// is a task of the run). The event's pid, tid and comm are the moved task's.
type Migrate struct {
	DstCgroupID uint64 `json:"dst_cgroup_id"`
	DstPath     Bytes  `json:"dst_path"`
	MoverPID    uint32 `json:"mover_pid"`
	MoverTID    uint32 `json:"mover_tid"`
	WasTracked  bool   `json:"was_tracked"`
	// DefaultHierarchy is true for a cgroup v2 move; false for a v1
	// hierarchy (which says nothing about the session).
	DefaultHierarchy bool `json:"default_hierarchy"`
	IntoSession      bool `json:"into_session"`
	Threadgroup      bool `json:"threadgroup"`
}

// SDK event types a workload may report about itself.
const (
	SDKToolCallStarted   = "tool_call_started"
	SDKToolCallCompleted = "tool_call_completed"
	SDKRunFinished       = "run_finished"
)

// SDKSchema is the schema id every SDK event line carries.
const SDKSchema = "vigil.sdk-event/v1"

// Environment variables through which vigil record tells the child where to
// write SDK events and which run it belongs to.
const (
	EnvSDKEventLog = "VIGIL_SDK_EVENT_LOG"
	EnvRunID       = "VIGIL_RUN_ID"
)

// SDK is one line of the workload's self-report log.
type SDK struct {
	Schema string `json:"schema"`
	RunID  string `json:"run_id"`
	Seq    uint64 `json:"seq"` // contiguous from 0
	Type   string `json:"type"`
	// MonoNS is CLOCK_MONOTONIC in ns, comparable to Kernel.TimeNS.
	MonoNS     uint64 `json:"mono_ns"`
	TimeUnixNS int64  `json:"time_unix_ns"`
	PID        int    `json:"pid"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// Status is set on tool_call_completed and run_finished.
	Status Status `json:"status,omitempty"`
	// TraceID and SpanID name the span the event belongs to, when the
	// workload traces: the tool call's span, or for run_finished the
	// workload's root span (lowercase hex).
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
}

// IOUring is the completion of an io_uring request of the run. The
// opcode and result are recorded; for an open (IORING_OP_OPENAT,
// IORING_OP_OPENAT2) that succeeded, the file it opened. Other operations'
// arguments are not decoded.
type IOUring struct {
	Opcode   uint32        `json:"opcode"`
	Op       string        `json:"op"` // "openat", "connect", ...; "op_<n>" otherwise
	Res      int64         `json:"res"`
	UserData uint64        `json:"user_data"`
	File     *ResolvedPath `json:"file,omitempty"`
	Access   string        `json:"access,omitempty"`
	Ino      uint64        `json:"ino,omitempty"`
	Dev      uint32        `json:"dev,omitempty"`
	// Created says whether an open created its file, as Open.Created
	// does; present with File, absent in archives recorded before it was
	// kept.
	Created *bool `json:"created,omitempty"`
	// Direct: the open put its file in the ring's fixed-file table (a
	// direct descriptor), not in a descriptor of the task; the file is
	// not resolved (no File).
	Direct bool `json:"direct,omitempty"`
	// Name, NewName and Target: a file-tree request's names (unlinkat,
	// mkdirat: Name; renameat, linkat: Name and NewName; symlinkat:
	// Target and NewName), as FileOp has them, but each read from the
	// kernel's own copy of the name made when the request was prepared,
	// so what the operation used. A relative name has no Dir: which
	// directory the request's descriptor named when it ran is not seen.
	// Absent when the names were not kept (see Unrecorded).
	Name    *Name  `json:"name,omitempty"`
	NewName *Name  `json:"new_name,omitempty"`
	Target  *Bytes `json:"target,omitempty"`
}

// Path is the name as a path: Requested when it is absolute (or there is
// no directory), else Dir and Requested joined by "/". The join is
// textual: "..", "." and symlinks are left as they are.
func (n Name) Path() Bytes {
	if n.Dir == nil || len(n.Requested) > 0 && n.Requested[0] == '/' {
		return n.Requested
	}
	if n.Dir.Path == "/" {
		return "/" + n.Requested
	}
	return n.Dir.Path + "/" + n.Requested
}

// ObjectPath is the path of the object a FileOp acted on: the resolved
// file of a descriptor-based call, else its name's path.
func (f *FileOp) ObjectPath() Bytes {
	if f.File != nil {
		return f.File.Path
	}
	if f.Name != nil {
		return f.Name.Path()
	}
	return ""
}

// Path is the opened file's resolved path, or for a failed open the
// name's path.
func (o *Open) Path() Bytes {
	if o.File != nil {
		return o.File.Path
	}
	return o.Name.Path()
}

// Interrupted reports whether a syscall result is one of the kernel's
// restart codes (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
// ERESTART_RESTARTBLOCK). A signal interrupted the call; the caller never
// sees this value: the kernel either runs the call again (and a later
// event records that run) or returns -EINTR. Such an event is an attempt,
// not an outcome.
func Interrupted(ret int64) bool {
	return ret == -512 || ret == -513 || ret == -514 || ret == -516
}

// IOUringOps names the io_uring opcodes (include/uapi/linux/io_uring.h),
// as the op of an io_uring event says them.
var IOUringOps = []string{
	"nop", "readv", "writev", "fsync", "read_fixed", "write_fixed", "poll_add", "poll_remove",
	"sync_file_range", "sendmsg", "recvmsg", "timeout", "timeout_remove", "accept", "async_cancel", "link_timeout",
	"connect", "fallocate", "openat", "close", "files_update", "statx", "read", "write",
	"fadvise", "madvise", "send", "recv", "openat2", "epoll_ctl", "splice", "provide_buffers",
	"remove_buffers", "tee", "shutdown", "renameat", "unlinkat", "mkdirat", "symlinkat", "linkat",
	"msg_ring", "fsetxattr", "setxattr", "fgetxattr", "getxattr", "socket", "uring_cmd", "send_zc",
	"sendmsg_zc", "read_multishot", "waitid", "futex_wait", "futex_wake", "futex_waitv", "fixed_fd_install", "ftruncate",
	"bind", "listen", "recv_zc", "epoll_wait", "readv_fixed", "writev_fixed", "pipe",
}

// IOUringOp names opcode op: op_<n> for one this list does not know.
func IOUringOp(op uint32) string {
	if int(op) < len(IOUringOps) {
		return IOUringOps[op]
	}
	return "op_" + strconv.FormatUint(uint64(op), 10)
}
