package archive

import (
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"
	"sync/atomic"
)

// segmentWriter cuts the stream written to it into segments of size bytes,
// at the points cut would, and compresses each on a pool of workers as
// soon as it is known to be full and not the last (the last one ends the
// deflate stream, or not, as close says). So the stream is never held
// whole uncompressed: what a worker has compressed is dropped. A segment
// holding bytes written with hold (the kernel layer's tar header, whose
// size is known only once the layer is encoded) waits for release, which
// the writer calls once it has filled those bytes in.
type segmentWriter struct {
	size    int
	cur     *segment
	pending []*segment // full and followed by more, held
	segs    []*segment // every segment, in stream order
	jobs    chan *segment
	workers sync.WaitGroup
	stop    sync.Once
}

type segment struct {
	pieces [][]byte // dropped once compressed
	refs   []*pieceRef
	n      int
	held   bool
	final  bool
	out    []byte
	crc    uint32
	err    error
}

func newSegmentWriter(size int) *segmentWriter {
	w := &segmentWriter{size: size, cur: &segment{}}
	w.segs = append(w.segs, w.cur)
	n := runtime.GOMAXPROCS(0)
	// A job queue as long as the pool: the writer waits when the workers
	// fall behind, which bounds what is held uncompressed.
	w.jobs = make(chan *segment, n)
	for range n {
		w.workers.Add(1)
		go func() {
			defer w.workers.Done()
			var d deflater
			for s := range w.jobs {
				for _, p := range s.pieces {
					s.crc = crc32.Update(s.crc, crc32.IEEETable, p)
				}
				s.out, s.err = d.segment(s.pieces, s.final)
				s.pieces = nil
				for _, r := range s.refs {
					r.release()
				}
				s.refs = nil
			}
		}()
	}
	return w
}

// pieceRef counts the segments still to compress that hold part of a
// piece, plus one for the writer while it is still cutting the piece.
type pieceRef struct {
	left atomic.Int32
	done func()
}

func (r *pieceRef) release() {
	if r.left.Add(-1) == 0 {
		r.done()
	}
}

// write appends p (not copied: it must not change until compressed,
// except bytes written with hold, until release).
func (w *segmentWriter) write(p []byte, hold bool) { w.writeOwned(p, hold, nil) }

// writeOwned is write that calls done, when set, once every segment that
// holds part of p has been compressed: p's memory may then be reused.
func (w *segmentWriter) writeOwned(p []byte, hold bool, done func()) {
	var ref *pieceRef
	if done != nil {
		ref = &pieceRef{done: done}
		ref.left.Store(1)
		defer ref.release()
	}
	for len(p) > 0 {
		if w.cur.n == w.size {
			// More follows the full segment: it is not the last.
			w.pending = append(w.pending, w.cur)
			w.cur = &segment{}
			w.segs = append(w.segs, w.cur)
			w.dispatchPending()
		}
		take := min(len(p), w.size-w.cur.n)
		w.cur.pieces = append(w.cur.pieces, p[:take])
		if ref != nil && (len(w.cur.refs) == 0 || w.cur.refs[len(w.cur.refs)-1] != ref) {
			ref.left.Add(1)
			w.cur.refs = append(w.cur.refs, ref)
		}
		w.cur.n += take
		w.cur.held = w.cur.held || hold
		p = p[take:]
	}
}

// release lets the segments with held bytes go: the bytes are final.
func (w *segmentWriter) release() {
	for _, s := range w.pending {
		s.held = false
	}
	w.cur.held = false
	w.dispatchPending()
}

func (w *segmentWriter) dispatchPending() {
	kept := w.pending[:0]
	for _, s := range w.pending {
		if s.held {
			kept = append(kept, s)
		} else {
			w.jobs <- s
		}
	}
	w.pending = kept
}

// close compresses what is left, the last segment ending the deflate
// stream when final, and returns every segment in order.
func (w *segmentWriter) close(final bool) ([]*segment, error) {
	if len(w.pending) > 0 || w.cur.held {
		w.abort()
		return nil, fmt.Errorf("archive: held bytes never released")
	}
	w.cur.final = final
	w.jobs <- w.cur
	w.abort()
	for _, s := range w.segs {
		if s.err != nil {
			return nil, s.err
		}
	}
	return w.segs, nil
}

// abort stops the workers once they have finished what they were given.
func (w *segmentWriter) abort() {
	w.stop.Do(func() { close(w.jobs) })
	w.workers.Wait()
}
