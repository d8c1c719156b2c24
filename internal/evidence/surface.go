package evidence

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"path"
	"strings"
	"unsafe"

	"vigil/internal/wire"
)

// CapabilitySurface is capability-surface.json: what the run did, as sorted
// sets. A path is the kernel's resolved absolute path where the kernel
// resolved one (an opened file, an executable); otherwise it is the name
// the caller passed joined to the directory the kernel resolved it
// against (see wire.Name.Path), with "." and ".." removed lexically so
// that one file has one spelling (a symlinked directory before ".." could
// make that spelling differ from where the kernel went; the events keep
// the name as given). Only calls that succeeded count, except in the two
// *_failures lists.
type CapabilitySurface struct {
	Schema string `json:"schema"` // SurfaceSchema
	RunID  string `json:"run_id"`
	// FilesRead are files opened for reading (read or read_write access).
	FilesRead []wire.Bytes `json:"files_read"`
	// FilesWritten are files opened for writing (write or read_write
	// access, or with create/truncate/append).
	FilesWritten []wire.Bytes `json:"files_written"`
	// FilesCreated are files an open created (the kernel says so, in the
	// event's "created"; for an event without it, an open with O_CREAT,
	// which may have found the file there) and nodes made by mknod.
	FilesCreated []wire.Bytes `json:"files_created"`
	// OpenFailures are names whose open returned an error; they are kept
	// apart so the surface does not claim access that was refused.
	OpenFailures []wire.Bytes `json:"open_failures"`
	// FilesDeleted are names unlinked or removed (rmdir).
	FilesDeleted []wire.Bytes `json:"files_deleted"`
	// DirsCreated are directories made by mkdir.
	DirsCreated []wire.Bytes `json:"dirs_created"`
	// FilesRenamed are rename pairs.
	FilesRenamed []Rename `json:"files_renamed"`
	// LinksCreated are the new names of hard and symbolic links.
	LinksCreated []wire.Bytes `json:"links_created"`
	// ModeChanged are files whose mode or owner was changed.
	ModeChanged []wire.Bytes `json:"mode_changed"`
	// FilesTruncated are files truncated by truncate/ftruncate.
	FilesTruncated []wire.Bytes `json:"files_truncated"`
	// Execs are the programs executed (the kernel's resolved executable).
	Execs []wire.Bytes `json:"execs"`
	// ExecFailures are names whose execve failed.
	ExecFailures []wire.Bytes `json:"exec_failures"`
	// Network are the endpoints connect(2) was called on, whatever the
	// result (non-blocking connects report -EINPROGRESS).
	Network []Endpoint `json:"network"`
	// NetworkSent are destinations named by sendto/sendmsg.
	NetworkSent []Endpoint `json:"network_sent"`
	// NetworkLocal are local addresses bound or listened on.
	NetworkLocal []Endpoint `json:"network_local"`
}

// Endpoint is one socket address.
type Endpoint struct {
	Family string     `json:"family"`
	Addr   wire.Bytes `json:"addr"`
	Port   uint16     `json:"port"`
}

// Rename is one rename: From became To.
type Rename struct {
	From wire.Bytes `json:"from"`
	To   wire.Bytes `json:"to"`
}

// pathSets holds every set of paths of a surface at once: each distinct
// path is kept once with a bit per set it is in (an open for writing with
// O_CREAT is in two, a file created and deleted in two more), looked up
// once per action and sorted once for all its sets.
//
// The index is an open-addressing table of entry numbers, not a Go map:
// a run that touches a file once per path (an archive extracted) has as
// many paths as actions, and a map of them cost about 170 bytes per path
// in tables and their growth; an entry here is 24 bytes, its slots (8
// bytes each, a quarter to half of them used) 16 to 32. A run that
// touches a few paths over and over (a build re-reading its headers)
// costs one hash and one probe per action, as a map does. An entry's
// number is kept in 32 bits: 2^32-1 paths, far beyond any memory.
type pathSets struct {
	entries []pathEntry // in first-seen order until sorted
	// slots holds, per slot, 0 (empty) or the path's hash in the high 32
	// bits and its entry's index + 1 in the low 32; at most half are used.
	slots []uint64
	seed  maphash.Seed
	last  int // the entry of the previous action, which often repeats
	// arena holds the paths' bytes with copyPaths: a path is copied
	// when first seen, so the table never keeps the memory of the event
	// it came from.
	arena     []byte
	copyPaths bool
	// kept is the bytes of the entries' paths; spill, when set, is
	// where the entries go once there are many (see Digest.SpillTo).
	kept   int
	spill  *pathSpill
	sealed bool
}

