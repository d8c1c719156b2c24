package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"unsafe"

	"vigil/internal/event"
)

// Record layout, mirroring bpf/capture.h.
const (
	recFixedSize = 96
	recBodyOff   = 56

	flagTrunc1 = 0x01
	flagTrunc2 = 0x02
	flagFault  = 0x04

	sysOpenat2 = 1
)

// kindByIndex maps the kernel's kind index (VIGIL_KIND_* in
// bpf/capture.h) to event.Kind.
var kindByIndex = []event.Kind{event.KindExec, event.KindFork, event.KindExit, event.KindOpen, event.KindConnect}

// Open flag bits (identical on amd64 and arm64).
const (
	oAccMode = 0o3
	oCreat   = 0o100
	oTrunc   = 0o1000
	oAppend  = 0o2000
	oTmpfile = 0o20000000 // __O_TMPFILE: creates an unnamed file
)

var le = binary.LittleEndian

// decoded is one record plus what the decoder noticed about it.
type decoded struct {
	ev    event.Kernel
	fault bool // a string is missing or partial (read fault or clip)
}

// decodeRecord turns one ring-buffer record into an event. Errors name
// what was wrong with the record.
func decodeRecord(b []byte) (decoded, error) {
	var dec decoder
	var d decoded
	fault, err := dec.decodeInto(&d.ev, b)
	d.fault = fault
	return d, err
}

// decoder carries what lets the reader decode without allocating per
// record: strings are copied into shared chunks, comm names are interned,
// and the per-kind payloads are carved out of slabs. Everything it hands
// out stays valid and is never written again.
type decoder struct {
	arena    []byte
	comms    map[string]string
	execs    []event.Exec
	forks    []event.Fork
	exits    []event.Exit
	opens    []event.Open
	connects []event.Connect
}

const (
	arenaChunk = 64 << 10
	slabSize   = 512
	maxComms   = 4096 // distinct comm names interned; later ones are copied
)

// str copies b into the arena.
func (d *decoder) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(d.arena)-len(d.arena) < len(b) {
		d.arena = make([]byte, 0, max(arenaChunk, len(b)))
	}
	i := len(d.arena)
	d.arena = append(d.arena, b...)
	return unsafe.String(&d.arena[i], len(b))
}

func (d *decoder) comm(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if s, ok := d.comms[string(b)]; ok {
		return s
	}
	s := d.str(b)
	if d.comms == nil {
		d.comms = map[string]string{}
	}
	if len(d.comms) < maxComms {
		d.comms[s] = s
	}
	return s
}

// slot returns a zeroed element carved out of *slab.
func slot[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, slabSize)
	}
	*slab = (*slab)[:len(*slab)+1]
	return &(*slab)[len(*slab)-1]
}

