package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"

	"vigil/internal/attest"
	"vigil/internal/evidence"
)

// SegmentBytes is how much of the uncompressed tar stream after the
// manifest goes into one deflate segment; the kernel layer's text starts
// a segment of its own and so does what follows it (see encodeArchive).
// The archive is one gzip member
// whose deflate stream is a run of segments, each compressed on its own
// (no back-references into the one before) and ended by a sync flush
// (so it ends on a byte boundary), the last one by the final block: the
// way pigz cuts its input. Segments compress in parallel, and all but the
// manifest's while the manifest's hashes are still being computed. The
// cut points depend only on the bundle, never on the number of CPUs, so
// the bytes are reproducible; each cut costs a few bytes of output.
const SegmentBytes = 512 << 10

// zeros is tar padding and the end-of-archive marker (read only).
var zeros = make([]byte, 1024)

// tarPieces is the tar stream of files, as slices of the files' own data
// (nothing copied): per entry a USTAR header, the data and the padding to
// 512 bytes. A USTAR header depends only on its own entry, so headers can
// be made one at a time.
func tarPieces(files []file) ([][]byte, error) {
	out := make([][]byte, 0, 3*len(files))
	for _, f := range files {
		hdr, err := tarHeader(f.path, f.size())
		if err != nil {
			return nil, err
		}
		out = append(out, hdr, f.data)
		out = append(out, zeros[:(512-f.size()%512)%512])
	}
	return out, nil
}

// deflater compresses segments; one per goroutine, reused.
type deflater struct {
	w   *flate.Writer
	out bytes.Buffer
}

// deflaters are the deflaters no goroutine is using. A compressor's
// tables take about a megabyte to make and clear, which for a small
// archive cost more than compressing it: writing one takes five
// (both segment writers' workers and the manifest's), and a recording's
// kernel stream has made its own by then.
var deflaters = sync.Pool{New: func() any { return new(deflater) }}

// WarmCompressors makes the compressors writing a small archive takes at
// once (one per segment writer and the manifest's), or one per CPU if
// fewer, ahead of need, so that a caller with time to spare (vigil record,
// while its programs load) does not pay for them when it writes. A
// collection may drop them again; a long recording's kernel stream
// returns its own to the pool before the archive is written.
func WarmCompressors() {
	ds := make([]*deflater, min(runtime.GOMAXPROCS(0), 3))
	for i := range ds {
		ds[i] = deflaters.Get().(*deflater)
		ds[i].compress([][]byte{{0}}, true) // allocates what compressing does
	}
	for _, d := range ds {
		deflaters.Put(d)
	}
}

// segment compresses seg on its own; final ends the deflate stream.
func (d *deflater) segment(seg [][]byte, final bool) ([]byte, error) {
	out, err := d.compress(seg, final)
	return bytes.Clone(out), err
}

// compress is segment into d's own buffer, valid until the next call.
func (d *deflater) compress(seg [][]byte, final bool) ([]byte, error) {
	d.out.Reset()
	if d.w == nil {
		w, err := flate.NewWriter(&d.out, CompressionLevel)
		if err != nil {
			return nil, err
		}
		d.w = w
	} else {
		d.w.Reset(&d.out)
	}
	for _, p := range seg {
		if _, err := d.w.Write(p); err != nil {
			return nil, err
		}
	}
	var err error
	if final {
		err = d.w.Close()
	} else {
		err = d.w.Flush()
	}
	return d.out.Bytes(), err
}

// gzipHeader is what compress/gzip writes for a zero Header: no name, no
// comment, mtime 0, the extra flags of the level, OS unknown (255).
func gzipHeader() []byte {
	xfl := byte(0)
	switch CompressionLevel {
	case flate.BestSpeed:
		xfl = 4
	case flate.BestCompression:
		xfl = 2
	}
	return []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255}
}

