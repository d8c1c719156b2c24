package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"strings"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// MaxLineBytes bounds one line of an NDJSON entry, so that a stream
// without newlines is refused instead of inflated whole in search of one.
// No line vigil writes comes near it: a kernel record's variable parts
// are capped in the kernel at a few KiB, and an SDK line at
// evidence.MaxSDKLine before JSON escaping (which at most sextuples it).
const MaxLineBytes = 1 << 20

// pieceBytes is how much of an entry is read before what arrived is
// checked: with what readAhead holds, the most a bad entry is inflated
// past its first bad line.
const pieceBytes = 4 << 20

// batchLines is how many lines are validated together.
const batchLines = 8 << 10

// folding is how a reading folds the kernel layer into a digest instead of
// keeping its events (OpenDigest); scratch, when set, takes what would
// otherwise be held.
type folding struct {
	scratch evidence.Scratch
}

// spooled is an entry's text in a scratch file.
type spooled struct {
	to     evidence.Scratch
	off, n int64
}

// load reads a spooled entry's text back into f.data.
func (f *file) load() error {
	if f.data != nil || f.spooled == nil {
		return nil
	}
	data := make([]byte, f.spooled.n)
	if _, err := io.ReadFull(f.spooled.to.Section(f.spooled.off, f.spooled.n), data); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	f.data = data
	return nil
}

// unspool returns the n bytes spool holds followed by piece.
func unspool(spool *spooled, n int64, piece []byte) ([]byte, error) {
	data := make([]byte, n, n+int64(len(piece)))
	if _, err := io.ReadFull(spool.to.Section(spool.off, n), data); err != nil {
		return nil, err
	}
	return append(data, piece...), nil
}

// readEntry reads the size bytes of entry name from r a piece at a time
// and, for an NDJSON entry, validates every line completed by the piece
// before the next piece is taken. A goroutine reads the entry a little
// ahead (readAhead), another hashes each piece while it is checked
// (hashPiece), and another folds checked kernel events into the digest
// (lineCheck.fold), so that on more than one CPU inflating, hashing,
// checking and folding overlap. The buffer grows as data
// arrives rather than to the declared size, so a size that lies costs
// nothing until the bytes are there.
//
// The kernel layer's bytes are not kept: each line is decoded as it is
// checked and proven to be the canonical encoding of its event, so the
// events are the layer. Holding the text too would double what a large
// archive costs to read (and every byte of it is memory touched for the
// first time, which on some hosts costs more than parsing it).
//
// Folding with a scratch file (OpenDigest), the capability surface's text
// is not kept either but appended to the scratch file, and the digest
// moves its paths there: reading holds neither the surface nor its paths.
func readEntry(r io.Reader, name string, size int64, fold *folding, correlated bool) (file, error) {
	f := file{path: name}
	h := sha256.New()
	var lc *lineCheck
	if strings.HasSuffix(name, ".ndjson") {
		lc = &lineCheck{name: name, schema: evidence.EntrySchemas[name], kernel: name == evidence.EntryKernel, size: size}
		if lc.kernel && fold != nil {
			lc.digest = evidence.NewDigest().CheckingEvents()
			if fold.scratch != nil {
				lc.digest.SpillTo(fold.scratch, evidence.SpillLimits{})
			}
			if !correlated {
				lc.digest.WithoutCorrelation()
			}
		}
	}
	keep := lc == nil || !lc.kernel
	var spool *spooled
	if fold != nil && fold.scratch != nil && name == evidence.EntrySurface {
		keep, spool = false, &spooled{to: fold.scratch, off: fold.scratch.Size()}
	}
	if lc != nil {
		// No fold outlives the reading, whatever ends it.
		defer lc.waitFold()
	}
	src := readAhead(r, size)
	defer src.close()
	var hashing background
	defer hashing.wait()
	data := make([]byte, 0, min(size, pieceBytes))
	var read int64
	last := byte('\n')
	for read < size {
		k := int(min(size-read, pieceBytes))
		if cap(data)-len(data) < k {
			want := int64(len(data) + k)
			if keep {
				want = min(size, max(reserveFactor*int64(cap(data)), want))
			} else {
				// A piece and the longest line: grown once at most.
				want = max(want, min(size, pieceBytes+MaxLineBytes))
			}
			grown := make([]byte, len(data), want)
			copy(grown, data)
			data = grown
		}
		piece := data[len(data) : len(data)+k]
		hashing.wait() // the previous piece's bytes may be overwritten now
		if err := src.readFull(piece); err != nil {
			return f, entryErr(name, "truncated: %v", err)
		}
		hashPiece(&hashing, h, piece)
		data = data[:len(data)+k]
		read += int64(k)
		last = data[len(data)-1]
		if spool != nil {
			if _, err := spool.to.Write(piece); err == nil {
				data = data[:0]
				continue
			}
			// The scratch file refused it: the text is kept in memory
			// after all, what went out read back.
			var err error
			if data, err = unspool(spool, read-int64(k), data); err != nil {
				return f, fmt.Errorf("%s: %w", name, err)
			}
			keep, spool = true, nil
		}
		if lc != nil {
			if err := lc.check(data, read == size); err != nil {
				return f, err
			}
			if !keep {
				// Only the line still arriving stays.
				hashing.wait()
				n := copy(data, data[lc.done:])
				lc.base += int64(lc.done)
				data, lc.done = data[:n], 0
			}
		}
	}
	if lc != nil && size == 0 {
		if err := lc.check(data, true); err != nil {
			return f, err
		}
	}
	src.close()
	hashing.wait() // every byte read is hashed
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	f.sum, f.n = &sum, size
	if keep {
		f.data = data
	}
	if spool != nil {
		spool.n, f.spooled = size, spool
	}
	if lc != nil {
		f.checked = true
		if lc.kernel {
			// Every line is its event's canonical encoding, each ended
			// by a newline: the entry is exactly marshalKernel of the
			// events.
			if last != '\n' {
				return f, entryErr(name, "not in canonical encoding (differs from its canonical form at byte %d)", size)
			}
			lc.waitFold()
			f.kernel, f.digest = lc.events, lc.digest
			if lc.digest != nil {
				f.kernel = nil
			}
		}
	}
	return f, nil
}

