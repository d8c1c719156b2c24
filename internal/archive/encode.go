package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	"vigil/internal/atomicfile"
	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Encode writes b as an archive to w. It refuses, before writing anything,
// a bundle whose documents disagree (evidence.Check) or that exceeds the
// read limits, so Verify cannot reject what it writes on those grounds;
// schema validity of the values (an unknown event kind, say) is checked by
// Verify only. The check runs alongside the encoding, which is buffered
// until the check has passed.
func Encode(w io.Writer, b *evidence.Bundle) error { return EncodeSigned(w, b, nil) }

// EncodeSigned is Encode that, with a key, adds the signature entry:
// a DSSE envelope over an in-toto statement naming manifest.json and
// every entry it lists (package attest). A nil key encodes unsigned.
func EncodeSigned(w io.Writer, b *evidence.Bundle, key *attest.Key) error {
	if b.Streamed != nil {
		return fmt.Errorf("archive: a streamed bundle is written with its kernel layer (WriteStreamed)")
	}
	return encodeTo(w, b, nil, key)
}

// encodeTo writes b, whose kernel layer is layer (nil: b.Kernel).
func encodeTo(w io.Writer, b *evidence.Bundle, layer *KernelLayer, key *attest.Key) error {
	checked := make(chan error, 1)
	go func() { checked <- evidence.Check(b) }()
	out, err := encodeArchive(b, layer, key)
	if cerr := <-checked; cerr != nil {
		var ee *evidence.EntryError
		if !errors.As(cerr, &ee) {
			return fmt.Errorf("checking the bundle: %w", cerr) // the scratch store failed
		}
		return fmt.Errorf("inconsistent bundle: %w", cerr)
	}
	if err != nil {
		return err
	}
	return out.writeTo(w)
}

// Write writes b to path atomically, by atomicfile.WriteFrom: on an error
// path is left as it was and no temporary file stays beside it (an error
// syncing the directory comes after the complete archive is in place).
// Errors name path.
func Write(path string, b *evidence.Bundle) error { return WriteSigned(path, b, nil) }

// WriteSigned is Write with EncodeSigned.
func WriteSigned(path string, b *evidence.Bundle, key *attest.Key) error {
	return atomicfile.WriteFrom(path, func(w io.Writer) error { return EncodeSigned(w, b, key) })
}

// WriteStreamed is WriteSigned for a bundle whose kernel layer was
// written as it arrived: b is evidence.AssembleStreamed of layer's
// digest, and the archive is byte for byte the one Write makes of the
// same events held in memory.
func WriteStreamed(path string, b *evidence.Bundle, layer *KernelLayer, key *attest.Key) error {
	if b.Streamed == nil || b.Streamed != layer.digest {
		return fmt.Errorf("archive: the bundle was not assembled from this kernel layer's digest")
	}
	if layer.released {
		return fmt.Errorf("archive: the kernel layer was released")
	}
	return atomicfile.WriteFrom(path, func(w io.Writer) error { return encodeTo(w, b, layer, key) })
}

// file is one archive entry. What reading has already established rides
// along, so decoding does not do it twice.
type file struct {
	path string
	data []byte
	// n is the entry's size when data is nil: the kernel layer's data is
	// not kept when read (kernel holds its events), nor made before it is
	// written (writeEntry encodes it as it goes), and a surface read into
	// a scratch file is there (spooled).
	n       int64
	sum     *[sha256.Size]byte // sha256 of data, when known
	checked bool               // every line already schema-valid (NDJSON)
	kernel  []wire.Kernel      // the kernel layer's events, when read
	digest  *evidence.Digest   // or their digest, when read folding
	spooled *spooled           // where the text is, when read into a scratch file
}

// size is the length of the entry's data.
func (f *file) size() int64 {
	if f.data == nil {
		return f.n
	}
	return int64(len(f.data))
}

