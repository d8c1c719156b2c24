package archive

import "io"

// aheadChunkBytes and aheadChunks bound what an aheadReader holds: the
// chunks read and not yet consumed, plus the one being consumed.
const (
	aheadChunkBytes = 1 << 20
	aheadChunks     = 2
)

// aheadReader reads an entry's bytes in a goroutine of its own, ahead of
// the reader that checks them: inflating the kernel layer (about a sixth
// of what verifying it costs) overlaps with checking its lines instead of
// preceding them.
type aheadReader struct {
	full   chan aheadChunk
	free   chan []byte
	stop   chan struct{}
	done   chan struct{}
	cur    []byte // the rest of the chunk being consumed
	buf    []byte // that chunk's buffer, free again once consumed
	err    error  // what ended the reading, once cur is consumed
	closed bool
}

type aheadChunk struct {
	b   []byte
	err error
}

// readAhead starts reading the size bytes of r into chunks for readFull.
// The caller must call close before it uses r again.
func readAhead(r io.Reader, size int64) *aheadReader {
	a := &aheadReader{
		full: make(chan aheadChunk, aheadChunks),
		free: make(chan []byte, aheadChunks+1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(a.done)
		defer close(a.full)
		made := 0
		for left := size; left > 0; {
			// Buffers are made as the data comes (a size that lies costs
			// one), up to aheadChunks+1; then they are reused.
			var b []byte
			select {
			case b = <-a.free:
			default:
				if made < aheadChunks+1 {
					made++
					b = make([]byte, min(size, aheadChunkBytes))
					break
				}
				select {
				case b = <-a.free:
				case <-a.stop:
					return
				}
			}
			k, err := io.ReadFull(r, b[:min(int64(len(b)), left)])
			left -= int64(k)
			select {
			case a.full <- aheadChunk{b[:k], err}:
			case <-a.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// readFull fills p with the entry's next bytes. Its errors are the
// reader's, as io.ReadFull gives them a chunk at a time: io.EOF for an
// entry that ends where a chunk starts, io.ErrUnexpectedEOF inside one.
func (a *aheadReader) readFull(p []byte) error {
	read := 0
	for read < len(p) {
		if len(a.cur) == 0 {
			if a.buf != nil {
				a.free <- a.buf[:cap(a.buf)]
				a.buf = nil
			}
			if a.err != nil {
				break
			}
			c, ok := <-a.full
			if !ok {
				a.err = io.EOF
				break
			}
			a.buf, a.cur, a.err = c.b, c.b, c.err
			continue
		}
		n := copy(p[read:], a.cur)
		read += n
		a.cur = a.cur[n:]
	}
	if read == len(p) {
		return nil
	}
	if a.err == io.EOF && read > 0 {
		return io.ErrUnexpectedEOF
	}
	return a.err // the reader's own: a tar entry cut short says io.ErrUnexpectedEOF
}

// close stops the reading and waits until the goroutine is done with r.
// Closing again does nothing.
func (a *aheadReader) close() {
	if a.closed {
		return
	}
	a.closed = true
	close(a.stop)
	<-a.done
}
