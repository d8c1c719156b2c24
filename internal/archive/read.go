package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"vigil/internal/evidence"
)

// Read opens, fully verifies and decodes the archive at path. Every error
// is an *evidence.EntryError naming the entry at fault (or none, for a
// defect of the compression or tar structure).
func Read(path string) (*evidence.Bundle, error) {
	b, _, err := ReadSized(path)
	return b, err
}

// ReadSized is Read that also reports the archive's extracted size: the
// sum of its entries' bytes, manifest included.
func ReadSized(path string) (*evidence.Bundle, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	files, err := readTarGz(f)
	if err != nil {
		return nil, 0, err
	}
	var size int64
	for _, e := range files {
		size += int64(len(e.data))
	}
	b, err := decodeFiles(files)
	return b, size, err
}

// Verify checks the archive at path; nil means it passed every check Read
// makes.
func Verify(path string) error {
	_, err := Read(path)
	return err
}

// Decode verifies and decodes an archive read from r (see Read).
func Decode(r io.Reader) (*evidence.Bundle, error) {
	files, err := readTarGz(r)
	if err != nil {
		return nil, err
	}
	return decodeFiles(files)
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
func readTarGz(r io.Reader) ([]file, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, archiveErr("not a gzip stream: %v", err)
	}
	gz.Multistream(false)
	lr := &countingReader{r: gz, limit: limits.total}
	tr := tar.NewReader(lr)
	var files []file
	seen := map[string]bool{}
	last := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.over {
				return nil, archiveErr("uncompressed size exceeds %d bytes", limits.total)
			}
			return nil, archiveErr("corrupt or truncated after %s: %v", entryName(last), err)
		}
		name := h.Name
		if err := checkHeader(h, len(files), seen, last); err != nil {
			return nil, err
		}
		seen[name] = true
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			if lr.over {
				return nil, archiveErr("uncompressed size exceeds %d bytes", limits.total)
			}
			return nil, entryErr(name, "truncated: %v", err)
		}
		files = append(files, file{name, data})
		last = name
	}
	// The tar end marker is not the end of the stream: read on to the gzip
	// trailer so its checksum and length are verified, and require that
	// nothing but tar padding precedes it and nothing follows it.
	if err := drainZeros(lr); err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, archiveErr("trailing data after the gzip stream")
	}
	if len(files) == 0 {
		return nil, entryErr(evidence.EntryManifest, "missing (the archive has no entries)")
	}
	return files, nil
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
			return archiveErr("gzip: %v", err)
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
