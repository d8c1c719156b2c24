package evidence

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"vigil/internal/wire"
)

// Scratch is where a digest moves the paths it has seen once it holds
// many, so that its memory stays bounded however many distinct paths a
// run touches (package spill's File is one, an anonymous file). Data is
// appended and read back by offset.
type Scratch interface {
	io.Writer
	// Size is how many bytes were written.
	Size() int64
	// Section reads n bytes from off.
	Section(off, n int64) io.Reader
}

// Spill limits: the path sets move their entries to the scratch store
// once they hold this many paths, or this many bytes of them; and merge
// the runs there into one once there are this many, so that reading them
// back needs a bounded number of buffers (a run's reader takes
// spillReadBytes). 256 runs of 4 MiB are more path bytes than a kernel
// layer within the entry limit can name, so a recording never stops to
// merge; the merge is the bound for anything larger.
const (
	spillEntries   = 1 << 16
	spillBytes     = 4 << 20
	spillMaxRuns   = 256
	spillReadBytes = 16 << 10
)

// pathSpill is the runs the path sets moved to a scratch store. A run is
// what the sets held when it was written: per set, its paths in byte
// order, each once (a path appears in as many sets as it is in, and in
// as many runs as it was seen in between spills).
type pathSpill struct {
	to   Scratch
	runs []pathRun
	// err is the first write that failed. From then on the sets stay in
	// memory (nothing is lost, the bound is): Spilled reports it.
	err error
	// entries and bytes are the limits (tests make them small), maxRuns
	// the runs merged into one.
	entries, bytes, maxRuns int
	written                 int64 // bytes of runs written
	spills, merges          int   // runs written from memory; merges of them
}

// pathRun locates each set's paths of one run in the scratch store.
type pathRun [numSets]struct{ off, n int64 }

func newPathSpill(to Scratch) *pathSpill {
	return &pathSpill{to: to, entries: spillEntries, bytes: spillBytes, maxRuns: spillMaxRuns}
}

// full reports whether s should move its entries out before taking
// another path.
func (s *pathSets) full() bool {
	sp := s.spill
	return sp != nil && sp.err == nil && (len(s.entries) >= sp.entries || s.kept >= sp.bytes)
}

