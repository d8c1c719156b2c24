package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"

	"github.com/klauspost/compress/flate"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// SegmentBytes is how much of the uncompressed tar stream after the
// manifest goes into one deflate segment. The archive is one gzip member
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

// segment compresses seg on its own; final ends the deflate stream.
func (d *deflater) segment(seg [][]byte, final bool) ([]byte, error) {
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
	return bytes.Clone(d.out.Bytes()), err
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

// encodeArchive is the archive of b. The body entries are written to a
// segmentWriter in order, each hashed on the way, and their segments
// compress while later ones are written: the kernel layer is encoded a
// block at a time, its blocks in parallel, and no block is held longer
// than it takes to compress it. Then the manifest (which needs the
// hashes) gets its own first segment, and everything is joined under one
// gzip header and trailer whose CRC combines the segments'. With a key,
// the signature entry (which needs the manifest's hash) is a last segment
// of its own after the body, so an unsigned archive's bytes do not depend
// on it.
func encodeArchive(b *evidence.Bundle, key *attest.Key) ([][]byte, error) {
	body, err := marshalBody(b)
	if err != nil {
		return nil, err
	}
	sw := newSegmentWriter(SegmentBytes)
	entries := make([]ManifestEntry, 0, len(body))
	for _, f := range body {
		e, err := writeEntry(sw, f, b.Kernel)
		if err != nil {
			sw.abort()
			return nil, err
		}
		entries = append(entries, e)
	}
	if key == nil {
		sw.write(zeros, false) // two zero blocks end the tar
	}
	segs, err := sw.close(key == nil)
	if err != nil {
		return nil, err
	}
	mf, err := manifestOf(b, entries)
	if err != nil {
		return nil, err
	}
	headPieces, err := tarPieces([]file{mf})
	if err != nil {
		return nil, err
	}
	var d deflater
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
	out := make([][]byte, 0, len(segs)+4)
	out = append(out, gzipHeader(), head)
	for _, s := range segs {
		out = append(out, s.out)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, crc)
	return append(out, tail, binary.LittleEndian.AppendUint32(trailer, uint32(size))), nil
}

// writeEntry writes f's tar header, data and padding to sw and returns its
// manifest entry. The kernel layer (f without data) is encoded from
// kernel as it is written; its header is filled in once its size is known.
func writeEntry(sw *segmentWriter, f file, kernel []wire.Kernel) (ManifestEntry, error) {
	h := sha256.New()
	if f.path != evidence.EntryKernel {
		hdr, err := tarHeader(f.path, f.size())
		if err != nil {
			return ManifestEntry{}, err
		}
		sw.write(hdr, false)
		h.Write(f.data)
		sw.write(f.data, false)
		sw.write(zeros[:(512-f.size()%512)%512], false)
		return ManifestEntry{Path: f.path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: f.size()}, nil
	}
	hdr := make([]byte, 512)
	sw.write(hdr, true)
	var size int64
	kernelBlocks(kernel, func(p []byte, recycle func()) {
		h.Write(p)
		size += int64(len(p))
		sw.writeOwned(p, false, recycle)
	})
	// Never write what Read would refuse.
	if size > limits.entry {
		return ManifestEntry{}, fmt.Errorf("%s: %d bytes exceeds the per-entry limit of %d", f.path, size, limits.entry)
	}
	full, err := tarHeader(f.path, size)
	if err != nil {
		return ManifestEntry{}, err
	}
	copy(hdr, full)
	sw.release()
	sw.write(zeros[:(512-size%512)%512], false)
	return ManifestEntry{Path: f.path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: size}, nil
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