// pathArenaChunk is the size of the arena's chunks.
const pathArenaChunk = 64 << 10

// keep copies p into the arena.
func (s *pathSets) keep(p wire.Bytes) wire.Bytes {
	if len(p) == 0 {
		return ""
	}
	if len(p) > pathArenaChunk/4 {
		return cloneBytes(p)
	}
	if cap(s.arena)-len(s.arena) < len(p) {
		s.arena = make([]byte, 0, pathArenaChunk)
	}
	n := len(s.arena)
	s.arena = append(s.arena, p...)
	return wire.Bytes(unsafe.String(&s.arena[n], len(p)))
}

type pathEntry struct {
	path wire.Bytes
	in   uint16 // a bit per set
}

// PathList is one of the capability surface's lists of paths, numbered
// in the order the document has them.
type PathList int

// The surface's path lists.
const (
	ListFilesRead PathList = iota
	ListFilesWritten
	ListFilesCreated
	ListOpenFailures
	ListFilesDeleted
	ListDirsCreated
	ListLinksCreated
	ListModeChanged
	ListFilesTruncated
	ListExecs
	ListExecFailures
	// NumPathLists is how many lists there are.
	NumPathLists = iota
	// numSets counts the path lists and the key sets after them
	// (surfacekeys.go).
	numSets = NumPathLists + 1 + NumEndpointLists
)

// The sets of a surface, as bits of pathEntry.in: one per PathList.
const (
	setRead       = 1 << ListFilesRead
	setWritten    = 1 << ListFilesWritten
	setCreated    = 1 << ListFilesCreated
	setOpenFailed = 1 << ListOpenFailures
	setDeleted    = 1 << ListFilesDeleted
	setDirs       = 1 << ListDirsCreated
	setLinks      = 1 << ListLinksCreated
	setModes      = 1 << ListModeChanged
	setTruncated  = 1 << ListFilesTruncated
	setExecs      = 1 << ListExecs
	setExecFailed = 1 << ListExecFailures
)

// Paths is the list l of s.
func (s *CapabilitySurface) Paths(l PathList) []wire.Bytes {
	if l < 0 || l >= NumPathLists {
		panic(fmt.Sprintf("evidence: no path list %d", l))
	}
	return *s.pathFields()[l]
}

// pathFields are s's path lists, indexed by PathList.
func (s *CapabilitySurface) pathFields() [NumPathLists]*[]wire.Bytes {
	return [NumPathLists]*[]wire.Bytes{&s.FilesRead, &s.FilesWritten, &s.FilesCreated, &s.OpenFailures, &s.FilesDeleted,
		&s.DirsCreated, &s.LinksCreated, &s.ModeChanged, &s.FilesTruncated, &s.Execs, &s.ExecFailures}
}

// newPathSets returns empty sets; with copyPaths a path is copied when
// first seen, for a caller that reuses the events' memory.
func newPathSets(copyPaths bool) *pathSets {
	return &pathSets{seed: maphash.MakeSeed(), last: -1, copyPaths: copyPaths}
}

func (s *pathSets) add(p wire.Bytes, set uint16) { s.insert(p, set, s.copyPaths) }

// addKey adds k, which the caller reuses: it is copied when new, into
// the arena with copyPaths, else on its own.
func (s *pathSets) addKey(k wire.Bytes, set uint16) { s.insert(k, set, true) }

