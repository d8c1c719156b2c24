package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// surfaceChunk is about how much text surfaceChunks hands over at a time.
const surfaceChunk = 64 << 10

// surfaceChunks encodes s as capability-surface.json, byte-identical to
// marshalDoc(s) (TestAppendSurfaceMatchesEncodingJSON compares them on
// random surfaces), handing the text to emit about surfaceChunk bytes at
// a time, starting in buf; emit returns the buffer to go on in (p
// emptied, or another). A large run lists hundreds of thousands of paths:
// encoding/json spends most of its time in wire.Bytes' MarshalJSON and
// re-indenting, and one buffer for the whole text is memory touched for
// the first time, which can cost more than the encoding. Writing and
// reading an archive both go through it.
//
// With paths set, s's lists are ignored (a streamed bundle's are
// nil) and paths gives them, one path at a time, from wherever it holds
// them: then the text is never held whole, nor are its paths. An error
// paths returns ends the encoding.
func surfaceChunks(s *evidence.CapabilitySurface, paths *evidence.Digest, buf []byte, emit func(p []byte) []byte) error {
	return surfaceChunksOf(s, paths, buf, surfaceChunk, emit)
}

// surfaceChunksOf is surfaceChunks with chunks of about chunk bytes.
func surfaceChunksOf(s *evidence.CapabilitySurface, paths *evidence.Digest, buf []byte, chunk int, emit func(p []byte) []byte) error {
	e := surfaceEncoder{b: buf[:0], emit: emit, chunk: chunk, paths: paths}
	e.surface(s)
	if e.err != nil {
		return e.err
	}
	if len(e.b) > 0 {
		emit(e.b)
	}
	return nil
}

// surfaceEncoder writes a surface's text into b, handing b to emit after
// any list item that filled it past chunk (never, without emit).
type surfaceEncoder struct {
	b     []byte
	emit  func([]byte) []byte
	chunk int
	paths *evidence.Digest // the lists' source, when not the surface
	err   error
}

func (e *surfaceEncoder) flush() {
	if e.emit != nil && len(e.b) >= e.chunk {
		e.b = e.emit(e.b)
	}
}

func (e *surfaceEncoder) surface(s *evidence.CapabilitySurface) {
	e.b = append(e.b, "{\n  \"schema\": "...)
	e.b = appendString(e.b, s.Schema)
	e.b = append(e.b, ",\n  \"run_id\": "...)
	e.b = appendString(e.b, s.RunID)
	for _, f := range []struct {
		key string
		l   evidence.PathList
	}{
		{"files_read", evidence.ListFilesRead}, {"files_written", evidence.ListFilesWritten},
		{"files_created", evidence.ListFilesCreated}, {"open_failures", evidence.ListOpenFailures},
		{"files_deleted", evidence.ListFilesDeleted}, {"dirs_created", evidence.ListDirsCreated},
	} {
		e.set(s, f.key, f.l)
	}
	e.b = appendKey(e.b, "files_renamed")
	if e.paths == nil {
		e.list(s.FilesRenamed == nil, len(s.FilesRenamed), func(b []byte, i int) []byte {
			return appendRename(b, s.FilesRenamed[i])
		})
	} else if e.err == nil {
		n := 0
		err := e.paths.EachSurfaceRename(func(r evidence.Rename) error {
			e.item(&n)
			e.b = appendRename(e.b, r)
			e.flush()
			return nil
		})
		e.endList(n, err)
	}
	for _, f := range []struct {
		key string
		l   evidence.PathList
	}{
		{"links_created", evidence.ListLinksCreated}, {"mode_changed", evidence.ListModeChanged},
		{"files_truncated", evidence.ListFilesTruncated}, {"execs", evidence.ListExecs},
		{"exec_failures", evidence.ListExecFailures},
	} {
		e.set(s, f.key, f.l)
	}
	for _, f := range []struct {
		key string
		l   evidence.EndpointList
	}{{"network", evidence.ListNetwork}, {"network_sent", evidence.ListNetworkSent}, {"network_local", evidence.ListNetworkLocal}} {
		e.b = appendKey(e.b, f.key)
		if e.paths == nil {
			v := s.Endpoints(f.l)
			e.list(v == nil, len(v), func(b []byte, i int) []byte { return appendEndpoint(b, &v[i]) })
			continue
		}
		if e.err != nil {
			continue
		}
		n := 0
		err := e.paths.EachSurfaceEndpoint(f.l, func(ep evidence.Endpoint) error {
			e.item(&n)
			e.b = appendEndpoint(e.b, &ep)
			e.flush()
			return nil
		})
		e.endList(n, err)
	}
	e.b = append(e.b, "\n}\n"...)
}

func appendRename(b []byte, r evidence.Rename) []byte {
	b = append(b, "{\n      \"from\": "...)
	b = appendIndentedBytes(b, r.From, "      ")
	b = append(b, ",\n      \"to\": "...)
	b = appendIndentedBytes(b, r.To, "      ")
	return append(b, "\n    }"...)
}

func appendEndpoint(b []byte, ep *evidence.Endpoint) []byte {
	b = append(b, "{\n      \"family\": "...)
	b = appendString(b, ep.Family)
	b = append(b, ",\n      \"addr\": "...)
	b = appendIndentedBytes(b, ep.Addr, "      ")
	b = append(b, ",\n      \"port\": "...)
	b = strconv.AppendUint(b, uint64(ep.Port), 10)
	return append(b, "\n    }"...)
}

