package archive

import (
	"archive/tar"
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/gzip"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/spill"
)

// Archive is a verified, decoded archive.
type Archive struct {
	Bundle *evidence.Bundle
	// Size is the extracted size: the sum of the entries' bytes,
	// manifest included.
	Size int64
	// Signature is the parsed signature entry, nil for an unsigned
	// archive. Open has checked that it names exactly this archive's
	// entries; VerifySignature checks who signed it.
	Signature *attest.Signed
	// scratch holds what OpenDigest kept out of memory.
	scratch *spill.File
}

// Close releases what the archive keeps on disk (OpenDigest's scratch
// file): the bundle's surface lists (Bundle.SurfacePathSource) may not be
// read after. It is a no-op for an archive from Open.
func (a *Archive) Close() error {
	err := a.scratch.Close()
	a.scratch = nil
	return err
}

// VerifySignature requires that the archive is signed and that key made
// the signature. The error is an *evidence.EntryError.
func (a *Archive) VerifySignature(key *attest.Key) error {
	if a.Signature == nil {
		return entryErr(evidence.EntrySignature, "missing: the archive is not signed")
	}
	if err := a.Signature.VerifiedBy(key); err != nil {
		return entryErr(evidence.EntrySignature, "%v", err)
	}
	return nil
}

// Open opens, fully verifies and decodes the archive at path. Every error
// is an *evidence.EntryError naming the entry at fault (or none, for a
// defect of the compression or tar structure), or an error opening the
// file.
func Open(path string) (*Archive, error) { return open(path, nil) }

// OpenDigest is Open that keeps no kernel event: each line of the kernel
// layer is checked as it arrives, as Open checks it, and folded into an
// evidence.Digest, which stands for the layer in the bundle
// (Bundle.Streamed; Bundle.Kernel is empty). It makes every check Open
// makes, for callers that want the verdict and the documents, not the
// events (vigil verify).
//
// Its memory does not grow with the archive's paths either: the
// capability surface's text and the digest's paths go to an anonymous
// scratch file in the temporary directory, and when the surface is
// exactly what the layer derives (as in any archive not tampered with),
// the bundle's surface leaves its lists (paths, renames, endpoints) to
// the digest (Bundle.SurfacePathSource), readable until Close. The time
// index correlation needs goes there too. What it holds still grows with
// the tasks open at once, the other documents (SDK layer, correlation
// report), and the events per cgroup. Without a scratch file it also
// holds the surface's text, every path, rename and endpoint, and, when
// the archive has a correlation report, 9 bytes per event (17 where seqs
// are not the events' indexes).
func OpenDigest(path string) (*Archive, error) {
	fold := &folding{}
	scratch, err := spill.Create("")
	if err == nil {
		fold.scratch = scratch
	}
	a, err := open(path, fold)
	if err != nil {
		scratch.Close()
		return nil, err
	}
	a.scratch = scratch
	return a, nil
}

func open(path string, fold *folding) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, files, err := readTarGzCounted(f, nil, fold)
	if err != nil {
		return nil, err
	}
	a, err := decodeFiles(m, files)
	if err != nil {
		return nil, err
	}
	for _, e := range files {
		a.Size += e.size()
	}
	return a, nil
}

// Read is Open's bundle.
func Read(path string) (*evidence.Bundle, error) {
	a, err := Open(path)
	if err != nil {
		return nil, err
	}
	return a.Bundle, nil
}

// ReadSized is Open's bundle and size.
func ReadSized(path string) (*evidence.Bundle, int64, error) {
	a, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	return a.Bundle, a.Size, nil
}

// Verify checks the archive at path; nil means it passed every check Read
// makes.
func Verify(path string) error {
	a, err := OpenDigest(path)
	if err != nil {
		return err
	}
	return a.Close()
}

// Decode verifies and decodes an archive read from r (see Read).
func Decode(r io.Reader) (*evidence.Bundle, error) { return decode(r, nil) }

// decode is Decode, folding the kernel layer into a digest (OpenDigest)
// with fold.
func decode(r io.Reader, fold *folding) (*evidence.Bundle, error) {
	m, files, err := readTarGzCounted(r, nil, fold)
	if err != nil {
		return nil, err
	}
	a, err := decodeFiles(m, files)
	if err != nil {
		return nil, err
	}
	return a.Bundle, nil
}

func archiveErr(format string, args ...any) error {
	return &evidence.EntryError{Reason: fmt.Sprintf(format, args...)}
}

func entryErr(entry, format string, args ...any) error {
	return &evidence.EntryError{Entry: entry, Reason: fmt.Sprintf(format, args...)}
}

// readTarGz reads every entry, enforcing structure: one gzip member with a
// valid checksum and nothing after it, regular files only, clean expected
// paths, manifest first and the rest in order, no duplicates, size limits.
//
// Nothing is inflated on trust. The manifest comes first and is checked
// before anything else is read; every later entry must be listed in it
// with the size its tar header gives, or it is refused before its data is
// read; the data is read a piece at a time, hashed, and (NDJSON) validated
// line by line as it arrives. So a crafted archive (a bomb, a lying size,
// a flood of tiny lines) fails within its first bad piece instead of after
// inflating all of it.
func readTarGz(r io.Reader) (*Manifest, []file, error) { return readTarGzCounted(r, nil, nil) }

