package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"vigil/internal/evidence"
	"vigil/schema"
)

// appendSurface appends capability-surface.json exactly as marshalDoc
// writes it (json.MarshalIndent with two spaces, then a newline). The
// surface lists every distinct path, so it is the second-largest entry and
// json.MarshalIndent (marshal, then re-scan to indent) is slow on it.
// fastSurface guards the equivalence as fastKernel does for kernel lines.
func appendSurface(b []byte, s *evidence.CapabilitySurface) []byte {
	b = append(b, "{\n  \"schema\": "...)
	b = appendString(b, s.Schema)
	b = append(b, ",\n  \"run_id\": "...)
	b = appendString(b, s.RunID)
	for _, l := range []struct {
		name  string
		items []string
	}{
		{"files_read", s.FilesRead}, {"files_written", s.FilesWritten}, {"files_created", s.FilesCreated},
		{"open_failures", s.OpenFailures}, {"execs", s.Execs},
	} {
		b = append(b, ",\n  \""...)
		b = append(b, l.name...)
		b = append(b, "\": "...)
		switch {
		case l.items == nil:
			b = append(b, "null"...)
		case len(l.items) == 0:
			b = append(b, "[]"...)
		default:
			b = append(b, '[')
			for i, it := range l.items {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, "\n    "...)
				b = appendString(b, it)
			}
			b = append(b, "\n  ]"...)
		}
	}
	b = append(b, ",\n  \"network\": "...)
	switch {
	case s.Network == nil:
		b = append(b, "null"...)
	case len(s.Network) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, ep := range s.Network {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    {\n      \"family\": "...)
			b = appendString(b, ep.Family)
			b = append(b, ",\n      \"addr\": "...)
			b = appendString(b, ep.Addr)
			b = append(b, ",\n      \"port\": "...)
			b = strconv.AppendUint(b, uint64(ep.Port), 10)
			b = append(b, "\n    }"...)
		}
		b = append(b, "\n  ]"...)
	}
	return append(b, "\n}\n"...)
}

// marshalSurface is marshalDoc for the capability surface, on the fast
// path when its field guard allows.
func marshalSurface(s *evidence.CapabilitySurface) ([]byte, error) {
	if !fastSurface {
		return marshalDoc(s)
	}
	n := 256
	for _, l := range [][]string{s.FilesRead, s.FilesWritten, s.FilesCreated, s.OpenFailures, s.Execs} {
		for _, it := range l {
			n += len(it) + 8
		}
	}
	return appendSurface(make([]byte, 0, n+len(s.Network)*96), s), nil
}

// fastSurface reports whether the surface types still have exactly the
// fields (names, tags, kinds) appendSurface was written for.
var fastSurface = func() bool {
	want := map[reflect.Type]string{
		reflect.TypeFor[evidence.CapabilitySurface](): "schema:string run_id:string files_read:slice files_written:slice files_created:slice open_failures:slice execs:slice network:slice",
		reflect.TypeFor[evidence.Endpoint]():          "family:string addr:string port:uint16",
	}
	for t, w := range want {
		var got []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			got = append(got, f.Tag.Get("json")+":"+f.Type.Kind().String())
			if f.Type.Kind() == reflect.Slice && !slices.Contains([]reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[evidence.Endpoint]()}, f.Type.Elem()) {
				return false
			}
		}
		if strings.Join(got, " ") != w {
			return false
		}
	}
	return reflect.TypeFor[evidence.CapabilitySurface]().Field(7).Type.Elem() == reflect.TypeFor[evidence.Endpoint]()
}()

// provenSurface is provenKernelLine for capability-surface.json: when it
// returns true, data is valid against capability-surface.schema.json, in
// canonical encoding, and s is what strict decoding gives. It reads the
// exact layout appendSurface writes (strings valid UTF-8) and requires
// appendSurface(s) to reproduce data, so data is enc(s); for enc(s) the
// schema reduces to: schema is the constant, run_id is not empty, the
// lists and network are arrays (not null) of unique items (the types of
// the items and port's range follow from the Go types). Uniqueness is
// proven by strict ascending order, which any surface Check accepts has;
// a document in another order is left to the validator. surfaceSchemaSHA
// pins the schema text this was written for.
func provenSurface(data []byte) (evidence.CapabilitySurface, bool) {
	var s evidence.CapabilitySurface
	if !fastSurfaceCheck() {
		return s, false
	}
	p := &kparser{b: data}
	p.lit("{\n  \"schema\": ")
	s.Schema = p.str()
	p.lit(",\n  \"run_id\": ")
	s.RunID = p.str()
	for _, l := range []struct {
		name string
		dst  *[]string
	}{
		{"files_read", &s.FilesRead}, {"files_written", &s.FilesWritten}, {"files_created", &s.FilesCreated},
		{"open_failures", &s.OpenFailures}, {"execs", &s.Execs},
	} {
		p.lit(",\n  \"" + l.name + "\": ")
		*l.dst = []string{}
		if p.peek("[]") {
			continue
		}
		p.lit("[")
		for !p.bad {
			p.lit("\n    ")
			*l.dst = append(*l.dst, p.str())
			if !p.peek(",") {
				break
			}
		}
		p.lit("\n  ]")
	}
	p.lit(",\n  \"network\": ")
	s.Network = []evidence.Endpoint{}
	if !p.peek("[]") {
		p.lit("[")
		for !p.bad {
			var ep evidence.Endpoint
			p.lit("\n    {\n      \"family\": ")
			ep.Family = p.str()
			p.lit(",\n      \"addr\": ")
			ep.Addr = p.str()
			p.lit(",\n      \"port\": ")
			ep.Port = uint16(p.uint(math.MaxUint16))
			p.lit("\n    }")
			s.Network = append(s.Network, ep)
			if !p.peek(",") {
				break
			}
		}
		p.lit("\n  ]")
	}
	p.lit("\n}\n")
	if p.bad || p.i != len(data) || s.Schema != evidence.SurfaceSchema || s.RunID == "" {
		return s, false
	}
	for _, l := range [][]string{s.FilesRead, s.FilesWritten, s.FilesCreated, s.OpenFailures, s.Execs} {
		for i := 1; i < len(l); i++ {
			if l[i-1] >= l[i] {
				return s, false
			}
		}
	}
	for i := 1; i < len(s.Network); i++ {
		a, b := s.Network[i-1], s.Network[i]
		if a.Family > b.Family || a.Family == b.Family && (a.Addr > b.Addr || a.Addr == b.Addr && a.Port >= b.Port) {
			return s, false
		}
	}
	if !bytes.Equal(appendSurface(make([]byte, 0, len(data)), &s), data) {
		return s, false
	}
	return s, true
}

// surfaceSchemaSHA is the sha256 of capability-surface.schema.json that
// provenSurface was written for.
const surfaceSchemaSHA = "a5e95474906be7e4a0fea3b649928e6e7f5dbe62141c2b2f13f12c200544d756"

var fastSurfaceCheck = sync.OnceValue(func() bool {
	raw, err := schema.Raw("capability-surface")
	if err != nil {
		return false
	}
	sum := sha256.Sum256(raw)
	return fastSurface && hex.EncodeToString(sum[:]) == surfaceSchemaSHA
})