// set appends the path list l, from s or from e.paths.
func (e *surfaceEncoder) set(s *evidence.CapabilitySurface, key string, l evidence.PathList) {
	e.b = appendKey(e.b, key)
	if e.paths == nil {
		v := s.Paths(l)
		e.list(v == nil, len(v), func(b []byte, i int) []byte {
			return appendIndentedBytes(b, v[i], "    ")
		})
		return
	}
	if e.err != nil {
		return
	}
	n := 0
	err := e.paths.EachSurfacePath(l, func(p wire.Bytes) error {
		e.item(&n)
		e.b = appendIndentedBytes(e.b, p, "    ")
		e.flush()
		return nil
	})
	e.endList(n, err)
}

// item starts the next element of a list of the digest's (e.paths), the
// nth so far, at the second level of indent. The digest's lists are
// never nil, and how long one is shows only at its end (endList).
func (e *surfaceEncoder) item(n *int) {
	if *n == 0 {
		e.b = append(e.b, "[\n    "...)
	} else {
		e.b = append(e.b, ",\n    "...)
	}
	*n++
}

// endList ends a list of n elements begun by item; err is the error of
// reading them, kept if it is the first.
func (e *surfaceEncoder) endList(n int, err error) {
	if n == 0 {
		e.b = append(e.b, "[]"...)
	} else {
		e.b = append(e.b, "\n  ]"...)
	}
	if e.err == nil {
		e.err = err
	}
}

// list appends an array of n items at the second level of indent, each
// appended by item; a nil slice is null, as encoding/json writes it.
func (e *surfaceEncoder) list(isNil bool, n int, item func(b []byte, i int) []byte) {
	switch {
	case isNil:
		e.b = append(e.b, "null"...)
		return
	case n == 0:
		e.b = append(e.b, "[]"...)
		return
	}
	e.b = append(e.b, "[\n    "...)
	for i := range n {
		if i > 0 {
			e.b = append(e.b, ",\n    "...)
		}
		e.b = item(e.b, i)
		e.flush()
	}
	e.b = append(e.b, "\n  ]"...)
}

// writeSurface writes the capability surface's entry to sw without ever
// holding its text whole: a first pass counts its bytes (the tar header
// comes first), a second hands it over chunk by chunk in buffers reused
// once compressed. With paths (a streamed bundle's digest) the lists
// come from it, read twice. It returns the manifest entry.
func writeSurface(sw *segmentWriter, s *evidence.CapabilitySurface, paths *evidence.Digest) (ManifestEntry, error) {
	var size int64
	scratch := make([]byte, 0, 2*surfaceChunk)
	err := surfaceChunks(s, paths, scratch, func(p []byte) []byte {
		size += int64(len(p))
		return p[:0]
	})
	if err != nil {
		return ManifestEntry{}, fmt.Errorf("%s: %w", evidence.EntrySurface, err)
	}
	// Never write what Read would refuse.
	if size > limits.entry {
		return ManifestEntry{}, fmt.Errorf("%s: %d bytes exceeds the per-entry limit of %d", evidence.EntrySurface, size, limits.entry)
	}
	hdr, err := tarHeader(evidence.EntrySurface, size)
	if err != nil {
		return ManifestEntry{}, err
	}
	sw.write(hdr)
	h := sha256.New()
	free := make(chan []byte, 8)
	free <- scratch
	next := func() []byte {
		select {
		case b := <-free:
			return b[:0]
		default:
			return make([]byte, 0, 2*surfaceChunk)
		}
	}
	var written int64
	err = surfaceChunks(s, paths, next(), func(p []byte) []byte {
		h.Write(p)
		written += int64(len(p))
		sw.writeOwned(p, func() {
			select {
			case free <- p:
			default:
			}
		})
		return next()
	})
	if err != nil {
		return ManifestEntry{}, fmt.Errorf("%s: %w", evidence.EntrySurface, err)
	}
	if written != size {
		return ManifestEntry{}, fmt.Errorf("%s: encoded %d bytes, then %d", evidence.EntrySurface, size, written)
	}
	sw.write(zeros[:(512-size%512)%512])
	return ManifestEntry{Path: evidence.EntrySurface, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: size}, nil
}

// sameSurface reports whether data is exactly the text of s, encoding it
// a chunk at a time.
func sameSurface(s *evidence.CapabilitySurface, data []byte) bool {
	off, same := 0, true
	surfaceChunks(s, nil, make([]byte, 0, 2*surfaceChunk), func(p []byte) []byte {
		if same && (off+len(p) > len(data) || !bytes.Equal(p, data[off:off+len(p)])) {
			same = false
		}
		off += len(p)
		return p[:0]
	})
	return same && off == len(data)
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ",\n  \""...)
	b = append(b, key...)
	return append(b, "\": "...)
}

// appendIndentedBytes appends a byte string whose line starts with
// prefix: a JSON string, or for bytes that are not UTF-8 the object form,
// spread over lines as json.MarshalIndent spreads it.
func appendIndentedBytes(b []byte, v wire.Bytes, prefix string) []byte {
	if v.Valid() {
		return appendString(b, string(v))
	}
	compact := appendBytes(nil, v)
	var buf bytes.Buffer
	if json.Indent(&buf, compact, prefix, "  ") != nil {
		return append(b, compact...) // never: appendBytes writes valid JSON
	}
	return append(b, buf.Bytes()...)
}
