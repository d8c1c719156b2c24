package otlpexport

import (
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Attribute names. Those without the vigil. prefix are OpenTelemetry
// semantic conventions.
const (
	AttrServiceName    = "service.name"
	AttrServiceVersion = "service.version"
	AttrHostName       = "host.name"
	AttrHostArch       = "host.arch"
	AttrOSType         = "os.type"
	AttrOSVersion      = "os.version"

	AttrProcessPID        = "process.pid"
	AttrProcessParentPID  = "process.parent_pid"
	AttrProcessExecPath   = "process.executable.path"
	AttrProcessExecName   = "process.executable.name"
	AttrProcessArgs       = "process.command_args"
	AttrProcessExitCode   = "process.exit.code"
	AttrThreadID          = "thread.id"
	AttrFilePath          = "file.path"
	AttrNetPeerAddress    = "network.peer.address"
	AttrNetPeerPort       = "network.peer.port"
	AttrNetLocalAddress   = "network.local.address"
	AttrNetLocalPort      = "network.local.port"
	AttrNetTransport      = "network.transport"
	AttrNetType           = "network.type"
	AttrErrorType         = "error.type"
	AttrGenAIOperation    = "gen_ai.operation.name"
	AttrGenAIToolName     = "gen_ai.tool.name"
	AttrGenAIToolCallID   = "gen_ai.tool.call.id"
	AttrRunID             = "vigil.run.id"
	AttrKernelLayer       = "vigil.health.kernel_layer"
	AttrKernelReasons     = "vigil.health.kernel_layer.reasons"
	AttrCgroupCorrelation = "vigil.health.cgroup_correlation"
	AttrRingbufDrops      = "vigil.health.ringbuf_drops"
	AttrSeqGaps           = "vigil.health.seq_gaps"
	AttrSDKLayer          = "vigil.health.sdk_layer"
	AttrCovered           = "vigil.coverage.covered"
	AttrNotCovered        = "vigil.coverage.not_covered"
	AttrKernelEvents      = "vigil.kernel_events"
	AttrEventsPart        = "vigil.events.part"
	AttrEventsParts       = "vigil.events.parts"
	AttrSignal            = "vigil.signal"
	AttrComm              = "vigil.comm"
	AttrSeq               = "vigil.seq"
	AttrHook              = "vigil.hook"
	AttrIOWorker          = "vigil.io_worker"
	AttrIncomplete        = "vigil.incomplete"
	AttrSyscall           = "vigil.syscall"
	AttrResult            = "vigil.result"
	AttrRequested         = "vigil.requested"
	AttrFileDetached      = "vigil.file.detached"
	AttrFileDeleted       = "vigil.file.deleted"
	AttrFileTruncated     = "vigil.file.truncated"
	AttrNewPath           = "vigil.new_path"
	AttrNewRequested      = "vigil.new_requested"
	AttrLinkTarget        = "vigil.link.target"
	AttrOpenFlags         = "vigil.open.flags"
	AttrOpenFlagsText     = "vigil.open.flags_text"
	AttrOpenAccess        = "vigil.open.access"
	AttrOpenCreated       = "vigil.open.created"
	AttrExecFilename      = "vigil.exec.filename"
	AttrExecVia           = "vigil.exec.via"
	AttrForkChildPID      = "vigil.fork.child_pid"
	AttrForkThread        = "vigil.fork.thread"
	AttrNetFamily         = "vigil.net.family"
	AttrNetAddrFrom       = "vigil.net.addr_from"
	AttrCgroupDst         = "vigil.cgroup.dst_path"
	AttrCgroupInto        = "vigil.cgroup.into_session"
	AttrIOUringOp         = "vigil.io_uring.op"
	AttrIOUringDirect     = "vigil.io_uring.direct"
)

func resourceAttrs(m pcommon.Map, b *evidence.Bundle) {
	r := b.Run
	m.PutStr(AttrServiceName, "vigil")
	if r.VigilVersion != "" {
		m.PutStr(AttrServiceVersion, r.VigilVersion)
	}
	m.PutStr(AttrHostName, r.Host.Hostname)
	m.PutStr(AttrHostArch, r.Host.Arch)
	m.PutStr(AttrOSType, r.Host.OS)
	m.PutStr(AttrOSVersion, r.Host.Kernel)
	m.PutStr(AttrRunID, r.RunID)
}

func runAttrs(m pcommon.Map, b *evidence.Bundle) {
	r, h := b.Run, b.Health
	m.PutStr(AttrRunID, r.RunID)
	putBytesSlice(m, AttrProcessArgs, nil, r.Argv)
	m.PutInt(AttrProcessExitCode, int64(r.ExitCode))
	if r.Signal != 0 {
		m.PutInt(AttrSignal, int64(r.Signal))
	}
	m.PutStr(AttrKernelLayer, string(h.KernelLayer.Status))
	if len(h.KernelLayer.Reasons) > 0 {
		putStrs(m, AttrKernelReasons, h.KernelLayer.Reasons)
	}
	m.PutStr(AttrCgroupCorrelation, string(h.CgroupCorrelation.Status))
	m.PutInt(AttrRingbufDrops, int64(h.RingbufDrops.Total))
	m.PutInt(AttrSeqGaps, int64(h.SeqGaps))
	m.PutStr(AttrSDKLayer, string(h.SDKLayer.Status))
	var covered, not []string
	for _, c := range h.Coverage.Covered {
		covered = append(covered, c.Class)
	}
	for _, c := range h.Coverage.NotCovered {
		not = append(not, c.Class)
	}
	putStrs(m, AttrCovered, covered)
	putStrs(m, AttrNotCovered, not)
	m.PutInt(AttrKernelEvents, int64(len(b.Kernel)))
}

func processAttrs(m pcommon.Map, p *evidence.Process) {
	m.PutInt(AttrProcessPID, int64(p.PID))
	if p.ParentPID != 0 {
		m.PutInt(AttrProcessParentPID, int64(p.ParentPID))
	}
	m.PutStr(AttrComm, p.Comm.Text())
	if p.Exec != nil {
		m.PutStr(AttrProcessExecPath, p.Exec.File.Path.Text())
		m.PutStr(AttrProcessExecName, baseName(p.Exec.File.Path.Text()))
		putBytesSlice(m, AttrProcessArgs, p.Exec.Argv, nil)
	}
	if p.Exit != nil {
		m.PutInt(AttrProcessExitCode, int64(p.Exit.Code))
		if p.Exit.Signal != 0 {
			m.PutInt(AttrSignal, int64(p.Exit.Signal))
		}
	}
	m.PutInt(AttrKernelEvents, int64(len(p.Events)))
}

// eventAttrs describes one kernel event; the span event's name is its kind.
func eventAttrs(m pcommon.Map, e *wire.Kernel) {
	m.PutInt(AttrSeq, int64(e.Seq))
	m.PutInt(AttrProcessPID, int64(e.PID))
	m.PutInt(AttrThreadID, int64(e.TID))
	m.PutStr(AttrComm, e.Comm.Text())
	m.PutStr(AttrHook, e.Hook)
	if e.IOWorker {
		m.PutBool(AttrIOWorker, true)
	}
	if len(e.Incomplete) > 0 {
		s := m.PutEmptySlice(AttrIncomplete)
		for _, part := range e.Incomplete {
			s.AppendEmpty().SetStr(part)
		}
	}
	switch {
	case e.Exec != nil:
		x := e.Exec
		putPath(m, AttrFilePath, &x.File)
		m.PutStr(AttrProcessExecPath, x.File.Path.Text())
		putBytesSlice(m, AttrProcessArgs, x.Argv, nil)
		m.PutStr(AttrExecFilename, x.Filename.Text())
		m.PutStr(AttrExecVia, x.Via)
	case e.ExecFailed != nil:
		x := e.ExecFailed
		m.PutStr(AttrSyscall, x.Syscall)
		putResult(m, x.Ret)
		m.PutStr(AttrRequested, x.Name.Path().Text())
	case e.Fork != nil:
		m.PutInt(AttrForkChildPID, int64(e.Fork.ChildPID))
		m.PutBool(AttrForkThread, e.Fork.Thread)
		if !e.Fork.Entered {
			m.PutInt(AttrProcessParentPID, int64(e.Fork.ParentPID))
		}
	case e.Exit != nil:
		m.PutInt(AttrProcessExitCode, int64(e.Exit.Code))
		if e.Exit.Signal != 0 {
			m.PutInt(AttrSignal, int64(e.Exit.Signal))
		}
	case e.Open != nil:
		o := e.Open
		switch {
		case o.File != nil:
			putPath(m, AttrFilePath, o.File)
		case !o.Name.Missing:
			m.PutStr(AttrFilePath, o.Name.Path().Text())
		}
		m.PutStr(AttrRequested, o.Name.Requested.Text())
		m.PutStr(AttrSyscall, o.Syscall)
		m.PutInt(AttrOpenFlags, int64(o.Flags))
		m.PutStr(AttrOpenFlagsText, OpenFlagsText(o.Flags))
		m.PutStr(AttrOpenAccess, o.Access)
		if o.Created != nil {
			m.PutBool(AttrOpenCreated, *o.Created)
		}
		putResult(m, o.Ret)
	case e.FileOp != nil:
		f := e.FileOp
		switch {
		case f.File != nil:
			putPath(m, AttrFilePath, f.File)
		case f.Name != nil:
			m.PutStr(AttrFilePath, f.Name.Path().Text())
		}
		if f.NewName != nil {
			m.PutStr(AttrNewPath, f.NewName.Path().Text())
		}
		if f.Target != nil {
			m.PutStr(AttrLinkTarget, f.Target.Text())
		}
		m.PutStr(AttrSyscall, f.Syscall)
		putResult(m, f.Ret)
	case e.Net != nil:
		netAttrs(m, e.Kind, e.Net)
	case e.Migrate != nil:
		m.PutStr(AttrCgroupDst, e.Migrate.DstPath.Text())
		m.PutBool(AttrCgroupInto, e.Migrate.IntoSession)
	case e.IOUring != nil:
		u := e.IOUring
		m.PutStr(AttrIOUringOp, u.Op)
		// A relative name has no directory (the capture cannot see which
		// the request's descriptor named): it is no path, only the name
		// as requested.
		switch {
		case u.File != nil:
			putPath(m, AttrFilePath, u.File)
		case u.Name != nil && u.Name.Dir == nil && !strings.HasPrefix(string(u.Name.Requested), "/"):
			m.PutStr(AttrRequested, u.Name.Requested.Text())
		case u.Name != nil:
			m.PutStr(AttrFilePath, u.Name.Path().Text())
		}
		switch {
		case u.NewName != nil && u.NewName.Dir == nil && !strings.HasPrefix(string(u.NewName.Requested), "/"):
			m.PutStr(AttrNewRequested, u.NewName.Requested.Text())
		case u.NewName != nil:
			m.PutStr(AttrNewPath, u.NewName.Path().Text())
		}
		if u.Target != nil {
			m.PutStr(AttrLinkTarget, u.Target.Text())
		}
		if u.Created != nil {
			m.PutBool(AttrOpenCreated, *u.Created)
		}
		if u.Direct {
			m.PutBool(AttrIOUringDirect, true)
		}
		putResult(m, u.Res)
	}
}

func netAttrs(m pcommon.Map, kind wire.Kind, n *wire.Net) {
	addr, port := AttrNetPeerAddress, AttrNetPeerPort
	if kind == wire.KindBind || kind == wire.KindListen {
		addr, port = AttrNetLocalAddress, AttrNetLocalPort
	}
	m.PutStr(addr, n.Addr.Text())
	if n.Family == "inet" || n.Family == "inet6" {
		m.PutInt(port, int64(n.Port))
		m.PutStr(AttrNetType, map[string]string{"inet": "ipv4", "inet6": "ipv6"}[n.Family])
	}
	switch {
	case n.Family == "unix":
		m.PutStr(AttrNetTransport, "unix")
	case n.SockType == "stream":
		m.PutStr(AttrNetTransport, "tcp")
	case n.SockType == "dgram":
		m.PutStr(AttrNetTransport, "udp")
	}
	m.PutStr(AttrNetFamily, n.Family)
	m.PutStr(AttrNetAddrFrom, n.AddrFrom)
	m.PutStr(AttrSyscall, n.Syscall)
	putResult(m, n.Ret)
}

func putPath(m pcommon.Map, key string, p *wire.ResolvedPath) {
	m.PutStr(key, p.Path.Text())
	if p.Detached {
		m.PutBool(AttrFileDetached, true)
	}
	if p.Deleted {
		m.PutBool(AttrFileDeleted, true)
	}
	if p.Truncated {
		m.PutBool(AttrFileTruncated, true)
	}
}

// putResult records a syscall result, and for -errno its name as
// error.type.
func putResult(m pcommon.Map, ret int64) {
	m.PutInt(AttrResult, ret)
	if ret < 0 {
		m.PutStr(AttrErrorType, ErrnoName(-ret))
	}
}

func putStrs(m pcommon.Map, key string, vals []string) {
	s := m.PutEmptySlice(key)
	s.EnsureCapacity(len(vals))
	for _, v := range vals {
		s.AppendEmpty().SetStr(v)
	}
}

func putBytesSlice(m pcommon.Map, key string, b []wire.Bytes, s []string) {
	out := m.PutEmptySlice(key)
	for _, v := range b {
		out.AppendEmpty().SetStr(v.Text())
	}
	for _, v := range s {
		out.AppendEmpty().SetStr(v)
	}
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Linux open(2) flags that have the same value on every architecture
// vigil records on; others are shown as a hex remainder.
var openFlagNames = []struct {
	bit  uint64
	name string
}{
	{0o100, "O_CREAT"}, {0o200, "O_EXCL"}, {0o400, "O_NOCTTY"}, {0o1000, "O_TRUNC"},
	{0o2000, "O_APPEND"}, {0o4000, "O_NONBLOCK"}, {0o4000000 | 0o10000, "O_SYNC"}, {0o10000, "O_DSYNC"},
	{0o20000, "O_ASYNC"}, {0o1000000, "O_NOATIME"}, {0o2000000, "O_CLOEXEC"}, {0o10000000, "O_PATH"},
}

// OpenFlagsText spells Linux open flags: the access mode, then the
// architecture-independent flags, then any other bits in hex.
func OpenFlagsText(flags uint64) string {
	parts := []string{[]string{"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"}[flags&3]}
	rest := flags &^ 3
	for _, f := range openFlagNames {
		if rest&f.bit == f.bit {
			parts = append(parts, f.name)
			rest &^= f.bit
		}
	}
	if rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(rest, 16))
	}
	return strings.Join(parts, "|")
}