// marshalBody encodes every entry of b but the manifest, the capability
// surface (writeSurface) and the kernel layer (KernelStream), sorted by
// path.
func marshalBody(b *evidence.Bundle) ([]file, error) {
	docs := []struct {
		path string
		skip bool
		enc  func() ([]byte, error)
	}{
		{evidence.EntryRun, false, func() ([]byte, error) { return marshalDoc(&b.Run) }},
		{evidence.EntrySDK, len(b.SDK) == 0, func() ([]byte, error) { return marshalLines(b.SDK) }},
		{evidence.EntryCorrelation, b.Correlation == nil, func() ([]byte, error) { return marshalDoc(b.Correlation) }},
		{evidence.EntryHealth, false, func() ([]byte, error) { return marshalDoc(&b.Health) }},
	}
	var files []file
	for _, d := range docs {
		if d.skip {
			continue
		}
		f := file{path: d.path}
		data, err := d.enc()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.path, err)
		}
		f.data = data
		// Never write what Read would refuse.
		if n := f.size(); n > limits.entry {
			return nil, fmt.Errorf("%s: %d bytes exceeds the per-entry limit of %d", d.path, n, limits.entry)
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

// manifestOf is the manifest listing entries. It also refuses an archive
// whose uncompressed tar would exceed the read limit.
func manifestOf(b *evidence.Bundle, entries []ManifestEntry) (file, error) {
	m := Manifest{Schema: evidence.ManifestSchema, RunID: b.Run.RunID, VigilVersion: b.Run.VigilVersion, Entries: entries}
	md, err := marshalDoc(&m)
	if err != nil {
		return file{}, fmt.Errorf("%s: %w", evidence.EntryManifest, err)
	}
	if int64(len(md)) > limits.manifest {
		return file{}, fmt.Errorf("%s: %d bytes exceeds the limit of %d", evidence.EntryManifest, len(md), limits.manifest)
	}
	// Each entry costs its data rounded up to 512-byte blocks plus a
	// 512-byte header; the tar ends with two zero blocks.
	tarBytes := int64(1024) + 512 + (int64(len(md))+511)/512*512
	for _, e := range entries {
		tarBytes += 512 + (e.Bytes+511)/512*512
	}
	if tarBytes > limits.total {
		return file{}, fmt.Errorf("archive of %d bytes uncompressed exceeds the limit of %d", tarBytes, limits.total)
	}
	return file{path: evidence.EntryManifest, data: md}, nil
}

// marshalDoc is the canonical encoding of a JSON document entry.
func marshalDoc(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// marshalLines is the canonical encoding of an NDJSON entry.
func marshalLines[T any](items []T) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(items) * 256)
	enc := json.NewEncoder(&buf) // Encode appends the newline
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return buf.Bytes(), nil
}

// marshalKernel is marshalLines for the kernel layer.
func marshalKernel(k []wire.Kernel) ([]byte, error) {
	out := []byte{}
	kernelBlocks(k, func(p []byte, _ func()) { out = append(out, p...) })
	return out, nil
}

// kernelBlock is how many events are encoded together: enough to make a
// goroutine per block cheap, few enough that the blocks in flight and
// pooled (a few per CPU, plus those waiting to be compressed) hold a few
// MB of text per CPU (6 MB on 2 CPUs for a 300,000-event layer).
const kernelBlock = 1024

// kernelBlocks encodes k a block of events at a time, several blocks side
// by side, and calls emit with each block's lines in order. At most a few
// blocks per CPU are encoded ahead of the one emit is given, so the
// layer is never held whole as text. emit may call recycle once it no
// longer needs the block: its buffer then serves a later block, so that
// encoding a large layer does not touch fresh memory for every block.
func kernelBlocks(k []wire.Kernel, emit func(p []byte, recycle func())) {
	n := (len(k) + kernelBlock - 1) / kernelBlock
	ahead := 2 * runtime.GOMAXPROCS(0)
	free := make(chan []byte, 4*ahead)
	done := make([]chan []byte, n)
	start := func(i int) {
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		done[i] = make(chan []byte, 1)
		go func() { done[i] <- appendKernels(buf[:0], k[i*kernelBlock:min((i+1)*kernelBlock, len(k))]) }()
	}
	for i := range min(ahead, n) {
		start(i)
	}
	for i := range n {
		p := <-done[i]
		if i+ahead < n {
			start(i + ahead)
		}
		emit(p, func() {
			select {
			case free <- p:
			default:
			}
		})
	}
}

// appendKernels appends the lines of k to b, sizing b from the first
// lines so that it rarely grows.
func appendKernels(b []byte, k []wire.Kernel) []byte {
	sample := min(len(k), 32)
	for i := range sample {
		b = appendKernel(b, &k[i])
	}
	if sample > 0 && len(k) > sample {
		if need := len(b) + (len(b)/sample+16)*(len(k)-sample); cap(b) < need {
			// A quarter more than this block needs, so that the buffer
			// still fits the next blocks it is recycled for.
			b = append(make([]byte, 0, need+need/4), b...)
		}
	}
	for i := sample; i < len(k); i++ {
		b = appendKernel(b, &k[i])
	}
	return b
}

var epoch = time.Unix(0, 0).UTC()
