package archive

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// appendSurface appends s as capability-surface.json, byte-identical to
// marshalDoc(s) (TestAppendSurfaceMatchesEncodingJSON compares them on
// random surfaces). A large run lists hundreds of thousands of paths, and
// encoding/json spends most of its time calling wire.Bytes' MarshalJSON
// and then re-indenting the result; reading an archive encodes the
// derived surface again to compare it with the entry.
func appendSurface(b []byte, s *evidence.CapabilitySurface) []byte {
	b = slices.Grow(b, surfaceSize(s))
	b = append(b, "{\n  \"schema\": "...)
	b = appendString(b, s.Schema)
	b = append(b, ",\n  \"run_id\": "...)
	b = appendString(b, s.RunID)
	for _, f := range []struct {
		key string
		v   []wire.Bytes
	}{
		{"files_read", s.FilesRead}, {"files_written", s.FilesWritten}, {"files_created", s.FilesCreated},
		{"open_failures", s.OpenFailures}, {"files_deleted", s.FilesDeleted}, {"dirs_created", s.DirsCreated},
	} {
		b = appendSet(b, f.key, f.v)
	}
	b = appendKey(b, "files_renamed")
	b = appendList(b, s.FilesRenamed == nil, len(s.FilesRenamed), func(b []byte, i int) []byte {
		b = append(b, "{\n      \"from\": "...)
		b = appendIndentedBytes(b, s.FilesRenamed[i].From, "      ")
		b = append(b, ",\n      \"to\": "...)
		b = appendIndentedBytes(b, s.FilesRenamed[i].To, "      ")
		return append(b, "\n    }"...)
	})
	for _, f := range []struct {
		key string
		v   []wire.Bytes
	}{
		{"links_created", s.LinksCreated}, {"mode_changed", s.ModeChanged}, {"files_truncated", s.FilesTruncated},
		{"execs", s.Execs}, {"exec_failures", s.ExecFailures},
	} {
		b = appendSet(b, f.key, f.v)
	}
	for _, f := range []struct {
		key string
		v   []evidence.Endpoint
	}{{"network", s.Network}, {"network_sent", s.NetworkSent}, {"network_local", s.NetworkLocal}} {
		b = appendKey(b, f.key)
		b = appendList(b, f.v == nil, len(f.v), func(b []byte, i int) []byte {
			e := &f.v[i]
			b = append(b, "{\n      \"family\": "...)
			b = appendString(b, e.Family)
			b = append(b, ",\n      \"addr\": "...)
			b = appendIndentedBytes(b, e.Addr, "      ")
			b = append(b, ",\n      \"port\": "...)
			b = strconv.AppendUint(b, uint64(e.Port), 10)
			return append(b, "\n    }"...)
		})
	}
	return append(b, "\n}\n"...)
}

// surfaceSize is about what appendSurface writes for s (exact when no
// string needs an escape), so that the buffer of a surface of many paths
// is allocated once rather than grown by copying.
func surfaceSize(s *evidence.CapabilitySurface) int {
	n := 1024 + len(s.RunID)
	for _, set := range [][]wire.Bytes{s.FilesRead, s.FilesWritten, s.FilesCreated, s.OpenFailures, s.FilesDeleted,
		s.DirsCreated, s.LinksCreated, s.ModeChanged, s.FilesTruncated, s.Execs, s.ExecFailures} {
		for _, p := range set {
			n += len(p) + 8 // indent, quotes, comma, newline
		}
	}
	for _, r := range s.FilesRenamed {
		n += len(r.From) + len(r.To) + 48
	}
	for _, eps := range [][]evidence.Endpoint{s.Network, s.NetworkSent, s.NetworkLocal} {
		for _, e := range eps {
			n += len(e.Family) + len(e.Addr) + 72
		}
	}
	return n
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ",\n  \""...)
	b = append(b, key...)
	return append(b, "\": "...)
}

func appendSet(b []byte, key string, v []wire.Bytes) []byte {
	b = appendKey(b, key)
	return appendList(b, v == nil, len(v), func(b []byte, i int) []byte {
		return appendIndentedBytes(b, v[i], "    ")
	})
}

// appendList appends an array of n items at the second level of indent,
// each appended by item; a nil slice is null, as encoding/json writes it.
func appendList(b []byte, isNil bool, n int, item func(b []byte, i int) []byte) []byte {
	switch {
	case isNil:
		return append(b, "null"...)
	case n == 0:
		return append(b, "[]"...)
	}
	b = append(b, "[\n    "...)
	for i := range n {
		if i > 0 {
			b = append(b, ",\n    "...)
		}
		b = item(b, i)
	}
	return append(b, "\n  ]"...)
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
