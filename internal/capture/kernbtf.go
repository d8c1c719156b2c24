//go:build linux

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// rawBTF is a read-only view of a BTF blob (the kernel's vmlinux BTF) that
// finds types without decoding the whole graph: one pass records where each
// type starts, and only the types asked for are ever decoded. Decoding all
// of vmlinux (over 100,000 types) and indexing it by name is what makes a
// general-purpose BTF parser slow to start.
type rawBTF struct {
	bo      binary.ByteOrder
	types   []byte
	strs    []byte
	offsets []uint32 // offsets[id] is where type id starts in types; id 0 is void
	// structs maps each wanted name to the id of the first complete struct
	// or union of that name.
	structs map[string]uint32
	release func()
}

// BTF kinds (include/uapi/linux/btf.h).
const (
	kindInt      = 1
	kindPtr      = 2
	kindArray    = 3
	kindStruct   = 4
	kindUnion    = 5
	kindEnum     = 6
	kindFwd      = 7
	kindTypedef  = 8
	kindVolatile = 9
	kindConst    = 10
	kindRestrict = 11
	kindFunc     = 12
	kindProto    = 13
	kindVar      = 14
	kindDatasec  = 15
	kindFloat    = 16
	kindDeclTag  = 17
	kindTypeTag  = 18
	kindEnum64   = 19
)

const btfMagic = 0xeb9f

// openKernelBTF maps path (the kernel's BTF), indexes its types and finds
// the structs named in want.
func openKernelBTF(path string, want map[string]bool) (*rawBTF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Populating the mapping at once costs far less than faulting in its
	// pages one by one during the scan.
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	r, err := parseRawBTF(data, want)
	if err != nil {
		unix.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.release = func() { unix.Munmap(data) }
	return r, nil
}

func parseRawBTF(data []byte, want map[string]bool) (*rawBTF, error) {
	if len(data) < 24 {
		return nil, errors.New("BTF shorter than its header")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if bo.Uint16(data) != btfMagic {
		bo = binary.BigEndian
		if bo.Uint16(data) != btfMagic {
			return nil, errors.New("not BTF (bad magic)")
		}
	}
	hdrLen := uint64(bo.Uint32(data[4:]))
	typeOff, typeLen := uint64(bo.Uint32(data[8:])), uint64(bo.Uint32(data[12:]))
	strOff, strLen := uint64(bo.Uint32(data[16:])), uint64(bo.Uint32(data[20:]))
	if hdrLen+typeOff+typeLen > uint64(len(data)) || hdrLen+strOff+strLen > uint64(len(data)) {
		return nil, errors.New("BTF sections exceed the file")
	}
	r := &rawBTF{
		bo:      bo,
		types:   data[hdrLen+typeOff : hdrLen+typeOff+typeLen],
		strs:    data[hdrLen+strOff : hdrLen+strOff+strLen],
		structs: make(map[string]uint32, len(want)),
	}
	r.offsets = make([]uint32, 1, len(r.types)/24)
	for off := 0; off < len(r.types); {
		if off+12 > len(r.types) {
			return nil, errors.New("truncated BTF type")
		}
		r.offsets = append(r.offsets, uint32(off))
		info := bo.Uint32(r.types[off+4:])
		vlen := int(info & 0xffff)
		kind := (info >> 24) & 0x1f
		if (kind == kindStruct || kind == kindUnion) && vlen > 0 {
			r.match(bo.Uint32(r.types[off:]), uint32(len(r.offsets)-1), want)
		}
		extra := 0
		switch kind {
		case kindInt, kindVar, kindDeclTag:
			extra = 4
		case kindArray:
			extra = 12
		case kindStruct, kindUnion, kindDatasec, kindEnum64:
			extra = 12 * vlen
		case kindEnum, kindProto:
			extra = 8 * vlen
		case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict, kindFunc, kindFloat, kindTypeTag:
		default:
			return nil, fmt.Errorf("unknown BTF kind %d", (info>>24)&0x1f)
		}
		off += 12 + extra
	}
	return r, nil
}

func (r *rawBTF) close() {
	if r.release != nil {
		r.release()
	}
}

// btfType is one decoded btf_type header.
type btfType struct {
	name       string
	kind       int
	vlen       int
	kflag      bool
	sizeOrType uint32
	body       []byte // kind-specific data after the header
}

func (r *rawBTF) str(off uint32) string {
	if int(off) >= len(r.strs) {
		return ""
	}
	s := r.strs[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

func (r *rawBTF) typ(id uint32) (btfType, error) {
	if id == 0 || int(id) >= len(r.offsets) {
		return btfType{}, fmt.Errorf("BTF type id %d out of range", id)
	}
	off := r.offsets[id]
	end := uint32(len(r.types))
	if int(id)+1 < len(r.offsets) {
		end = r.offsets[id+1]
	}
	b := r.types[off:end]
	info := r.bo.Uint32(b[4:])
	return btfType{
		name:       r.str(r.bo.Uint32(b)),
		kind:       int((info >> 24) & 0x1f),
		vlen:       int(info & 0xffff),
		kflag:      info>>31 != 0,
		sizeOrType: r.bo.Uint32(b[8:]),
		body:       b[12:],
	}, nil
}

// match records id under its name if the name is wanted and not yet seen.
func (r *rawBTF) match(nameOff, id uint32, want map[string]bool) {
	if nameOff == 0 || int(nameOff) >= len(r.strs) {
		return
	}
	s := r.strs[nameOff:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if want[string(s)] {
		if _, dup := r.structs[string(s)]; !dup {
			r.structs[string(s)] = id
		}
	}
}

// resolve skips typedefs and qualifiers.
func (r *rawBTF) resolve(id uint32) (uint32, btfType, error) {
	for range 32 {
		if id == 0 {
			return 0, btfType{}, nil
		}
		t, err := r.typ(id)
		if err != nil {
			return 0, t, err
		}
		switch t.kind {
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
			id = t.sizeOrType
			continue
		}
		return id, t, nil
	}
	return 0, btfType{}, fmt.Errorf("BTF type %d: typedef chain too long", id)
}

// btfMember is one member of a struct or union.
type btfMember struct {
	name   string
	typeID uint32
	bits   uint32 // offset in bits from the start of the composite
}

func (r *rawBTF) members(t btfType) []btfMember {
	ms := make([]btfMember, 0, t.vlen)
	for i := 0; i < t.vlen && 12*i+12 <= len(t.body); i++ {
		m := t.body[12*i:]
		off := r.bo.Uint32(m[8:])
		if t.kflag {
			off &= 0xffffff
		}
		ms = append(ms, btfMember{name: r.str(r.bo.Uint32(m)), typeID: r.bo.Uint32(m[4:]), bits: off})
	}
	return ms
}

// member finds name in composite t, looking into anonymous struct and union
// members as C does; the offset is relative to t.
func (r *rawBTF) member(t btfType, name string) (btfMember, bool) {
	for _, m := range r.members(t) {
		if m.name == name {
			return m, true
		}
		if m.name != "" {
			continue
		}
		_, sub, err := r.resolve(m.typeID)
		if err != nil || (sub.kind != kindStruct && sub.kind != kindUnion) {
			continue
		}
		if found, ok := r.member(sub, name); ok {
			found.bits += m.bits
			return found, true
		}
	}
	return btfMember{}, false
}