// encodeArchive is the archive of b, whose kernel layer is layer (nil:
// encode b.Kernel now). The stream after the manifest is three runs of
// segments: the entries before the kernel layer with its tar header; the
// layer's text, cut from its own first byte (so a recording can compress
// it while it runs, before the entries ahead of it exist); and the rest.
// The body entries are hashed as they are written, the manifest (which
// needs the hashes) gets its own first segment, and everything is joined
// under one gzip header and trailer whose CRC combines the segments'.
// With a key, the signature entry (which needs the manifest's hash) is a
// last segment of its own after the body, so an unsigned archive's bytes
// do not depend on it.
func encodeArchive(b *evidence.Bundle, layer *KernelLayer, key *attest.Key) (archivePieces, error) {
	body, err := marshalBody(b)
	if err != nil {
		return nil, err
	}
	if layer == nil {
		ks := newKernelStream(nil, newSegmentWriter(SegmentBytes))
		if err := ks.writeAll(b.Kernel); err != nil {
			ks.Abort()
			return nil, err
		}
		if layer, err = ks.Close(); err != nil {
			return nil, err
		}
	}
	kernelHdr, err := tarHeader(evidence.EntryKernel, layer.size)
	if err != nil {
		return nil, err
	}
	var entries []ManifestEntry
	before := newSegmentWriter(SegmentBytes)
	after := newSegmentWriter(SegmentBytes)
	write := func(sw *segmentWriter, f file) error {
		e, err := writeEntry(sw, f)
		if err != nil {
			before.abort()
			after.abort()
		}
		entries = append(entries, e)
		return err
	}
	se, err := writeSurface(before, &b.Surface, b.SurfacePathSource())
	if err != nil {
		before.abort()
		after.abort()
		return nil, err
	}
	entries = append(entries, se)
	i := 0
	for ; i < len(body) && body[i].path < evidence.EntryKernel; i++ {
		if err := write(before, body[i]); err != nil {
			return nil, err
		}
	}
	before.write(kernelHdr)
	entries = append(entries, ManifestEntry{Path: evidence.EntryKernel, SHA256: hex.EncodeToString(layer.sum[:]), Bytes: layer.size})
	after.write(zeros[:(512-layer.size%512)%512])
	for ; i < len(body); i++ {
		if err := write(after, body[i]); err != nil {
			return nil, err
		}
	}
	if key == nil {
		after.write(zeros) // two zero blocks end the tar
	}
	segsBefore, err := before.close(false)
	if err != nil {
		after.abort()
		return nil, err
	}
	segsAfter, err := after.close(key == nil)
	if err != nil {
		return nil, err
	}
	segs := slices.Concat(segsBefore, layer.segs, segsAfter)
	mf, err := manifestOf(b, entries)
	if err != nil {
		return nil, err
	}
	headPieces, err := tarPieces([]file{mf})
	if err != nil {
		return nil, err
	}
	d := deflaters.Get().(*deflater)
	defer deflaters.Put(d)
	head, err := d.segment(headPieces, false)
	if err != nil {
		return nil, err
	}
	var tail []byte
	var tailPieces [][]byte
	if key != nil {
		sig, err := signatureFor(b, mf, key)
		if err != nil {
			return nil, err
		}
		if tailPieces, err = tarPieces([]file{sig}); err != nil {
			return nil, err
		}
		tailPieces = append(tailPieces, zeros)
		if tail, err = d.segment(tailPieces, true); err != nil {
			return nil, err
		}
	}
	crc, size := uint32(0), int64(0)
	for _, p := range headPieces {
		crc = crc32.Update(crc, crc32.IEEETable, p)
		size += int64(len(p))
	}
	for _, s := range segs {
		crc = crc32Combine(crc, s.crc, int64(s.n))
		size += int64(s.n)
	}
	for _, p := range tailPieces {
		crc = crc32.Update(crc, crc32.IEEETable, p)
		size += int64(len(p))
	}
	// The archive is these pieces in order; joining them would copy
	// the whole compressed archive once more.
	out := make(archivePieces, 0, len(segs)+4)
	out = append(out, piece{b: gzipHeader()}, piece{b: head})
	for _, s := range segs {
		out = append(out, piece{seg: s})
	}
	trailer := binary.LittleEndian.AppendUint32(nil, crc)
	return append(out, piece{b: tail}, piece{b: binary.LittleEndian.AppendUint32(trailer, uint32(size))}), nil
}

// archivePieces are an archive's bytes in order: held, or compressed
// segments, which may be in a scratch file.
type archivePieces []piece

type piece struct {
	b   []byte
	seg *segment
}

// writeTo writes the pieces to w in order.
func (ps archivePieces) writeTo(w io.Writer) error {
	for _, p := range ps {
		var err error
		if p.seg != nil {
			err = p.seg.writeTo(w)
		} else {
			_, err = w.Write(p.b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes f's tar header, data and padding to sw and returns its
// manifest entry.
func writeEntry(sw *segmentWriter, f file) (ManifestEntry, error) {
	hdr, err := tarHeader(f.path, f.size())
	if err != nil {
		return ManifestEntry{}, err
	}
	sum := sha256.Sum256(f.data)
	sw.write(hdr)
	sw.write(f.data)
	sw.write(zeros[:(512-f.size()%512)%512])
	return ManifestEntry{Path: f.path, SHA256: hex.EncodeToString(sum[:]), Bytes: f.size()}, nil
}

// tarHeader is the USTAR header of a regular file: it depends only on the
// entry's path and size.
func tarHeader(path string, size int64) ([]byte, error) {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	h := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     path,
		Mode:     entryMode,
		Size:     size,
		ModTime:  epoch,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return hdr.Bytes(), nil
}
