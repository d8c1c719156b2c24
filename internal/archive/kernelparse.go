package archive

import (
	"math"
	"unicode/utf8"
	"unsafe"

	"vigil/internal/wire"
)

// parseCanonicalKernel reads a kernel line laid out exactly as
// appendKernel writes it, for the payloads that make up nearly every
// archive: open, exec, fork, exit, file operations (unlink, rename,
// mkdir...) and socket calls, with the parts they lack. Anything else, and
// any line it does not recognise, gives false, and the caller decodes with
// encoding/json instead.
//
// It accepts only the bytes appendKernel writes for the event it reads,
// so a line it accepts needs no re-encoding to be proven canonical: keys
// are literals in appendKernel's order, a key appendKernel leaves out when
// its value is zero or false is refused with that value, numbers are in
// range and written without leading zeros or "-0", and strings are
// accepted only where they need no escape (printable ASCII other than
// ", \, <, >, & and valid UTF-8 other than U+2028 and U+2029), which is
// where appendString writes them as they are. FuzzParseCanonicalKernel
// holds this: any line it accepts re-encodes to itself. Strings are views
// of arena memory, never written again.
func parseCanonicalKernel(line []byte, e *wire.Kernel, a *lineArena) bool {
	p := kparser{b: line, a: a, ok: true}
	p.lit(`{"seq":`)
	e.Seq = p.u64()
	p.lit(`,"ts_ns":`)
	e.TimeNS = p.u64()
	p.lit(`,"kind":`)
	e.Kind = wire.Kind(p.name())
	p.lit(`,"pid":`)
	e.PID = p.u32()
	p.lit(`,"tid":`)
	e.TID = p.u32()
	p.lit(`,"comm":`)
	e.Comm = wire.Bytes(p.name())
	p.lit(`,"cgroup_id":`)
	e.CgroupID = p.u64()
	p.lit(`,"hook":`)
	e.Hook = p.name()
	e.IOWorker = p.opt(`,"io_worker":true`)
	switch {
	case p.opt(`,"open":{`):
		e.Open = p.open()
	case p.opt(`,"exec":{"file":`):
		e.Exec = p.exec()
	case p.opt(`,"fork":{"parent_pid":`):
		e.Fork = p.fork()
	case p.opt(`,"file_op":{`):
		e.FileOp = p.fileOp()
	case p.opt(`,"net":{"family":`):
		e.Net = p.net()
	case p.opt(`,"exit":{"code":`):
		x := slot(&p.a.exits)
		x.Code = p.i32()
		p.lit(`,"signal":`)
		x.Signal = p.i32()
		p.lit(`,"group_dead":`)
		x.GroupDead = p.boolean()
		p.lit(`}`)
		e.Exit = x
	default:
		return false
	}
	if p.opt(`,"incomplete":[`) {
		for {
			e.Incomplete = append(e.Incomplete, p.name())
			if !p.ok || !p.opt(`,`) {
				break
			}
		}
		p.lit(`]`)
	}
	p.lit(`}`)
	return p.ok && p.i == len(p.b)
}

func (p *kparser) open() *wire.Open {
	x := slot(&p.a.opens)
	if p.opt(`"file":`) {
		x.File = p.resolved()
		p.lit(`,`)
	}
	p.lit(`"name":`)
	p.nameObj(&x.Name)
	p.lit(`,"dirfd":`)
	x.Dirfd = p.i32()
	p.lit(`,"flags":`)
	x.Flags = p.u64()
	p.lit(`,"mode":`)
	x.Mode = p.u64()
	p.lit(`,"ret":`)
	x.Ret = p.i64()
	p.lit(`,"access":`)
	x.Access = p.name()
	p.lit(`,"create":`)
	x.Create = p.boolean()
	p.lit(`,"truncate":`)
	x.Truncate = p.boolean()
	p.lit(`,"append":`)
	x.Append = p.boolean()
	p.lit(`,"syscall":`)
	x.Syscall = p.name()
	if p.opt(`,"ino":`) {
		x.Ino = p.nonzero(p.u64())
	}
	if p.opt(`,"dev":`) {
		x.Dev = uint32(p.nonzero(uint64(p.u32())))
	}
	if p.opt(`,"created":`) {
		x.Created = wire.BoolRef(p.boolean())
	}
	p.lit(`}`)
	return x
}