// decodeInto decodes one ring-buffer record into *ev and reports whether a
// string of it is missing or partial: a kernel-side memory read failed, or
// the string did not fit its buffer. Errors name what was wrong with the
// record; *ev is then left as it was.
func (d *decoder) decodeInto(ev *event.Kernel, b []byte) (fault bool, err error) {
	if len(b) < recFixedSize {
		return false, fmt.Errorf("record of %d bytes is shorter than the %d-byte header", len(b), recFixedSize)
	}
	kind := int(b[32])
	if kind >= len(kindByIndex) {
		return false, fmt.Errorf("record has unknown kind %d", kind)
	}
	flags := b[33]
	len1, len2 := int(le.Uint16(b[34:])), int(le.Uint16(b[36:]))
	if recFixedSize+len1+len2 != len(b) {
		return false, fmt.Errorf("record of %d bytes does not match its string lengths %d+%d", len(b), len1, len2)
	}
	raw1 := b[recFixedSize : recFixedSize+len1]
	raw2 := b[recFixedSize+len1 : recFixedSize+len1+len2]
	*ev = event.Kernel{
		Seq:      le.Uint64(b[0:]),
		TimeNS:   le.Uint64(b[8:]),
		CgroupID: le.Uint64(b[16:]),
		PID:      le.Uint32(b[24:]),
		TID:      le.Uint32(b[28:]),
		Kind:     kindByIndex[kind],
		Comm:     d.comm(b[40:56]),
	}
	body := b[recBodyOff:recFixedSize]
	switch ev.Kind {
	case event.KindExec:
		e := slot(&d.execs)
		e.Filename, e.Argv0 = d.str(raw1), d.str(raw2)
		ev.Exec = e
		// event.Exec has no truncation field: a string that filled its
		// buffer is counted with the read faults, never dropped unseen.
		// A full filename buffer holds PATH_MAX-1 bytes, all of any path
		// the kernel accepted; only the "/dev/fd/N/" form execveat
		// builds around such a path can be longer.
		if flags&flagTrunc2 != 0 || flags&flagTrunc1 != 0 && strings.HasPrefix(e.Filename, "/dev/fd/") {
			return true, nil
		}
	case event.KindFork:
		f := slot(&d.forks)
		*f = event.Fork{
			ParentPID: le.Uint32(body[0:]),
			ParentTID: le.Uint32(body[4:]),
			ChildPID:  le.Uint32(body[8:]),
			ChildTID:  le.Uint32(body[12:]),
			Thread:    le.Uint32(body[16:]) != 0,
		}
		ev.Fork = f
	case event.KindExit:
		// task->exit_code is the wait status: code << 8 | signal.
		status := le.Uint32(body[0:])
		x := slot(&d.exits)
		*x = event.Exit{
			Code:      int32(status>>8) & 0xff,
			Signal:    int32(status & 0x7f),
			GroupDead: le.Uint32(body[4:]) != 0,
		}
		ev.Exit = x
	case event.KindOpen:
		o := slot(&d.opens)
		decodeOpen(o, body, d.str(raw1), flags)
		ev.Open = o
		if o.PathTruncated {
			return true, nil
		}
	case event.KindConnect:
		c := slot(&d.connects)
		decodeConnect(c, body, raw1)
		ev.Connect = c
	}
	return flags&flagFault != 0, nil
}

func decodeOpen(o *event.Open, body []byte, path string, flags byte) {
	*o = event.Open{
		Syscall:       "openat",
		Dirfd:         int32(le.Uint32(body[0:])),
		Path:          path,
		Flags:         le.Uint64(body[8:]),
		Mode:          le.Uint64(body[16:]),
		Ret:           int64(le.Uint64(body[24:])),
		PathTruncated: flags&flagFault != 0,
	}
	// A full buffer holds PATH_MAX-1 bytes: all of a path of exactly
	// that length, or the start of a longer one. The kernel accepts only
	// the former, so a successful open was recorded whole.
	if flags&flagTrunc1 != 0 && o.Ret < 0 {
		o.PathTruncated = true
	}
	if le.Uint32(body[4:]) == sysOpenat2 {
		o.Syscall = "openat2"
	}
	switch o.Flags & oAccMode {
	case 0:
		o.Access = event.AccessRead
	case 1:
		o.Access = event.AccessWrite
	default:
		o.Access = event.AccessReadWrite
	}
	o.Create = o.Flags&oCreat != 0 || o.Flags&oTmpfile != 0
	o.Truncate = o.Flags&oTrunc != 0
	o.Append = o.Flags&oAppend != 0
}

func decodeConnect(c *event.Connect, body []byte, unixPath []byte) {
	*c = event.Connect{
		Fd:   int32(le.Uint32(body[0:])),
		Port: le.Uint16(body[6:]),
		Ret:  int64(le.Uint64(body[24:])),
	}
	family := le.Uint16(body[4:])
	addr := body[8:24]
	switch family {
	case 2:
		c.Family = "inet"
		c.Addr = netip.AddrFrom4([4]byte(addr[:4])).String()
	case 10:
		c.Family = "inet6"
		c.Addr = netip.AddrFrom16([16]byte(addr)).String()
	case 1:
		c.Family = "unix"
		c.Addr = unixAddr(unixPath)
	default:
		c.Family = fmt.Sprintf("af_%d", family)
	}
}

// unixAddr renders sun_path: a filesystem path ends at its first NUL; an
// abstract address (leading NUL) is shown as "@name".
func unixAddr(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == 0 {
		return "@" + string(bytes.TrimRight(raw[1:], "\x00"))
	}
	return cString(raw)
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
