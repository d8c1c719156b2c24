package archive

import (
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"slices"
	"sync"

	"vigil/internal/attest"
	"vigil/internal/evidence"
)

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

// encodeArchiveAtOnce is the archive of b as the encoder made it before it
// streamed, kept to hold encodeArchive to the same bytes: the body entries are marshalled and
// their segments start compressing while the hashes for the manifest are
// computed; then the manifest's segment is compressed and everything is
// joined under one gzip header and trailer. With a key, the signature
// entry (which needs the manifest's hash) is a last segment of its own
// after the body, so an unsigned archive's bytes do not depend on it.
func encodeArchiveAtOnce(b *evidence.Bundle, key *attest.Key) ([]byte, error) {
	body, err := marshalBodyWithKernel(b)
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
	// Three runs of segments: up to the kernel layer's tar header, its
	// text (no segment when empty), and the rest.
	k := slices.IndexFunc(body, func(f file) bool { return f.path == evidence.EntryKernel })
	before, layer, after := bodyPieces[:3*k+1], bodyPieces[3*k+1:3*k+2], bodyPieces[3*k+2:]
	segs := cut(before, SegmentBytes)
	if len(layer[0]) > 0 {
		segs = append(segs, cut(layer, SegmentBytes)...)
	}
	segs = append(segs, cut(after, SegmentBytes)...)
	wait := deflateAll(segs, key != nil)
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
	compressed, err := wait()
	if err != nil {
		return nil, err
	}
	n := 10 + len(head) + len(tail) + 8
	for _, s := range compressed {
		n += len(s)
	}
	out := make([]byte, 0, n)
	out = append(out, gzipHeader()...)
	out = append(out, head...)
	for _, s := range compressed {
		out = append(out, s...)
	}
	out = append(out, tail...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, uint32(size)), nil
}