func (p *kparser) fileOp() *wire.FileOp {
	x := slot(&p.a.fileOps)
	if p.opt(`"file":`) {
		x.File = p.resolved()
		p.lit(`,`)
	}
	if p.opt(`"name":`) {
		x.Name = slot(&p.a.nameSlab)
		p.nameObj(x.Name)
		p.lit(`,`)
	}
	if p.opt(`"new_name":`) {
		x.NewName = slot(&p.a.nameSlab)
		p.nameObj(x.NewName)
		p.lit(`,`)
	}
	if p.opt(`"target":`) {
		t := slot(&p.a.targets)
		*t = wire.Bytes(p.str())
		x.Target = t
		p.lit(`,`)
	}
	for _, f := range []struct {
		key string
		v   **uint32
	}{{`"mode":`, &x.Mode}, {`"uid":`, &x.UID}, {`"gid":`, &x.GID}} {
		if p.opt(f.key) {
			v := slot(&p.a.u32s)
			*v = p.u32()
			*f.v = v
			p.lit(`,`)
		}
	}
	if p.opt(`"length":`) {
		v := slot(&p.a.i64s)
		*v = p.i64()
		x.Length = v
		p.lit(`,`)
	}
	if p.opt(`"flags":`) {
		x.Flags = p.nonzero(p.u64())
		p.lit(`,`)
	}
	p.lit(`"syscall":`)
	x.Syscall = p.name()
	p.lit(`,"ret":`)
	x.Ret = p.i64()
	p.lit(`}`)
	return x
}

func (p *kparser) net() *wire.Net {
	x := slot(&p.a.nets)
	x.Family = p.name()
	p.lit(`,"addr":`)
	x.Addr = wire.Bytes(p.str())
	p.lit(`,"port":`)
	v := p.u64()
	if v > math.MaxUint16 {
		p.ok = false
	}
	x.Port = uint16(v)
	p.lit(`,"addr_from":`)
	x.AddrFrom = p.name()
	p.lit(`,"sock_type":`)
	x.SockType = p.name()
	p.lit(`,"fd":`)
	x.Fd = p.i32()
	p.lit(`,"syscall":`)
	x.Syscall = p.name()
	p.lit(`,"ret":`)
	x.Ret = p.i64()
	p.lit(`}`)
	return x
}

func (p *kparser) exec() *wire.Exec {
	x := slot(&p.a.execs)
	x.File = *p.resolved()
	p.lit(`,"filename":`)
	x.Filename = wire.Bytes(p.str())
	p.lit(`,"via":`)
	x.Via = p.name()
	p.lit(`,"argv":[`)
	x.Argv = []wire.Bytes{}
	for p.ok && !p.opt(`]`) {
		if len(x.Argv) > 0 {
			p.lit(`,`)
		}
		x.Argv = append(x.Argv, wire.Bytes(p.str()))
	}
	p.lit(`,"argc":`)
	x.Argc = p.u32()
	x.ArgvTruncated = p.opt(`,"argv_truncated":true`)
	p.lit(`,"ino":`)
	x.Ino = p.u64()
	p.lit(`,"dev":`)
	x.Dev = p.u32()
	if p.opt(`,"old_tid":`) {
		x.OldTID = uint32(p.nonzero(uint64(p.u32())))
	}
	p.lit(`}`)
	return x
}

func (p *kparser) fork() *wire.Fork {
	x := slot(&p.a.forks)
	x.ParentPID = p.u32()
	p.lit(`,"parent_tid":`)
	x.ParentTID = p.u32()
	p.lit(`,"child_pid":`)
	x.ChildPID = p.u32()
	p.lit(`,"child_tid":`)
	x.ChildTID = p.u32()
	p.lit(`,"thread":`)
	x.Thread = p.boolean()
	x.Entered = p.opt(`,"entered":true`)
	x.IOWorker = p.opt(`,"io_worker":true`)
	p.lit(`}`)
	return x
}

func (p *kparser) resolved() *wire.ResolvedPath {
	r := slot(&p.a.paths)
	p.lit(`{"path":`)
	r.Path = wire.Bytes(p.str())
	r.Detached = p.opt(`,"detached":true`)
	r.Deleted = p.opt(`,"deleted":true`)
	r.Truncated = p.opt(`,"truncated":true`)
	p.lit(`}`)
	return r
}

