package archive

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// TestAppendSurfaceMatchesEncodingJSON: the surface encoder writes what
// encoding/json's MarshalIndent writes, for random surfaces with nil and
// empty lists, strings that need escapes and bytes that are not UTF-8.
func TestAppendSurfaceMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 2000 {
		var s evidence.CapabilitySurface
		fillSurface(r, reflect.ValueOf(&s).Elem())
		want, err := marshalDoc(&s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSurface(nil, &s); !bytes.Equal(got, want) {
			t.Fatalf("surface %d: appendSurface wrote\n%s\nencoding/json writes\n%s", i, got, want)
		}
		// In chunks of any size, the same text, and sameSurface says so.
		chunk := 1 + r.IntN(300)
		var got []byte
		surfaceChunksOf(&s, nil, nil, chunk, func(p []byte) []byte {
			if len(p) > chunk+4096 {
				t.Fatalf("surface %d: a chunk of %d bytes, asked for %d", i, len(p), chunk)
			}
			got = append(got, p...)
			return p[:0]
		})
		if !bytes.Equal(got, want) || !sameSurface(&s, want) || sameSurface(&s, want[:len(want)-1]) || sameSurface(&s, append(want, ' ')) {
			t.Fatalf("surface %d: in chunks of %d the text differs, or sameSurface is wrong", i, chunk)
		}
	}
}

// fillSurface sets v to random values: each list nil, empty or holding a
// few items.
func fillSurface(r *rand.Rand, v reflect.Value) {
	strs := []string{"", "x", "/usr/bin/a b", "<&>\"\\\n\t\x01", "bad\xffname", "\u2028é", "memfd:payload"}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillSurface(r, v.Field(i))
		}
	case reflect.Slice:
		switch r.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.Set(reflect.MakeSlice(v.Type(), 1+r.IntN(3), 3))
			for i := 0; i < v.Len(); i++ {
				fillSurface(r, v.Index(i))
			}
		}
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Uint16:
		v.SetUint(uint64(r.IntN(65536)))
	}
}

// appendSurface appends s as capability-surface.json whole: the surface
// encoder without chunks, the form tests compare.
func appendSurface(b []byte, s *evidence.CapabilitySurface) []byte {
	e := surfaceEncoder{b: slices.Grow(b, surfaceSize(s))}
	e.surface(s)
	return e.b
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
