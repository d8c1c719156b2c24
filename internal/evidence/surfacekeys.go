package evidence

import (
	"encoding/binary"
	"fmt"

	"vigil/internal/wire"
)

// The surface's renames and endpoints live in the path sets too, each as
// one key whose byte order is the order the surface lists them in, so
// that they are held once, spilled, merged and read back exactly as paths
// are: a run that renames or connects to millions of distinct names costs
// no more memory than one that opens them.
//
// A key is its fields in order, each but the last escaped (0x00 becomes
// 0x00 0xff) and ended by 0x00 0x01: byte order of keys is then the order
// of the fields compared one after another, whatever bytes they hold (a
// name from a crafted archive may hold a NUL), and a key splits back into
// its fields one way only.

// EndpointList is one of the capability surface's lists of endpoints, in
// the order the document has them.
type EndpointList int

// The surface's endpoint lists.
const (
	ListNetwork EndpointList = iota
	ListNetworkSent
	ListNetworkLocal
	// NumEndpointLists is how many lists there are.
	NumEndpointLists = iota
)

// The sets of the path sets that hold keys, after the path lists.
const (
	keyRenamed  = NumPathLists
	keyEndpoint = NumPathLists + 1 // + EndpointList
	setRenamed  = 1 << keyRenamed
)

func endpointSet(l EndpointList) uint16 { return 1 << (keyEndpoint + int(l)) }

// Endpoints is the list l of s.
func (s *CapabilitySurface) Endpoints(l EndpointList) []Endpoint {
	return *s.endpointFields()[l]
}

func (s *CapabilitySurface) endpointFields() [NumEndpointLists]*[]Endpoint {
	return [NumEndpointLists]*[]Endpoint{&s.Network, &s.NetworkSent, &s.NetworkLocal}
}

// appendField appends f escaped and ended.
func appendField(b []byte, f string) []byte {
	for i := 0; i < len(f); i++ {
		b = append(b, f[i])
		if f[i] == 0 {
			b = append(b, 0xff)
		}
	}
	return append(b, 0, 1)
}

// cutField takes the first field off k.
func cutField(k string) (field, rest string, ok bool) {
	var b []byte
	for i := 0; i < len(k); i++ {
		if k[i] != 0 {
			if b != nil {
				b = append(b, k[i])
			}
			continue
		}
		if i+1 >= len(k) {
			return "", "", false
		}
		switch k[i+1] {
		case 0xff:
			if b == nil {
				b = append(make([]byte, 0, len(k)), k[:i]...)
			}
			b = append(b, 0)
			i++
		case 1:
			if b == nil {
				return k[:i], k[i+2:], true
			}
			return string(b), k[i+2:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func appendRenameKey(b []byte, r Rename) []byte {
	return append(appendField(b, string(r.From)), r.To...)
}

func appendEndpointKey(b []byte, e Endpoint) []byte {
	b = appendField(appendField(b, e.Family), string(e.Addr))
	return binary.BigEndian.AppendUint16(b, e.Port)
}

func renameOfKey(k wire.Bytes) (Rename, error) {
	from, to, ok := cutField(string(k))
	if !ok {
		return Rename{}, fmt.Errorf("evidence: bad rename key %q", k)
	}
	return Rename{From: wire.Bytes(from), To: wire.Bytes(to)}, nil
}

func endpointOfKey(k wire.Bytes) (Endpoint, error) {
	family, rest, ok := cutField(string(k))
	var addr string
	if ok {
		addr, rest, ok = cutField(rest)
	}
	if !ok || len(rest) != 2 {
		return Endpoint{}, fmt.Errorf("evidence: bad endpoint key %q", k)
	}
	return Endpoint{Family: family, Addr: wire.Bytes(addr), Port: binary.BigEndian.Uint16([]byte(rest))}, nil
}

// EachSurfaceRename calls emit with every rename of the surface, in the
// surface's order, reading back what a scratch store holds; the rename's
// bytes are valid only during the call. It ends the fold, and stops at
// the first error emit or the store returns.
func (d *Digest) EachSurfaceRename(emit func(Rename) error) error {
	return d.eachKey(keyRenamed, func(k wire.Bytes) error {
		r, err := renameOfKey(k)
		if err != nil {
			return err
		}
		return emit(r)
	})
}

// EachSurfaceEndpoint calls emit with every endpoint of the surface's
// list l, as EachSurfaceRename does renames.
func (d *Digest) EachSurfaceEndpoint(l EndpointList, emit func(Endpoint) error) error {
	if l < 0 || l >= NumEndpointLists {
		panic(fmt.Sprintf("evidence: no endpoint list %d", l))
	}
	return d.eachKey(keyEndpoint+int(l), func(k wire.Bytes) error {
		e, err := endpointOfKey(k)
		if err != nil {
			return err
		}
		return emit(e)
	})
}

func (d *Digest) eachKey(set int, emit func(wire.Bytes) error) error {
	if d.noSurface {
		panic("evidence: the surface of a digest made without it")
	}
	d.seal()
	d.surface.paths.seal()
	return d.surface.paths.each(set, emit)
}

// hasLists reports whether s has any list of its own (a streamed bundle's
// surface has none: its digest gives them).
func (s *CapabilitySurface) hasLists() bool {
	for _, f := range s.pathFields() {
		if *f != nil {
			return true
		}
	}
	for _, f := range s.endpointFields() {
		if *f != nil {
			return true
		}
	}
	return s.FilesRenamed != nil
}