// background runs one task at a time in a goroutine of its own, beside
// the caller's: readEntry hashes a piece of an entry while its lines are
// checked (hashing the kernel layer costs about as much as inflating it),
// and folds one batch of events while the next is checked.
type background struct{ done chan struct{} }

// start waits for the task started before, then starts f.
func (b *background) start(f func()) {
	b.wait()
	done := make(chan struct{})
	b.done = done
	go func() {
		defer close(done)
		f()
	}()
}

// wait returns once the task started last is done.
func (b *background) wait() {
	if b.done != nil {
		<-b.done
		b.done = nil
	}
}

// hashPiece hashes piece into h in the background; piece's bytes must stay
// as they are until hashing.wait returns.
func hashPiece(hashing *background, h hash.Hash, piece []byte) {
	hashing.start(func() { h.Write(piece) })
}

// lineCheck validates an NDJSON entry's lines as they arrive. For the
// kernel layer it also decodes every line, requires that the line is the
// canonical encoding of its event, and requires strictly increasing seq
// (which evidence.Check requires of the whole layer) so that a flood of
// copies of one valid line fails at its second line.
type lineCheck struct {
	name, schema string
	kernel       bool
	size         int64 // the entry's declared size
	base         int64 // entry offset of data[0] (data not kept)
	done         int   // bytes of data already checked
	lines        int   // lines already checked
	events       []wire.Kernel
	// digest, when set, takes each batch of events once checked, in a
	// goroutine that folds one batch while the next is checked: two
	// batches are held, events and folding's.
	digest  *evidence.Digest
	folding []wire.Kernel
	folder  background // folds folding's batch into digest
	haveSeq bool
	lastSeq uint64
}

// fold hands the checked batch in c.events to the digest and gives
// c.events the slots of the batch folded before it.
func (c *lineCheck) fold() {
	c.waitFold()
	batch := c.events
	c.events, c.folding = c.folding[:0], batch
	c.folder.start(func() { c.digest.Add(batch) })
}

// waitFold returns once every batch handed to the digest is in it.
func (c *lineCheck) waitFold() { c.folder.wait() }

// check validates the lines of data past what was checked: the complete
// ones, and at the end (final) the last line without a newline too.
func (c *lineCheck) check(data []byte, final bool) error {
	end := len(data)
	if !final {
		end = bytes.LastIndexByte(data, '\n') + 1
	}
	// In batches of at most batchLines lines, so that a piece of tiny
	// lines does not cost a line slice and an event per line at once.
	for c.done < end {
		next := c.done
		for n := 0; n < batchLines && next < end; n++ {
			i := bytes.IndexByte(data[next:end], '\n')
			if i < 0 {
				next = end
				break
			}
			next += i + 1
		}
		if err := c.checkLines(data[c.done:next], c.base+int64(c.done)); err != nil {
			return err
		}
		c.done = next
	}
	if len(data)-c.done > MaxLineBytes {
		return entryErr(c.name, "line %d: longer than %d bytes", c.lines+1, MaxLineBytes)
	}
	return nil
}

