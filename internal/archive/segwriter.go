package archive

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"vigil/internal/spill"
)

// segmentWriter cuts the stream written to it into segments of size bytes,
// at the points cut would, and compresses each on a pool of workers as
// soon as it is known to be full and not the last (the last one ends the
// deflate stream, or not, as close says). So the stream is never held
// whole uncompressed: what a worker has compressed is dropped.
//
// With a spool, each compressed segment goes to that scratch file and is
// dropped from memory too, so a long recording holds none of its layer;
// a segment the spool refuses stays in memory (counted: spoolFailed).
type segmentWriter struct {
	size    int
	cur     *segment
	segs    []*segment // every segment, in stream order
	jobs    chan *segment
	workers sync.WaitGroup
	// started workers of at most maxWorkers, started as segments come
	// (submit); only the writing goroutine starts them.
	started, maxWorkers int
	stop                sync.Once
	spool               *spill.File
	// spoolFailed counts segments kept in memory because the spool
	// refused them; spoolErr is the first refusal.
	spoolFailed atomic.Int64
	spoolErr    atomic.Pointer[error]
}

type segment struct {
	pieces [][]byte // dropped once compressed
	refs   []*pieceRef
	n      int
	final  bool
	out    []byte // the compressed bytes, unless spooled
	crc    uint32
	err    error
	// spooled says the compressed bytes are outN bytes at off in spool.
	spooled bool
	spool   *spill.File
	off     int64
	outN    int64
}

// writeTo writes s's compressed bytes to w.
func (s *segment) writeTo(w io.Writer) error {
	if !s.spooled {
		_, err := w.Write(s.out)
		return err
	}
	n, err := io.Copy(w, s.spool.Section(s.off, s.outN))
	if err == nil && n != s.outN {
		err = fmt.Errorf("archive: a compressed segment read back %d of its %d bytes", n, s.outN)
	}
	return err
}

func newSegmentWriter(size int) *segmentWriter { return newSpoolingSegmentWriter(size, nil) }

// newSpoolingSegmentWriter is newSegmentWriter whose compressed segments
// go to spool (nil: they stay in memory).
func newSpoolingSegmentWriter(size int, spool *spill.File) *segmentWriter {
	w := &segmentWriter{size: size, cur: &segment{}, spool: spool}
	w.segs = append(w.segs, w.cur)
	n := runtime.GOMAXPROCS(0)
	// A job queue as long as the pool: the writer waits when the workers
	// fall behind, which bounds what is held uncompressed.
	w.jobs = make(chan *segment, n)
	w.maxWorkers = n
	return w
}

// submit queues s for compression, starting a worker for it while there
// are fewer than the pool's size: a small stream (one segment) takes one
// compressor, not one per CPU.
func (w *segmentWriter) submit(s *segment) {
	if w.started < w.maxWorkers {
		w.started++
		w.workers.Add(1)
		go w.work()
	}
	w.jobs <- s
}

// work compresses queued segments until the queue is closed.
func (w *segmentWriter) work() {
	defer w.workers.Done()
	d := deflaters.Get().(*deflater)
	defer deflaters.Put(d)
	for s := range w.jobs {
		for _, p := range s.pieces {
			s.crc = crc32.Update(s.crc, crc32.IEEETable, p)
		}
		if w.spool == nil {
			s.out, s.err = d.segment(s.pieces, s.final)
		} else {
			w.compressToSpool(d, s)
		}
		s.pieces = nil
		for _, r := range s.refs {
			r.release()
		}
		s.refs = nil
	}
}

// compressToSpool compresses s into the spool, or into memory should the
// spool refuse it.
func (w *segmentWriter) compressToSpool(d *deflater, s *segment) {
	out, err := d.compress(s.pieces, s.final)
	if err != nil {
		s.err = err
		return
	}
	off, err := w.spool.Append(out)
	if err != nil {
		w.spoolFailed.Add(1)
		w.spoolErr.CompareAndSwap(nil, &err)
		s.out = bytes.Clone(out)
		return
	}
	s.spooled, s.spool, s.off, s.outN = true, w.spool, off, int64(len(out))
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

// write appends p (not copied: it must not change until compressed).
func (w *segmentWriter) write(p []byte) { w.writeOwned(p, nil) }

// writeOwned is write that calls done, when set, once every segment that
// holds part of p has been compressed: p's memory may then be reused.
func (w *segmentWriter) writeOwned(p []byte, done func()) {
	var ref *pieceRef
	if done != nil {
		ref = &pieceRef{done: done}
		ref.left.Store(1)
		defer ref.release()
	}
	for len(p) > 0 {
		if w.cur.n == w.size {
			// More follows the full segment: it is not the last.
			w.submit(w.cur)
			w.cur = &segment{}
			w.segs = append(w.segs, w.cur)
		}
		take := min(len(p), w.size-w.cur.n)
		w.cur.pieces = append(w.cur.pieces, p[:take])
		if ref != nil && (len(w.cur.refs) == 0 || w.cur.refs[len(w.cur.refs)-1] != ref) {
			ref.left.Add(1)
			w.cur.refs = append(w.cur.refs, ref)
		}
		w.cur.n += take
		p = p[take:]
	}
}

// close compresses what is left, the last segment ending the deflate
// stream when final, and returns every segment in order. A stream that
// was never written to and does not end the deflate stream has no
// segment.
func (w *segmentWriter) close(final bool) ([]*segment, error) {
	w.cur.final = final
	if w.cur.n == 0 && !final {
		w.segs = w.segs[:len(w.segs)-1]
	} else {
		w.submit(w.cur)
	}
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
