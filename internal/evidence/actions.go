package evidence

import (
	"slices"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// Op is what a run did to an object, in the terms the capability surface,
// vigil diff and vigil check --policy share. One kernel event can be
// several actions (an open for read and write is a read and a write).
type Op string

// The operations. File operations name a path; network operations an
// endpoint.
const (
	OpRead     Op = "read"     // opened for reading (also io_uring opens)
	OpWrite    Op = "write"    // opened for writing, creating, truncating or appending
	OpCreate   Op = "create"   // created by an open (Created; O_CREAT in open events without it), or made by mknod
	OpDelete   Op = "delete"   // unlink, unlinkat, rmdir
	OpMkdir    Op = "mkdir"    // mkdir, mkdirat
	OpRename   Op = "rename"   // the old name (Action.To holds the new one)
	OpLink     Op = "link"     // a hard or symbolic link's new name
	OpChmod    Op = "chmod"    // a mode change
	OpChown    Op = "chown"    // an owner change
	OpTruncate Op = "truncate" // truncate, ftruncate
	OpExec     Op = "exec"     // the program the kernel ran
	OpConnect  Op = "connect"  // a connect's destination
	OpSend     Op = "send"     // a sendto/sendmsg destination
	OpBind     Op = "bind"     // a bound local address
	OpListen   Op = "listen"   // a listening local address
)

// Ops lists every Op in a fixed order.
var Ops = []Op{OpRead, OpWrite, OpCreate, OpDelete, OpMkdir, OpRename, OpLink,
	OpChmod, OpChown, OpTruncate, OpExec, OpConnect, OpSend, OpBind, OpListen}

// IsNetwork reports whether op acts on an endpoint rather than a path.
func (op Op) IsNetwork() bool {
	return op == OpConnect || op == OpSend || op == OpBind || op == OpListen
}

// OpKinds are the kernel event kinds an Op can come from; a record that
// does not cover one of them cannot show every action of that Op. Every
// Op an io_uring request can perform (ioUringUnrecorded) lists io_uring:
// where its hook is not attached, those requests go unseen.
var OpKinds = map[Op][]wire.Kind{
	OpRead:     {wire.KindOpen, wire.KindIOUring},
	OpWrite:    {wire.KindOpen, wire.KindIOUring},
	OpCreate:   {wire.KindOpen, wire.KindIOUring, wire.KindMknod},
	OpDelete:   {wire.KindUnlink, wire.KindRmdir, wire.KindIOUring},
	OpMkdir:    {wire.KindMkdir, wire.KindIOUring},
	OpRename:   {wire.KindRename, wire.KindIOUring},
	OpLink:     {wire.KindLink, wire.KindSymlink, wire.KindIOUring},
	OpChmod:    {wire.KindChmod},
	OpChown:    {wire.KindChown},
	OpTruncate: {wire.KindTruncate, wire.KindIOUring},
	OpExec:     {wire.KindExec, wire.KindExecFailed},
	OpConnect:  {wire.KindConnect, wire.KindIOUring},
	OpSend:     {wire.KindSend, wire.KindIOUring},
	OpBind:     {wire.KindBind, wire.KindIOUring},
	OpListen:   {wire.KindListen, wire.KindIOUring},
}

// Action is one thing a kernel event says the run did.
type Action struct {
	Op Op
	// Path is the object of a file operation or exec: the kernel's
	// resolved path where it resolved one, otherwise the name joined to
	// the directory the kernel resolved it against; lexically cleaned.
	Path wire.Bytes
	// To is a rename's new name.
	To wire.Bytes
	// Endpoint is the address of a network operation.
	Endpoint Endpoint
	// Failed: the call returned an error (or, for a send, a negative
	// result); the action was attempted, not done. A connect in progress
	// (-EINPROGRESS) is not failed.
	Failed bool
}

// Object is the action's object as one string: the path, or the endpoint.
func (a Action) Object() string {
	if a.Op.IsNetwork() {
		return a.Endpoint.String()
	}
	return string(a.Path)
}

// Objects are what the action is judged on: its object, and for a
// rename also the new name.
func (a Action) Objects() []string {
	if a.Op == OpRename {
		return []string{string(a.Path), string(a.To)}
	}
	return []string{a.Object()}
}

// String renders an endpoint as family:addr:port ("unix:PATH" for unix
// sockets, "inet6:[addr]:port" for IPv6).
func (e Endpoint) String() string {
	switch e.Family {
	case "unix":
		return "unix:" + string(e.Addr)
	case "inet6":
		return "inet6:[" + string(e.Addr) + "]:" + strconv.Itoa(int(e.Port))
	}
	return e.Family + ":" + string(e.Addr) + ":" + strconv.Itoa(int(e.Port))
}

const einprogress = -115

// kindOp is the Op of the kinds that map to one Op by kind alone.
var kindOp = map[wire.Kind]Op{
	wire.KindUnlink: OpDelete, wire.KindRmdir: OpDelete, wire.KindMkdir: OpMkdir,
	wire.KindMknod: OpCreate, wire.KindChmod: OpChmod, wire.KindChown: OpChown,
	wire.KindTruncate: OpTruncate, wire.KindConnect: OpConnect, wire.KindSend: OpSend,
	wire.KindBind: OpBind, wire.KindListen: OpListen,
}

// Actions appends to out what e says the run did. Events that are no
// action on an object (fork, exit, cgroup moves, io_uring completions other
// than opens and file-tree requests with their names) append nothing.
func Actions(e *wire.Kernel, out []Action) []Action {
	switch {
	case e.Open != nil:
		o := e.Open
		if o.File == nil && o.Syscall == "open_by_handle_at" {
			return out // no name to act on: Unrecorded counts it
		}
		if o.Ret < 0 || o.File == nil {
			return appendOpen(out, namePath(o.Name), true, o.Access, o.Create, o.Truncate, o.Append)
		}
		create := o.Create
		if o.Created != nil {
			// The kernel's word: the open created the file, or found it.
			create = *o.Created
		}
		return appendOpen(out, o.File.Path, false, o.Access, create, o.Truncate, o.Append)
	case e.IOUring != nil:
		if u := e.IOUring; u.File != nil && u.Res >= 0 {
			// The open's flags are not decoded: whether it created its
			// file is the kernel's word, when the event has it.
			created := u.Created != nil && *u.Created
			return appendOpen(out, u.File.Path, false, u.Access, created, false, false)
		}
		if a, ok := ringFileOp(e.IOUring); ok {
			return append(out, a)
		}
	case e.Exec != nil:
		return append(out, Action{Op: OpExec, Path: e.Exec.File.Path})
	case e.ExecFailed != nil:
		return append(out, Action{Op: OpExec, Path: namePath(e.ExecFailed.Name), Failed: true})
	case e.FileOp != nil:
		if a, ok := fileOpAction(e.Kind, e.FileOp); ok {
			return append(out, a)
		}
	case e.Net != nil:
		n := e.Net
		a := Action{Op: kindOp[e.Kind], Endpoint: Endpoint{Family: n.Family, Addr: n.Addr, Port: n.Port}, Failed: n.Ret < 0}
		if a.Op == OpConnect {
			a.Failed = n.Ret < 0 && n.Ret != einprogress
		}
		if a.Op == "" {
			return out
		}
		return append(out, a)
	}
	return out
}

// fileOpAction is the action of a file-tree change of kind k.
func fileOpAction(k wire.Kind, f *wire.FileOp) (Action, bool) {
	a := Action{Op: kindOp[k], Path: objectPath(f), Failed: f.Ret < 0}
	switch k {
	case wire.KindRename:
		if f.NewName == nil {
			return a, false
		}
		a.Op, a.To = OpRename, namePath(*f.NewName)
	case wire.KindLink, wire.KindSymlink:
		if f.NewName == nil {
			return a, false
		}
		a.Op, a.Path = OpLink, namePath(*f.NewName)
	}
	return a, a.Op != ""
}

// ringFileKinds are the io_uring file-tree requests, by the kind of the
// syscall each stands for.
var ringFileKinds = map[string]wire.Kind{
	"unlinkat": wire.KindUnlink, "mkdirat": wire.KindMkdir, "renameat": wire.KindRename,
	"linkat": wire.KindLink, "symlinkat": wire.KindSymlink,
}

// ringFileOp is the action of an io_uring file-tree request whose names
// the record has, as the syscall's would be. A relative name is no path:
// the capture cannot tell the directory the kernel resolved it against
// (the request's descriptor can be pointed elsewhere before the request
// runs, or before it completes), so a request whose action needs one is
// Unrecorded.
func ringFileOp(u *wire.IOUring) (Action, bool) {
	k, ok := ringFileKinds[wire.IOUringOp(u.Opcode)]
	if !ok {
		return Action{}, false
	}
	abs := func(n *wire.Name) bool {
		return n != nil && !n.Missing && len(n.Requested) > 0 && n.Requested[0] == '/'
	}
	// The names the action is on: the new one of a link, both of a
	// rename, the only one otherwise.
	switch k {
	case wire.KindLink, wire.KindSymlink:
		ok = abs(u.NewName)
	case wire.KindRename:
		ok = abs(u.Name) && abs(u.NewName)
	default:
		ok = abs(u.Name)
	}
	if !ok {
		return Action{}, false
	}
	return fileOpAction(k, &wire.FileOp{Name: u.Name, NewName: u.NewName, Target: u.Target, Ret: u.Res})
}

func appendOpen(out []Action, p wire.Bytes, failed bool, access string, create, truncate, appendMode bool) []Action {
	if access == wire.AccessRead || access == wire.AccessReadWrite {
		out = append(out, Action{Op: OpRead, Path: p, Failed: failed})
	}
	if access == wire.AccessWrite || access == wire.AccessReadWrite || create || truncate || appendMode {
		out = append(out, Action{Op: OpWrite, Path: p, Failed: failed})
	}
	if create {
		out = append(out, Action{Op: OpCreate, Path: p, Failed: failed})
	}
	return out
}

// ioUringUnrecorded are the io_uring operations that act on an object
// the capture does not decode (a path or address passed in the request),
// by the Op they perform. Opens are decoded when they succeed, and
// file-tree requests when their names were kept and are absolute; others
// name nothing. A connect's address is not recorded: the socket's peer at
// completion can be another than the one it connected to (a completion
// can be deferred while the workload reconnects the socket), and where
// the kernel keeps its copy of the request's address differs between
// kernels.
var ioUringUnrecorded = map[string][]Op{
	"unlinkat": {OpDelete}, "renameat": {OpRename}, "mkdirat": {OpMkdir},
	"symlinkat": {OpLink}, "linkat": {OpLink}, "ftruncate": {OpTruncate},
	"connect": {OpConnect}, "bind": {OpBind}, "listen": {OpListen},
	// A send on a connected socket has no destination of its own; one
	// on an unconnected socket has one that is not recorded.
	"send": {OpSend}, "sendmsg": {OpSend}, "send_zc": {OpSend}, "sendmsg_zc": {OpSend},
}

// IOUringMay says whether an io_uring request can perform op: opens (read,
// write, create) and the operations of ioUringUnrecorded.
func IOUringMay(op Op) bool {
	return slices.Contains(OpKinds[op], wire.KindIOUring)
}

// Unrecorded says what e did that the record cannot show as Actions: what
// names the operation ("io_uring unlinkat", "open_by_handle_at"; "" when
// there is nothing), ops are the Ops it may have performed on an object
// the capture does not name (an io_uring operation whose arguments it
// does not decode; an io_uring open that failed, went to the fixed-file
// table or was recorded before opens said whether they created their
// file; an open by handle without a file), failed says it failed (an
// attempt), and unknown that its io_uring opcode is one vigil cannot
// name (it may have done anything). Other events' actions are all in
// Actions.
func Unrecorded(e *wire.Kernel) (what string, ops []Op, failed, unknown bool) {
	if o := e.Open; o != nil {
		if o.File == nil && o.Syscall == "open_by_handle_at" {
			// A handle names no path: a failed one (or one whose file
			// was not resolved) tried a file the record cannot show.
			return o.Syscall, []Op{OpRead, OpWrite, OpCreate}, o.Ret < 0, false
		}
		return "", nil, false, false
	}
	u := e.IOUring
	if u == nil {
		return "", nil, false, false
	}
	// The opcode, not the op text, says what the request did (verify
	// holds op to the opcode's name).
	op := wire.IOUringOp(u.Opcode)
	what = "io_uring " + op
	failed = u.Res < 0 && !(op == "connect" && u.Res == einprogress)
	switch {
	case op == "openat" || op == "openat2":
		switch {
		case failed || u.File == nil:
			return what, []Op{OpRead, OpWrite, OpCreate}, failed, false
		case u.Created == nil:
			// Recorded before opens said whether they created their
			// file: a creation would not show.
			return what, []Op{OpCreate}, false, false
		}
		return "", nil, false, false
	case strings.HasPrefix(op, "op_"):
		return what, nil, failed, true
	}
	if _, ok := ringFileOp(u); ok {
		return "", nil, false, false // the names are in Actions
	}
	if ops = ioUringUnrecorded[op]; ops == nil {
		return "", nil, false, false
	}
	return what, ops, failed, false
}