// checkLines checks the next complete lines of the entry, which start at
// entry offset off.
func (c *lineCheck) checkLines(chunk []byte, off int64) error {
	lines := splitLines(chunk)
	first := c.lines
	c.lines += len(lines)
	if !c.kernel {
		if err := validateLinesOf(c.schema, lines, nil); err != nil {
			return entryErr(c.name, "schema %s: %v", c.schema, offsetLines(err, first))
		}
		return nil
	}
	events := c.grow(len(lines), off+int64(len(chunk)))
	ok := make([]bool, len(lines))
	prove := func(i int, line []byte, s *proveScratch) bool {
		ok[i] = provenKernelLine(line, &events[i], s)
		return ok[i]
	}
	if err := validateLinesOf(c.schema, lines, prove); err != nil {
		return entryErr(c.name, "schema %s: %v", c.schema, offsetLines(err, first))
	}
	for i, line := range lines {
		if !ok[i] {
			// Valid by the schema, yet not proven: not the canonical
			// encoding of its event.
			return entryErr(c.name, "line %d: %s", first+i+1, kernelLineDefect(line, off))
		}
		off += int64(len(line)) + 1
		seq := events[i].Seq
		if c.haveSeq && seq <= c.lastSeq {
			return entryErr(c.name, "line %d: seq %d does not follow seq %d", first+i+1, seq, c.lastSeq)
		}
		c.haveSeq, c.lastSeq = true, seq
	}
	if c.digest != nil {
		c.fold()
	}
	return nil
}

// minKernelLine is fewer bytes than any valid kernel line has with its
// newline (TestMinKernelLine tries the shortest payloads).
const minKernelLine = 112

// reserveFactor bounds each growth of a buffer or of the events read: at
// most this many times what has arrived. An honest large entry is copied
// a few times while small (about a fifteenth of its final size in all)
// rather than at every doubling; a crafted one costs at most this many
// times the data it sends.
const reserveFactor = 16

// grow makes room for n more events and returns their slots. Capacity is
// sized from the lines seen so far (read bytes of the entry hold c.lines
// lines): untouched capacity costs address space, not memory, while
// growing by copying would touch the layer several times over.
func (c *lineCheck) grow(n int, read int64) []wire.Kernel {
	if c.digest != nil {
		// The batch's slots, reused: cleared, as decoding expects.
		if cap(c.events) < n {
			c.events = make([]wire.Kernel, 0, n)
		}
		c.events = c.events[:n]
		clear(c.events)
		return c.events
	}
	base := len(c.events)
	if cap(c.events)-base < n {
		want := max(base+n, 2*cap(c.events))
		if read > 0 && c.size > read {
			// Half as many again as the lines so far predict for the
			// declared size (lines differ in length by kind: an open's
			// is longer than an unlink's), but never more than
			// reserveFactor times the events that have arrived: the
			// memory is zeroed, so a size that lies must not reserve
			// what its data never pays for.
			predicted := int(float64(c.lines)*float64(c.size)/float64(read)*1.5) + 1024
			want = max(want, min(predicted, reserveFactor*(base+n)))
		}
		// Never more than the declared size can hold.
		want = max(base+n, min(want, int(c.size/minKernelLine)+1))
		grown := make([]wire.Kernel, base, want)
		copy(grown, c.events)
		c.events = grown
	}
	c.events = c.events[:base+n]
	return c.events[base:]
}

// kernelLineDefect says what is wrong with a schema-valid kernel line, at
// entry offset off, that is not the canonical encoding of its event.
func kernelLineDefect(line []byte, off int64) string {
	var e wire.Kernel
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return err.Error()
	}
	if dec.More() {
		return "data after the event"
	}
	again := appendKernel(nil, &e)
	if !bytes.Equal(again, append(line[:len(line):len(line)], '\n')) {
		return "not in canonical encoding (" + firstByteDiffAt(line, again, off) + ")"
	}
	return "breaks " + evidence.EntrySchemas[evidence.EntryKernel] + " at " + kernelValid(&e)
}

// firstByteDiffAt is firstByteDiff for a line at entry offset off.
func firstByteDiffAt(line, again []byte, off int64) string {
	i := 0
	for i < len(line) && i < len(again) && line[i] == again[i] {
		i++
	}
	return fmt.Sprintf("differs from its canonical form at byte %d", off+int64(i))
}

// offsetLines renumbers a lineError of a batch that starts after first
// lines.
func offsetLines(err error, first int) error {
	if le, ok := err.(lineError); ok {
		le.line += first
		return le
	}
	return err
}
