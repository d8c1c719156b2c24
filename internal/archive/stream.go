package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"slices"
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
// checked: the most a bad entry is inflated past its first bad line.
const pieceBytes = 4 << 20

// batchLines is how many lines are validated together.
const batchLines = 16 << 10

// readEntry reads the size bytes of entry name from r a piece at a time,
// hashing them and, for an NDJSON entry, validating every line completed
// by the piece before the next piece is read. The buffer grows as data
// arrives rather than to the declared size, so a size that lies costs
// nothing until the bytes are there.
func readEntry(r io.Reader, name string, size int64) (file, error) {
	f := file{path: name}
	h := sha256.New()
	var lc *lineCheck
	if strings.HasSuffix(name, ".ndjson") {
		lc = &lineCheck{name: name, schema: evidence.EntrySchemas[name], kernel: name == evidence.EntryKernel, proven: true}
	}
	data := make([]byte, 0, min(size, pieceBytes))
	for int64(len(data)) < size {
		k := int(min(size-int64(len(data)), pieceBytes))
		if cap(data)-len(data) < k {
			grown := make([]byte, len(data), min(size, max(2*int64(cap(data)), int64(len(data)+k))))
			copy(grown, data)
			data = grown
		}
		piece := data[len(data) : len(data)+k]
		if _, err := io.ReadFull(r, piece); err != nil {
			return f, entryErr(name, "truncated: %v", err)
		}
		h.Write(piece)
		data = data[:len(data)+k]
		if lc != nil {
			if err := lc.check(data, int64(len(data)) == size); err != nil {
				return f, err
			}
		}
	}
	if lc != nil && size == 0 {
		if err := lc.check(data, true); err != nil {
			return f, err
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	f.data, f.sum = data, &sum
	if lc != nil {
		f.checked = true
		// Every line proven and a final newline make the entry exactly
		// marshalKernel of the events: decoding it again would give the
		// same events and pass the canonical check.
		if lc.kernel && lc.proven && len(data) > 0 && data[len(data)-1] == '\n' {
			f.kernel = lc.events
		}
	}
	return f, nil
}

// lineCheck validates an NDJSON entry's lines as they arrive. For the
// kernel layer it also requires strictly increasing seq (which
// evidence.Check requires of the whole layer) so that a flood of copies
// of one valid line fails at its second line, and it keeps the events
// provenKernelLine decoded on the way.
type lineCheck struct {
	name, schema string
	kernel       bool
	done         int // bytes of data already checked
	lines        int // lines already checked
	events       []wire.Kernel
	proven       bool // every kernel line so far was proven (events is the layer so far)
	haveSeq      bool
	lastSeq      uint64
}

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
		if err := c.checkLines(data[c.done:next]); err != nil {
			return err
		}
		c.done = next
	}
	if len(data)-c.done > MaxLineBytes {
		return entryErr(c.name, "line %d: longer than %d bytes", c.lines+1, MaxLineBytes)
	}
	return nil
}

// checkLines checks the next complete lines of the entry.
func (c *lineCheck) checkLines(chunk []byte) error {
	lines := splitLines(chunk)
	first := c.lines
	c.lines += len(lines)
	if !c.kernel {
		if err := validateLinesOf(c.schema, lines, nil); err != nil {
			return entryErr(c.name, "schema %s: %v", c.schema, offsetLines(err, first))
		}
		return nil
	}
	// While every line so far is proven, the events are decoded straight
	// into the layer's slice.
	var events []wire.Kernel
	if c.proven {
		base := len(c.events)
		c.events = slices.Grow(c.events, len(lines))[:base+len(lines)]
		events = c.events[base:]
	} else {
		events = make([]wire.Kernel, len(lines))
	}
	ok := make([]bool, len(lines))
	prove := func(i int, line []byte, s *proveScratch) bool {
		ok[i] = provenKernelLine(line, &events[i], s)
		return ok[i]
	}
	if err := validateLinesOf(c.schema, lines, prove); err != nil {
		return entryErr(c.name, "schema %s: %v", c.schema, offsetLines(err, first))
	}
	for i, line := range lines {
		seq := events[i].Seq
		if !ok[i] {
			// Schema-valid but not in canonical form: only its seq is
			// needed here (decoding proper comes later).
			var s struct {
				Seq uint64 `json:"seq"`
			}
			if err := json.Unmarshal(line, &s); err != nil {
				return entryErr(c.name, "line %d: %v", first+i+1, err)
			}
			seq, c.proven = s.Seq, false
		}
		if c.haveSeq && seq <= c.lastSeq {
			return entryErr(c.name, "line %d: seq %d does not follow seq %d", first+i+1, seq, c.lastSeq)
		}
		c.haveSeq, c.lastSeq = true, seq
	}
	if !c.proven {
		c.events = nil
	}
	return nil
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
