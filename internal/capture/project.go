//go:build linux

package capture

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// projectKernelTypes builds, from the kernel's BTF, the few kernel types the
// programs' CO-RE relocations refer to, each reduced to the members the
// programs name (at their real offsets, with their real sizes). CO-RE then
// resolves against this small spec exactly as it would against all of
// vmlinux, at a fraction of the cost: the local types are the object's
// structs (vmlinux_min.h), matched by name with any ___flavour suffix
// removed, as CO-RE matches them.
func projectKernelTypes(path string, spec *ebpf.CollectionSpec) (*btf.Spec, error) {
	roots, err := localStructs(spec)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(roots))
	for n := range roots {
		names[n] = true
	}
	k, err := openKernelBTF(path, names)
	if err != nil {
		return nil, err
	}
	defer k.close()
	p := &projection{k: k, need: map[uint32]map[string]bool{}, seen: map[visitKey]bool{}}
	for name, id := range k.structs {
		for _, local := range roots[name] {
			if err := p.visit(local, id); err != nil {
				return nil, err
			}
		}
	}
	return p.build()
}

// localStructs groups the object's named structs by the kernel name they
// stand for.
func localStructs(spec *ebpf.CollectionSpec) (map[string][]btf.Type, error) {
	if spec.Types == nil {
		return nil, fmt.Errorf("BPF object has no BTF")
	}
	roots := map[string][]btf.Type{}
	for t, err := range spec.Types.All() {
		if err != nil {
			return nil, err
		}
		if s, ok := t.(*btf.Struct); ok && s.Name != "" {
			name, _, _ := strings.Cut(s.Name, "___")
			roots[name] = append(roots[name], s)
		}
	}
	return roots, nil
}

type visitKey struct {
	local  btf.Type
	kernel uint32
}

type projection struct {
	k     *rawBTF
	need  map[uint32]map[string]bool // kernel composite id -> member names
	order []uint32
	seen  map[visitKey]bool
	built map[uint32]btf.Type
}

// visit records which members of kernel composite kid the local composite
// names, and follows them.
func (p *projection) visit(local btf.Type, kid uint32) error {
	key := visitKey{local, kid}
	if p.seen[key] {
		return nil
	}
	p.seen[key] = true
	var members []btf.Member
	switch l := btf.UnderlyingType(local).(type) {
	case *btf.Struct:
		members = l.Members
	case *btf.Union:
		members = l.Members
	default:
		return nil
	}
	kt, err := p.k.typ(kid)
	if err != nil {
		return err
	}
	if p.need[kid] == nil {
		p.need[kid] = map[string]bool{}
		p.order = append(p.order, kid)
	}
	for _, lm := range members {
		if lm.Name == "" {
			if err := p.visit(lm.Type, kid); err != nil {
				return err
			}
			continue
		}
		km, ok := p.k.member(kt, lm.Name)
		if !ok {
			continue // absent in this kernel: CO-RE reports it as such
		}
		p.need[kid][lm.Name] = true
		if err := p.follow(lm.Type, km.typeID); err != nil {
			return err
		}
	}
	return nil
}

// follow descends through pointers and arrays to the composites the local
// type reaches.
func (p *projection) follow(local btf.Type, kid uint32) error {
	rid, rt, err := p.k.resolve(kid)
	if err != nil || rid == 0 {
		return err
	}
	switch l := btf.UnderlyingType(local).(type) {
	case *btf.Pointer:
		if rt.kind == kindPtr {
			return p.follow(l.Target, rt.sizeOrType)
		}
	case *btf.Struct, *btf.Union:
		if rt.kind == kindStruct || rt.kind == kindUnion {
			return p.visit(l, rid)
		}
	case *btf.Array:
		if rt.kind == kindArray && len(rt.body) >= 12 {
			return p.follow(l.Type, p.k.bo.Uint32(rt.body))
		}
	}
	return nil
}

func (p *projection) build() (*btf.Spec, error) {
	p.built = map[uint32]btf.Type{}
	// Create every composite first: pointers may refer to any of them.
	for _, id := range p.order {
		t, err := p.k.typ(id)
		if err != nil {
			return nil, err
		}
		if t.kind == kindUnion {
			p.built[id] = &btf.Union{Name: t.name, Size: t.sizeOrType}
		} else {
			p.built[id] = &btf.Struct{Name: t.name, Size: t.sizeOrType}
		}
	}
	var roots []btf.Type
	for _, id := range p.order {
		t, _ := p.k.typ(id)
		var ms []btf.Member
		for name := range p.need[id] {
			km, _ := p.k.member(t, name)
			typ, err := p.convert(km.typeID, 0)
			if err != nil {
				return nil, err
			}
			ms = append(ms, btf.Member{Name: name, Type: typ, Offset: btf.Bits(km.bits)})
		}
		slices.SortFunc(ms, func(a, b btf.Member) int { return cmp.Compare(a.Offset, b.Offset) })
		switch c := p.built[id].(type) {
		case *btf.Struct:
			c.Members = ms
		case *btf.Union:
			c.Members = ms
		}
		roots = append(roots, p.built[id])
	}
	b, err := btf.NewBuilder(roots, nil)
	if err != nil {
		return nil, err
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		return nil, err
	}
	return btf.LoadSpecFromReader(bytes.NewReader(raw))
}

// convert turns a kernel member type into its projection: composites the
// programs look into are the projected ones, other composites are empty
// shells of the right size, pointers to anything else point to void.
func (p *projection) convert(kid uint32, depth int) (btf.Type, error) {
	if depth > 8 {
		return &btf.Void{}, nil
	}
	rid, rt, err := p.k.resolve(kid)
	if err != nil {
		return nil, err
	}
	if rid == 0 {
		return &btf.Void{}, nil
	}
	if c, ok := p.built[rid]; ok {
		return c, nil
	}
	switch rt.kind {
	case kindInt:
		enc := btf.Unsigned
		if len(rt.body) >= 4 {
			switch (p.k.bo.Uint32(rt.body) >> 24) & 0xf {
			case 1:
				enc = btf.Signed
			case 2:
				enc = btf.Char
			case 4:
				enc = btf.Bool
			}
		}
		return &btf.Int{Name: rt.name, Size: rt.sizeOrType, Encoding: enc}, nil
	case kindEnum, kindEnum64:
		return &btf.Enum{Name: rt.name, Size: rt.sizeOrType}, nil
	case kindPtr:
		target, _, err := p.k.resolve(rt.sizeOrType)
		if err != nil {
			return nil, err
		}
		if c, ok := p.built[target]; ok {
			return &btf.Pointer{Target: c}, nil
		}
		return &btf.Pointer{Target: &btf.Void{}}, nil
	case kindArray:
		if len(rt.body) < 12 {
			return nil, fmt.Errorf("BTF array %d truncated", rid)
		}
		elem, err := p.convert(p.k.bo.Uint32(rt.body), depth+1)
		if err != nil {
			return nil, err
		}
		return &btf.Array{Index: &btf.Int{Name: "int", Size: 4}, Type: elem, Nelems: p.k.bo.Uint32(rt.body[8:])}, nil
	case kindStruct:
		return &btf.Struct{Name: rt.name, Size: rt.sizeOrType}, nil
	case kindUnion:
		return &btf.Union{Name: rt.name, Size: rt.sizeOrType}, nil
	}
	return &btf.Int{Name: rt.name, Size: max(rt.sizeOrType, 1)}, nil
}