// readTarGzCounted is readTarGz that stores in inflated how many bytes of
// the tar stream were inflated, also on failure. With fold, the kernel
// layer's events are folded into a digest as they are checked, not kept
// (see readEntry).
func readTarGzCounted(r io.Reader, inflated *int64, fold *folding) (*Manifest, []file, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, archiveErr("not a gzip stream: %v", err)
	}
	gz.Multistream(false)
	lr := &countingReader{r: gz, limit: limits.total}
	if inflated != nil {
		defer func() { *inflated = lr.n }()
	}
	tr := tar.NewReader(lr)
	var files []file
	var manifest *Manifest
	var declared map[string]ManifestEntry
	seen := map[string]bool{}
	last := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.over {
				return nil, nil, archiveErr("uncompressed size exceeds %d bytes", limits.total)
			}
			return nil, nil, archiveErr("corrupt or truncated after %s: %v", entryName(last), err)
		}
		name := h.Name
		if err := checkHeader(h, len(files), seen, last); err != nil {
			return nil, nil, err
		}
		if declared != nil && name != evidence.EntrySignature {
			e, ok := declared[name]
			if !ok {
				return nil, nil, entryErr(name, "not listed in %s", evidence.EntryManifest)
			}
			if h.Size != e.Bytes {
				return nil, nil, entryErr(name, "tar header says %d bytes but %s says %d", h.Size, evidence.EntryManifest, e.Bytes)
			}
		}
		seen[name] = true
		// The correlation report sorts before the kernel layer: without
		// it, the fold needs no time index.
		f, err := readEntry(tr, name, h.Size, fold, seen[evidence.EntryCorrelation])
		if err != nil {
			if lr.over {
				return nil, nil, archiveErr("uncompressed size exceeds %d bytes", limits.total)
			}
			return nil, nil, err
		}
		if declared == nil {
			if manifest, err = parseManifest(f); err != nil {
				return nil, nil, err
			}
			declared = map[string]ManifestEntry{}
			for _, e := range manifest.Entries {
				declared[e.Path] = e
			}
		} else if name == evidence.EntrySignature {
			// Not listed: it signs the manifest (checkSignature).
		} else if got := hex.EncodeToString(f.sum[:]); got != declared[name].SHA256 {
			return nil, nil, entryErr(name, "content sha256 %s does not match %s's %s", got, evidence.EntryManifest, declared[name].SHA256)
		}
		files = append(files, f)
		last = name
	}
	// The tar end marker is not the end of the stream: read on to the gzip
	// trailer so its checksum and length are verified, and require that
	// nothing but tar padding precedes it and nothing follows it.
	if err := drainZeros(lr); err != nil {
		return nil, nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, nil, archiveErr("trailing data after the gzip stream")
	}
	if len(files) == 0 {
		return nil, nil, entryErr(evidence.EntryManifest, "missing (the archive has no entries)")
	}
	return manifest, files, nil
}

func entryName(last string) string {
	if last == "" {
		return "the start of the archive"
	}
	return last
}

func checkHeader(h *tar.Header, index int, seen map[string]bool, last string) error {
	name := h.Name
	escapes := false
	for _, el := range strings.Split(name, "/") {
		escapes = escapes || el == ".."
	}
	switch {
	case name == "":
		return archiveErr("entry %d has an empty name", index+1)
	case strings.HasPrefix(name, "/"):
		return entryErr(name, "absolute path")
	case escapes:
		return entryErr(name, "path escapes the archive")
	case h.Typeflag != tar.TypeReg:
		return entryErr(name, "not a regular file (tar type %q)", h.Typeflag)
	case name != path.Clean(name):
		return entryErr(name, "path is not clean")
	case strings.ContainsAny(name, "\\\x00"):
		return entryErr(name, "path contains a backslash or NUL")
	}
	if _, ok := evidence.EntrySchemas[name]; !ok {
		return entryErr(name, "unexpected entry")
	}
	if seen[name] {
		return entryErr(name, "duplicate entry")
	}
	if index == 0 && name != evidence.EntryManifest {
		return entryErr(name, "first entry must be %s", evidence.EntryManifest)
	}
	if index > 0 && name == evidence.EntryManifest {
		return entryErr(name, "must be the first entry")
	}
	if index > 1 && name < last {
		return entryErr(name, "out of order (after %s)", last)
	}
	limit := limits.entry
	if name == evidence.EntryManifest {
		limit = limits.manifest
	}
	if h.Size < 0 || h.Size > limit {
		return entryErr(name, "size %d exceeds the limit of %d bytes", h.Size, limit)
	}
	return nil
}

// drainZeros reads r to its end, requiring only zero bytes (tar padding).
func drainZeros(r *countingReader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c != 0 {
				return archiveErr("data after the tar end marker")
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if r.over {
				return archiveErr("uncompressed size exceeds %d bytes", limits.total)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return archiveErr("truncated gzip stream")
			}
			// klauspost's gzip errors already say "gzip: ".
			return archiveErr("%s", "gzip: "+strings.TrimPrefix(err.Error(), "gzip: "))
		}
	}
}

// countingReader fails once more than limit bytes were read, so a
// decompression bomb is rejected instead of exhausting memory.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
	over  bool
}

var errTooLarge = errors.New("size limit exceeded")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		c.over = true
		return 0, errTooLarge
	}
	return n, err
}