func (s *pathSets) insert(p wire.Bytes, set uint16, copyNew bool) {
	if s.last >= 0 && s.entries[s.last].path == p {
		s.entries[s.last].in |= set
		return
	}
	if s.full() {
		s.spillRun()
	}
	if 2*(len(s.entries)+1) > len(s.slots) {
		s.rehash()
	}
	h := hashPath(s.seed, string(p))
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			s.slots[i] = h&^0xffffffff | uint64(len(s.entries)+1)
			s.last = len(s.entries)
			if len(s.entries) == cap(s.entries) {
				// Doubling: append's smaller steps, on a slice this
				// large, would allocate several times its final size.
				s.entries = append(make([]pathEntry, 0, 2*cap(s.entries)+256), s.entries...)
			}
			switch {
			case s.copyPaths:
				p = s.keep(p)
			case copyNew:
				// Exactly its size: a surface built once (one
				// per tool call) must not keep an arena chunk.
				p = cloneBytes(p)
			}
			s.kept += len(p)
			s.entries = append(s.entries, pathEntry{p, set})
			return
		}
		if v>>32 == h>>32 {
			if id := int(v&0xffffffff) - 1; s.entries[id].path == p {
				s.entries[id].in |= set
				s.last = id
				return
			}
		}
	}
}

// hashPath is the table's hash; a test replaces it to force collisions.
var hashPath = maphash.String

// rehash doubles the table (it starts at 1024 slots), or makes it as
// large as the entries need, at most half full.
func (s *pathSets) rehash() {
	n := max(1024, 2*len(s.slots))
	for n < 2*(len(s.entries)+1) {
		n *= 2
	}
	s.slots = make([]uint64, n)
	mask := uint64(len(s.slots) - 1)
	for id := range s.entries {
		h := hashPath(s.seed, string(s.entries[id].path))
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h&^0xffffffff | uint64(id+1)
	}
}

// seal sorts the entries in place, for each and sorted: nothing may be
// added after.
func (s *pathSets) seal() {
	if !s.sealed {
		s.sealed, s.slots, s.last = true, nil, -1
		sortEntries(s.entries)
	}
}

// sorted returns, for each set bit, its paths in byte order; every list
// is non-nil. It seals the sets.
func (s *pathSets) sorted() (map[uint16][]wire.Bytes, error) {
	s.seal()
	if s.spill != nil && len(s.spill.runs) > 0 {
		return s.sortedFromSpill()
	}
	const sets = numSets
	var count [sets]int
	for _, e := range s.entries {
		for i := range sets {
			count[i] += int(e.in >> i & 1)
		}
	}
	var lists [sets][]wire.Bytes
	for i := range sets {
		lists[i] = make([]wire.Bytes, 0, count[i])
	}
	for _, e := range s.entries {
		for in := e.in; in != 0; in &= in - 1 {
			i := bits.TrailingZeros16(in)
			lists[i] = append(lists[i], e.path)
		}
	}
	out := make(map[uint16][]wire.Bytes, sets)
	for i := range sets {
		out[1<<i] = lists[i]
	}
	return out, nil
}

// sortedFromSpill is sorted for sets with runs in a scratch store: every
// path is read back and held, which is what spilling avoided; a caller
// that only writes the lists out uses each instead.
func (s *pathSets) sortedFromSpill() (map[uint16][]wire.Bytes, error) {
	out := make(map[uint16][]wire.Bytes, numSets)
	for i := range numSets {
		list := []wire.Bytes{}
		err := s.each(i, func(p wire.Bytes) error {
			list = append(list, wire.Bytes(strings.Clone(string(p))))
			return nil
		})
		if err != nil {
			return nil, err
		}
		out[1<<i] = list
	}
	return out, nil
}

// BuildSurface derives the capability surface from kernel events. RunID is
// left for the caller (Assemble sets it).
func BuildSurface(kernel []wire.Kernel) CapabilitySurface {
	b := newSurfaceBuilder(false)
	for i := range kernel {
		b.add(&kernel[i])
	}
	return b.build()
}

// surfaceBuilder folds events into a capability surface. It copies what
// it keeps, so an event's memory may be reused once add returns.
type surfaceBuilder struct {
	// paths holds the path lists, and the renames and endpoints as keys
	// (surfacekeys.go).
	paths *pathSets
	key   []byte
	acts  []Action
}