// spillRun writes the entries to the scratch store as one run and starts
// the sets afresh. A failed write leaves them as they were.
func (s *pathSets) spillRun() {
	sp := s.spill
	sortEntries(s.entries)
	run, err := sp.writeRun(func(set int, emit func(wire.Bytes) error) error {
		for _, e := range s.entries {
			if e.in>>set&1 != 0 {
				if err := emit(e.path); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		sp.err = err
		s.rehashAll()
		return
	}
	sp.runs = append(sp.runs, run)
	sp.spills++
	clear(s.entries) // drop the references into the old arena
	s.entries, s.arena, s.kept, s.last = s.entries[:0], nil, 0, -1
	clear(s.slots)
	if len(sp.runs) >= sp.maxRuns {
		sp.mergeRuns()
	}
}

// rehashAll rebuilds the index after the entries were sorted.
func (s *pathSets) rehashAll() {
	s.slots, s.last = nil, -1
	if len(s.entries) > 0 {
		s.rehash()
	}
}

// writeRun appends one run: each set's paths, as each gives them to emit.
func (sp *pathSpill) writeRun(each func(set int, emit func(wire.Bytes) error) error) (pathRun, error) {
	var run pathRun
	w := bufio.NewWriterSize(sp.to, 64<<10)
	start := sp.to.Size()
	var n int64
	var lenBuf [binary.MaxVarintLen64]byte
	for set := range numSets {
		run[set].off = start + n
		err := each(set, func(p wire.Bytes) error {
			k := binary.PutUvarint(lenBuf[:], uint64(len(p)))
			w.Write(lenBuf[:k])
			_, err := w.WriteString(string(p))
			n += int64(k + len(p))
			return err
		})
		if err != nil {
			return run, err
		}
		run[set].n = start + n - run[set].off
	}
	if err := w.Flush(); err != nil {
		return run, err
	}
	if got := sp.to.Size() - start; got != n {
		return run, fmt.Errorf("evidence: scratch store took %d bytes of a %d-byte run", got, n)
	}
	sp.written += n
	return run, nil
}

// mergeRuns replaces the runs with one holding all their paths, so that
// reading them back needs one buffer, not one per run. Should the write
// fail, the runs stay as they were.
func (sp *pathSpill) mergeRuns() {
	run, err := sp.writeRun(func(set int, emit func(wire.Bytes) error) error {
		return sp.merge(set, nil, emit)
	})
	if err != nil {
		sp.err = err
		return
	}
	// The merged runs' space is given back where the store can.
	if d, ok := sp.to.(interface{ Discard(off, n int64) error }); ok {
		for _, r := range sp.runs {
			d.Discard(r[0].off, r[numSets-1].off+r[numSets-1].n-r[0].off)
		}
	}
	sp.runs = []pathRun{run}
	sp.merges++
}

// merge calls emit with the paths of set in every run and in mem (sorted
// entries not written out), in byte order, each once. A path handed to
// emit is valid only during the call.
func (sp *pathSpill) merge(set int, mem []pathEntry, emit func(wire.Bytes) error) error {
	var h cursorHeap
	for _, r := range sp.runs {
		if r[set].n == 0 {
			continue
		}
		c := &runCursor{r: bufio.NewReaderSize(sp.to.Section(r[set].off, r[set].n), spillReadBytes)}
		if err := c.next(); err != nil {
			return err
		}
		if c.ok {
			h = append(h, c)
		}
	}
	mc := &memCursor{entries: mem, bit: uint16(1) << set, i: -1}
	if mc.next(); mc.ok {
		h = append(h, mc)
	}
	heap.Init(&h)
	var last []byte
	for i := 0; len(h) > 0; i++ {
		c := h[0]
		p := c.path()
		if i == 0 || string(p) != string(last) {
			if err := emit(p); err != nil {
				return err
			}
			last = append(last[:0], p...)
		}
		if err := c.next(); err != nil {
			return err
		}
		if c.valid() {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// each calls emit with the paths of set in byte order, each once; the
// entries must be sorted (sealed sets) and emit must not keep the path.
func (s *pathSets) each(set int, emit func(wire.Bytes) error) error {
	if s.spill == nil || len(s.spill.runs) == 0 {
		bit := uint16(1) << set
		for _, e := range s.entries {
			if e.in&bit != 0 {
				if err := emit(e.path); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return s.spill.merge(set, s.entries, emit)
}

// A cursor is one sorted source of paths being merged.
type cursor interface {
	path() wire.Bytes
	next() error
	valid() bool
}

// runCursor reads one set of one run: uvarint length, then the bytes.
type runCursor struct {
	r   *bufio.Reader
	buf []byte
	cur wire.Bytes // buf as a string, without a copy: valid until next
	ok  bool
}

func (c *runCursor) path() wire.Bytes { return c.cur }
func (c *runCursor) valid() bool      { return c.ok }

func (c *runCursor) next() error {
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		c.ok = false
		return nil
	}
	if err != nil {
		return fmt.Errorf("evidence: read spilled paths: %w", err)
	}
	if n > 1<<30 {
		return fmt.Errorf("evidence: read spilled paths: a path of %d bytes", n)
	}
	// The merge copies the path it keeps, so the buffer is reused.
	if uint64(cap(c.buf)) < n {
		c.buf = make([]byte, 0, max(int(n), 256))
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return fmt.Errorf("evidence: read spilled paths: %w", err)
	}
	c.cur = ""
	if n > 0 {
		c.cur = wire.Bytes(unsafe.String(&c.buf[0], n))
	}
	c.ok = true
	return nil
}

// memCursor walks the sorted entries still in memory that are in one set.
type memCursor struct {
	entries []pathEntry
	bit     uint16
	i       int
	ok      bool
}

func (c *memCursor) path() wire.Bytes { return c.entries[c.i].path }
func (c *memCursor) valid() bool      { return c.ok }

func (c *memCursor) next() error {
	for c.i++; c.i < len(c.entries); c.i++ {
		if c.entries[c.i].in&c.bit != 0 {
			c.ok = true
			return nil
		}
	}
	c.ok = false
	return nil
}

// cursorHeap orders cursors by their current path.
type cursorHeap []cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	return strings.Compare(string(h[i].path()), string(h[j].path())) < 0
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

func sortEntries(e []pathEntry) {
	slices.SortFunc(e, func(a, b pathEntry) int { return strings.Compare(string(a.path), string(b.path)) })
}
