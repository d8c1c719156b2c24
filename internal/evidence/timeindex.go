package evidence

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"vigil/internal/wire"
)

// timeIndex is what correlation needs of each event: its time, seq and
// kind, in layer order, in chunks so that growing never copies. A chunk
// keeps seqs only when they are not its events' indexes (in a recording,
// only after a seq gap). With a scratch store, each full chunk moves
// there, so the index holds one chunk however long the layer.
type timeIndex struct {
	n      int
	chunks []*timeChunk // in memory, after the stored ones
	kinds  []wire.Kind
	ids    map[wire.Kind]uint8
	store  Scratch
	stored []storedChunk
	buf    []byte
	err    error // the first store write that failed: no more are tried
}

// timeChunkEvents is the events per chunk of a time index.
const timeChunkEvents = 1 << 14

type timeChunk struct {
	base int // the index of its first event
	n    int
	ts   [timeChunkEvents]uint64
	kind [timeChunkEvents]uint8 // index into kinds
	seq  []uint64               // nil while every seq is its index
}

// storedChunk is a chunk in the store: n times, n kinds and, unless
// dense, n seqs, from off.
type storedChunk struct {
	off, size int64
	base, n   int
	dense     bool
}

func (ix *timeIndex) add(e *wire.Kernel) {
	if ix.n%timeChunkEvents == 0 {
		for ix.store != nil && ix.err == nil && len(ix.chunks) > 0 {
			ix.storeChunk()
		}
		ix.chunks = append(ix.chunks, &timeChunk{base: ix.n})
	}
	c := ix.chunks[len(ix.chunks)-1]
	i := c.n
	if c.seq == nil && e.Seq != uint64(ix.n) {
		// From here on this chunk keeps seqs, its earlier ones filled in.
		c.seq = make([]uint64, i, timeChunkEvents)
		for j := range i {
			c.seq[j] = uint64(c.base + j)
		}
	}
	c.ts[i] = e.TimeNS
	c.kind[i] = ix.kindID(e.Kind)
	if c.seq != nil {
		c.seq = append(c.seq, e.Seq)
	}
	c.n++
	ix.n++
}

// storeChunk moves the first chunk in memory, full, to the store; should
// the store refuse it, it stays, and so do the later ones.
func (ix *timeIndex) storeChunk() {
	c := ix.chunks[0]
	b := ix.buf[:0]
	for _, t := range c.ts[:c.n] {
		b = binary.LittleEndian.AppendUint64(b, t)
	}
	b = append(b, c.kind[:c.n]...)
	for _, q := range c.seq {
		b = binary.LittleEndian.AppendUint64(b, q)
	}
	ix.buf = b
	off := ix.store.Size()
	if _, err := ix.store.Write(b); err != nil {
		ix.err = err
		return
	}
	ix.stored = append(ix.stored, storedChunk{off: off, size: int64(len(b)), base: c.base, n: c.n, dense: c.seq == nil})
	ix.chunks[0] = nil
	ix.chunks = ix.chunks[1:]
}

func (ix *timeIndex) kindID(k wire.Kind) uint8 {
	if n := len(ix.kinds); n > 0 && ix.kinds[n-1] == k {
		return uint8(n - 1)
	}
	if id, ok := ix.ids[k]; ok {
		return id
	}
	if ix.ids == nil {
		ix.ids = map[wire.Kind]uint8{}
	}
	if len(ix.kinds) == 256 {
		// Schema validation allows far fewer kinds; a bundle built in
		// memory with more shares the last slot's name.
		return 255
	}
	id := uint8(len(ix.kinds))
	ix.kinds = append(ix.kinds, wire.Kind(strings.Clone(string(k))))
	ix.ids[ix.kinds[id]] = id
	return id
}

// each calls fn with every event's time, seq and kind, in layer order,
// reading back what the store holds; it stops at a read error.
func (ix *timeIndex) each(fn func(ts, seq uint64, kind wire.Kind)) error {
	var c timeChunk
	var b []byte
	for _, sc := range ix.stored {
		if int64(cap(b)) < sc.size {
			b = make([]byte, sc.size)
		}
		b = b[:sc.size]
		if _, err := io.ReadFull(ix.store.Section(sc.off, sc.size), b); err != nil {
			return fmt.Errorf("evidence: read the stored time index: %w", err)
		}
		c.base, c.n, c.seq = sc.base, sc.n, nil
		for j := range sc.n {
			c.ts[j] = binary.LittleEndian.Uint64(b[8*j:])
		}
		copy(c.kind[:sc.n], b[8*sc.n:])
		if !sc.dense {
			seqs := b[9*sc.n:]
			c.seq = make([]uint64, sc.n)
			for j := range sc.n {
				c.seq[j] = binary.LittleEndian.Uint64(seqs[8*j:])
			}
		}
		ix.eachIn(&c, fn)
	}
	for _, c := range ix.chunks {
		ix.eachIn(c, fn)
	}
	return nil
}

func (ix *timeIndex) eachIn(c *timeChunk, fn func(ts, seq uint64, kind wire.Kind)) {
	for j := range c.n {
		seq := uint64(c.base + j)
		if c.seq != nil {
			seq = c.seq[j]
		}
		fn(c.ts[j], seq, ix.kinds[c.kind[j]])
	}
}