func newSurfaceBuilder(copyPaths bool) surfaceBuilder {
	return surfaceBuilder{paths: newPathSets(copyPaths)}
}

func (b *surfaceBuilder) addKey(set uint16) {
	b.paths.addKey(wire.Bytes(unsafe.String(unsafe.SliceData(b.key), len(b.key))), set)
}

func (b *surfaceBuilder) add(e *wire.Kernel) {
	paths := b.paths
	if o := e.Open; o != nil && (o.Ret < 0 || o.File == nil) {
		// Every failed open, whatever its access (O_PATH too); an open by
		// handle names no path to list (Unrecorded counts it).
		if o.Syscall != "open_by_handle_at" {
			paths.add(namePath(o.Name), setOpenFailed)
		}
		return
	}
	b.acts = Actions(e, b.acts[:0])
	for _, a := range b.acts {
		if a.Failed {
			if a.Op == OpExec {
				paths.add(a.Path, setExecFailed)
			}
			if a.Op != OpConnect {
				continue
			}
		}
		switch a.Op {
		case OpRead:
			paths.add(a.Path, setRead)
		case OpWrite:
			paths.add(a.Path, setWritten)
		case OpCreate:
			paths.add(a.Path, setCreated)
		case OpDelete:
			paths.add(a.Path, setDeleted)
		case OpMkdir:
			paths.add(a.Path, setDirs)
		case OpRename:
			b.key = appendRenameKey(b.key[:0], Rename{From: a.Path, To: a.To})
			b.addKey(setRenamed)
		case OpLink:
			paths.add(a.Path, setLinks)
		case OpChmod, OpChown:
			paths.add(a.Path, setModes)
		case OpTruncate:
			paths.add(a.Path, setTruncated)
		case OpExec:
			paths.add(a.Path, setExecs)
		case OpConnect:
			b.key = appendEndpointKey(b.key[:0], a.Endpoint)
			b.addKey(endpointSet(ListNetwork))
		case OpSend:
			b.key = appendEndpointKey(b.key[:0], a.Endpoint)
			b.addKey(endpointSet(ListNetworkSent))
		case OpBind, OpListen:
			b.key = appendEndpointKey(b.key[:0], a.Endpoint)
			b.addKey(endpointSet(ListNetworkLocal))
		}
	}
}

// build returns the surface; nothing may be added after. Paths a
// scratch store holds are read back into memory: a read error panics
// (see Digest.Surface).
func (b *surfaceBuilder) build() CapabilitySurface {
	s := b.buildRest()
	sets, err := b.paths.sorted()
	if err != nil {
		panic(err)
	}
	for l, f := range s.pathFields() {
		*f = sets[1<<l]
	}
	s.FilesRenamed = make([]Rename, len(sets[setRenamed]))
	for i, k := range sets[setRenamed] {
		if s.FilesRenamed[i], err = renameOfKey(k); err != nil {
			panic(err) // the builder made every key
		}
	}
	for l, f := range s.endpointFields() {
		keys := sets[endpointSet(EndpointList(l))]
		*f = make([]Endpoint, len(keys))
		for i, k := range keys {
			if (*f)[i], err = endpointOfKey(k); err != nil {
				panic(err)
			}
		}
	}
	return s
}

// buildRest returns the surface without its lists (nil), and seals the
// path sets for each.
func (b *surfaceBuilder) buildRest() CapabilitySurface {
	b.paths.seal()
	return CapabilitySurface{Schema: SurfaceSchema}
}

// cloneBytes copies s, so that keeping it does not keep the memory it
// was cut from.
func cloneBytes(s wire.Bytes) wire.Bytes { return wire.Bytes(strings.Clone(string(s))) }

// cleanPath removes "." and ".." lexically (a resolved path is already
// clean; a name joined to its directory may not be).
func cleanPath(p wire.Bytes) wire.Bytes {
	if p == "" {
		return p
	}
	return wire.Bytes(path.Clean(string(p)))
}

func namePath(n wire.Name) wire.Bytes { return cleanPath(n.Path()) }

func objectPath(f *wire.FileOp) wire.Bytes { return cleanPath(f.ObjectPath()) }
