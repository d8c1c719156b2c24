package archive

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"

	"vigil/internal/attest"
	"vigil/internal/evidence"
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
		var hdr bytes.Buffer
		tw := tar.NewWriter(&hdr)
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.path,
			Mode:     entryMode,
			Size:     f.size(),
			ModTime:  epoch,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		out = append(out, hdr.Bytes())
		out = append(out, f.pieces()...)
		out = append(out, zeros[:(512-f.size()%512)%512])
	}
	return out, nil
}

// cut splits the stream pieces into segments of size bytes (the last one
// shorter), as lists of sub-slices.
func cut(pieces [][]byte, size int) [][][]byte {
	var segs [][][]byte
	var cur [][]byte
	n := 0
	for _, p := range pieces {
		for len(p) > 0 {
			take := min(len(p), size-n)
			cur = append(cur, p[:take])
			p = p[take:]
			if n += take; n == size {
				segs, cur, n = append(segs, cur), nil, 0
			}
		}
	}
	if len(cur) > 0 || len(segs) == 0 {
		segs = append(segs, cur)
	}
	return segs
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

// deflateAll compresses segs in parallel, the last one final unless more
// follows. wait returns the results in order.
func deflateAll(segs [][][]byte, more bool) (wait func() ([][]byte, error)) {
	out := make([][]byte, len(segs))
	errs := make([]error, len(segs))
	workers := min(runtime.GOMAXPROCS(0), len(segs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d deflater
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(segs) {
					return
				}
				out[i], errs[i] = d.segment(segs[i], !more && i == len(segs)-1)
			}
		}()
	}
	return func() ([][]byte, error) {
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
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

// encodeArchive is the archive of b: the body entries are marshalled and
// their segments start compressing while the hashes for the manifest are
// computed; then the manifest's segment is compressed and everything is
// joined under one gzip header and trailer. With a key, the signature
// entry (which needs the manifest's hash) is a last segment of its own
// after the body, so an unsigned archive's bytes do not depend on it.
func encodeArchive(b *evidence.Bundle, key *attest.Key) ([]byte, error) {
	body, err := marshalBody(b)
	if err != nil {
		return nil, err
	}
	bodyPieces, err := tarPieces(body)
	if err != nil {
		return nil, err
	}
	var tailPieces [][]byte
	if key == nil {
		bodyPieces = append(bodyPieces, zeros) // two zero blocks end the tar
	}
	wait := deflateAll(cut(bodyPieces, SegmentBytes), key != nil)
	mf, err := manifestFor(b, body)
	if err != nil {
		wait()
		return nil, err
	}
	headPieces, err := tarPieces([]file{mf})
	if err != nil {
		wait()
		return nil, err
	}
	var d deflater
	head, err := d.segment(headPieces, false)
	if err != nil {
		wait()
		return nil, err
	}
	var tail []byte
	if key != nil {
		sig, err := signatureFor(b, mf, key)
		if err != nil {
			wait()
			return nil, err
		}
		if tailPieces, err = tarPieces([]file{sig}); err != nil {
			wait()
			return nil, err
		}
		tailPieces = append(tailPieces, zeros)
		if tail, err = d.segment(tailPieces, true); err != nil {
			wait()
			return nil, err
		}
	}
	crc, size := uint32(0), 0
	for _, p := range slices.Concat(headPieces, bodyPieces, tailPieces) {
		crc = crc32.Update(crc, crc32.IEEETable, p)
		size += len(p)
	}
	segs, err := wait()
	if err != nil {
		return nil, err
	}
	n := 10 + len(head) + len(tail) + 8
	for _, s := range segs {
		n += len(s)
	}
	out := make([]byte, 0, n)
	out = append(out, gzipHeader()...)
	out = append(out, head...)
	for _, s := range segs {
		out = append(out, s...)
	}
	out = append(out, tail...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, uint32(size)), nil
}
