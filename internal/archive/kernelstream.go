package archive

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"

	"vigil/internal/evidence"
	"vigil/internal/spill"
	"vigil/internal/wire"
)

// KernelStream writes the kernel layer's entry as its events arrive: each
// block is folded into an evidence.Digest, encoded to its lines, hashed,
// and cut into deflate segments that compress on a pool of workers. So a
// recording holds neither its events nor their text, only the compressed
// layer and the digest (and, spilling, not even those whole: see
// NewKernelStreamSpilling); the archive is then assembled around them
// (WriteStreamed). The layer's segments start at its first byte and are
// cut every SegmentBytes of it, as Encode cuts them, so the archive is
// byte for byte the one Encode writes for the same events.
type KernelStream struct {
	sw     *segmentWriter
	h      hash.Hash
	n      int64
	digest *evidence.Digest
	// free holds line buffers whose segments are compressed. Not a
	// sync.Pool: a collection would empty it, and every buffer made
	// anew is memory cleared and touched for the first time.
	free   chan []byte
	err    error
	closed bool
	// files are the scratch files the stream spills to, released with
	// the stream (Abort) or its layer (Release).
	files []*spill.File
}

// KernelLayer is a kernel layer written by a KernelStream: its compressed
// segments, the size and sha256 of its text, and the digest of its
// events.
type KernelLayer struct {
	segs   []*segment
	size   int64
	sum    [sha256.Size]byte
	digest *evidence.Digest
	files  []*spill.File
	// unspooled counts segments the scratch file refused, kept in memory;
	// spoolErr is the first refusal.
	unspooled int64
	spoolErr  error
	released  bool
}

// Release frees the scratch files of a layer from NewKernelStreamSpilling
// once its archive is written (or will not be): the layer cannot be
// written after.
func (l *KernelLayer) Release() error {
	err := closeFiles(l.files)
	l.files, l.segs, l.released = nil, nil, true
	return err
}

func closeFiles(files []*spill.File) error {
	var errs []error
	for _, f := range files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Unspooled reports the compressed segments that stayed in memory because
// the scratch file refused them (the archive still holds them: only the
// memory bound is lost), and the first refusal.
func (l *KernelLayer) Unspooled() (int64, error) { return l.unspooled, l.spoolErr }

// Digest is the digest of exactly the events the layer holds, in order
// (nil for the layer Encode writes of events it was given whole).
func (l *KernelLayer) Digest() *evidence.Digest { return l.digest }

// Size is the layer's size in bytes, uncompressed.
func (l *KernelLayer) Size() int64 { return l.size }

// NewKernelStream starts an empty layer.
func NewKernelStream() *KernelStream {
	return newKernelStream(evidence.NewDigest(), newSegmentWriter(SegmentBytes))
}

// NewKernelStreamSpilling starts an empty layer that keeps a long run out
// of memory: its compressed segments go to an anonymous scratch file in
// dir as they are made, and its digest moves the paths it has seen to
// another once it holds many (evidence.Digest's SpillTo, default
// limits). The files have no name: nothing is left in dir, however the
// process ends. The archive is the same byte for byte. Release the layer,
// or Abort the stream, to free them.
func NewKernelStreamSpilling(dir string) (*KernelStream, error) {
	return newKernelStreamSpilling(dir, evidence.SpillLimits{})
}

func newKernelStreamSpilling(dir string, l evidence.SpillLimits) (*KernelStream, error) {
	paths, err := spill.Create(dir)
	if err != nil {
		return nil, err
	}
	segs, err := spill.Create(dir)
	if err != nil {
		paths.Close()
		return nil, err
	}
	s := newKernelStream(evidence.NewDigest().SpillTo(paths, l), newSpoolingSegmentWriter(SegmentBytes, segs))
	s.files = []*spill.File{paths, segs}
	return s, nil
}

// newKernelStream starts a layer folded into d; nil for a layer whose
// events are held and checked by the caller (Encode).
func newKernelStream(d *evidence.Digest, sw *segmentWriter) *KernelStream {
	return &KernelStream{sw: sw, h: sha256.New(), digest: d, free: make(chan []byte, 16)}
}

// Write appends events, which must follow the ones written before in seq
// order (the digest records any that do not, and the archive is then
// refused). The events may be reused once Write returns. After an error
// (the layer outgrew the entry limit) every Write returns it.
func (s *KernelStream) Write(events []wire.Kernel) error {
	if s.closed {
		return fmt.Errorf("archive: write to a closed kernel stream")
	}
	if s.err != nil || len(events) == 0 {
		return s.err
	}
	s.digest.Add(events)
	var buf []byte
	select {
	case buf = <-s.free:
	default:
	}
	p := appendKernels(buf[:0], events)
	s.lines(p, func() {
		select {
		case s.free <- p:
		default:
		}
	})
	return s.err
}

// lines appends encoded lines p; recycle, once p is compressed, lets its
// buffer serve a later block.
func (s *KernelStream) lines(p []byte, recycle func()) {
	s.h.Write(p)
	s.n += int64(len(p))
	if s.n > limits.entry && s.err == nil {
		// Never write what Read would refuse.
		s.err = fmt.Errorf("%s: more than the per-entry limit of %d bytes", evidence.EntryKernel, limits.entry)
	}
	s.sw.writeOwned(p, recycle)
}

// writeAll writes the whole layer at once, its blocks encoded side by
// side (kernelBlocks), into a stream without a digest: the events stay
// with the caller, whose check folds them itself.
func (s *KernelStream) writeAll(events []wire.Kernel) error {
	kernelBlocks(events, s.lines)
	return s.err
}

// Close waits for the last segments to compress and returns the layer.
func (s *KernelStream) Close() (*KernelLayer, error) {
	if s.closed {
		return nil, fmt.Errorf("archive: kernel stream closed twice")
	}
	s.closed = true
	segs, err := s.sw.close(false)
	if s.err == nil {
		s.err = err
	}
	if s.err != nil {
		s.releaseFiles()
		return nil, s.err
	}
	l := &KernelLayer{segs: segs, size: s.n, digest: s.digest, files: s.files, unspooled: s.sw.spoolFailed.Load()}
	if e := s.sw.spoolErr.Load(); e != nil {
		l.spoolErr = *e
	}
	s.files = nil
	s.h.Sum(l.sum[:0])
	return l, nil
}

// Abort stops the stream's workers; nothing written is kept.
func (s *KernelStream) Abort() {
	if !s.closed {
		s.closed = true
		s.sw.abort()
	}
	s.releaseFiles()
}

func (s *KernelStream) releaseFiles() {
	closeFiles(s.files)
	s.files = nil
}