func (p *kparser) nameObj(n *wire.Name) {
	p.lit(`{"requested":`)
	n.Requested = wire.Bytes(p.str())
	if p.opt(`,"dir":`) {
		n.Dir = p.resolved()
	}
	n.Missing = p.opt(`,"missing":true`)
	n.Truncated = p.opt(`,"truncated":true`)
	p.lit(`}`)
}

// kparser walks one line; after the first mismatch ok is false and every
// further step is a no-op returning zero.
type kparser struct {
	b  []byte
	i  int
	ok bool
	a  *lineArena
}

func (p *kparser) lit(s string) {
	if !p.opt(s) {
		p.ok = false
	}
}

// opt consumes s if the line continues with it.
func (p *kparser) opt(s string) bool {
	if !p.ok || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *kparser) u64() uint64 {
	if !p.ok {
		return 0
	}
	start, v := p.i, uint64(0)
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := uint64(p.b[p.i] - '0')
		if v > (math.MaxUint64-d)/10 {
			p.ok = false
			return 0
		}
		v = v*10 + d
		p.i++
	}
	if p.i == start || (p.b[start] == '0' && p.i-start > 1) {
		p.ok = false // no digits, or a leading zero
	}
	return v
}

// nonzero is v, for a key appendKernel writes only when its value is not
// zero.
func (p *kparser) nonzero(v uint64) uint64 {
	if v == 0 {
		p.ok = false
	}
	return v
}

func (p *kparser) u32() uint32 {
	v := p.u64()
	if v > math.MaxUint32 {
		p.ok = false
	}
	return uint32(v)
}

func (p *kparser) i64() int64 {
	neg := p.ok && p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	v := p.u64()
	if v > math.MaxInt64 || (neg && v == 0) {
		p.ok = false // out of range (math.MinInt64 too: rare enough), or -0
	}
	if neg {
		return -int64(v)
	}
	return int64(v)
}

func (p *kparser) i32() int32 {
	v := p.i64()
	if v < math.MinInt32 || v > math.MaxInt32 {
		p.ok = false
	}
	return int32(v)
}

func (p *kparser) boolean() bool {
	if p.opt("true") {
		return true
	}
	p.lit("false")
	return false
}

// raw is the content of a string that appendString writes as it is; a
// byte it would escape (or invalid UTF-8, or U+2028/U+2029) ends the fast
// path.
func (p *kparser) raw() []byte {
	if !p.opt(`"`) {
		p.ok = false
		return nil
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if plainJSON[c] {
			p.i++
			continue
		}
		if c == '"' {
			p.i++
			return p.b[start : p.i-1]
		}
		if c < utf8.RuneSelf {
			break // escaped in the canonical encoding
		}
		r, size := utf8.DecodeRune(p.b[p.i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			break
		}
		p.i += size
	}
	p.ok = false
	return nil
}

// str is a string copied into the arena.
func (p *kparser) str() string { return p.a.str(p.raw()) }

// name is a short string that repeats across lines (kind, hook, comm,
// access, syscall, via), interned.
func (p *kparser) name() string {
	b := p.raw()
	if s, ok := p.a.names[string(b)]; ok {
		return s
	}
	s := p.a.str(b)
	if p.a.names == nil {
		p.a.names = map[string]string{}
	}
	if len(p.a.names) < maxInterned {
		p.a.names[s] = s
	}
	return s
}

// maxInterned bounds the interning table: a line of distinct comm names
// must not grow it without limit.
const maxInterned = 4096

// lineArena hands out strings and payloads carved from shared chunks, so
// that a batch of lines costs a few allocations rather than several per
// line. What it handed out is never written again.
type lineArena struct {
	buf   []byte
	names map[string]string
	opens []wire.Open
	execs []wire.Exec
	forks []wire.Fork
	exits []wire.Exit
	paths []wire.ResolvedPath

	fileOps  []wire.FileOp
	nameSlab []wire.Name
	nets     []wire.Net
	targets  []wire.Bytes
	u32s     []uint32
	i64s     []int64
}

// slot returns a zeroed element carved out of *slab.
func slot[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, 256)
	}
	*slab = (*slab)[:len(*slab)+1]
	return &(*slab)[len(*slab)-1]
}

const arenaChunk = 256 << 10

func (a *lineArena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, max(arenaChunk, len(b)))
	}
	i := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[i], len(b))
}