// ErrnoName is the symbolic name of a Linux errno, or "errno <n>".
func ErrnoName(n int64) string {
	if name, ok := errnoNames[n]; ok {
		return name
	}
	return fmt.Sprintf("errno %d", n)
}

// errnoNames are the generic Linux errno values (asm-generic/errno-base.h
// and the common ones of errno.h), the same on every architecture.
var errnoNames = map[int64]string{
	1: "EPERM", 2: "ENOENT", 3: "ESRCH", 4: "EINTR", 5: "EIO", 6: "ENXIO", 7: "E2BIG",
	8: "ENOEXEC", 9: "EBADF", 10: "ECHILD", 11: "EAGAIN", 12: "ENOMEM", 13: "EACCES",
	14: "EFAULT", 16: "EBUSY", 17: "EEXIST", 18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR",
	21: "EISDIR", 22: "EINVAL", 23: "ENFILE", 24: "EMFILE", 26: "ETXTBSY", 27: "EFBIG",
	28: "ENOSPC", 30: "EROFS", 31: "EMLINK", 32: "EPIPE", 36: "ENAMETOOLONG",
	38: "ENOSYS", 39: "ENOTEMPTY", 40: "ELOOP", 95: "EOPNOTSUPP", 97: "EAFNOSUPPORT",
	98: "EADDRINUSE", 99: "EADDRNOTAVAIL", 101: "ENETUNREACH", 104: "ECONNRESET",
	110: "ETIMEDOUT", 111: "ECONNREFUSED", 113: "EHOSTUNREACH", 115: "EINPROGRESS",
	512: "ERESTARTSYS", 513: "ERESTARTNOINTR", 514: "ERESTARTNOHAND",
}
