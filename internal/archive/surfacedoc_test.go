package archive

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/schema"
)

func TestFastSurfacePathActive(t *testing.T) {
	if !fastSurface {
		t.Fatal("surface types changed: update appendSurface and fastSurface (encoding falls back to encoding/json meanwhile)")
	}
	if !fastSurfaceCheck() {
		t.Fatal("capability-surface.schema.json changed: revisit provenSurface, then update surfaceSchemaSHA (verification uses the general validator meanwhile)")
	}
}

// provenSurface vouches only for documents the validator accepts, that
// are canonical, and that decode to what it returns; and it vouches for
// every such document in sorted order.
func TestProvenSurfaceMatchesSchema(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	list := func() []string {
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, r.IntN(5)+1)
		for i := range out {
			out[i] = pick("", "a", "b", `q"`, `\`, "\x00", "caf\u00e9", "bad\xff", "\u2028")
		}
		if r.IntN(2) == 0 {
			slices.Sort(out)
			out = slices.Compact(out)
		}
		return out
	}
	surfaces := []evidence.CapabilitySurface{evidencetest.Bundle(300, 3).Surface}
	for i := 0; i < 1000; i++ {
		// Sorted, unique, valid UTF-8: mostly valid documents.
		s := evidence.BuildSurface(evidencetest.Kernel(8+r.IntN(30), 1))
		s.RunID = pick("run-1", "r\u00e9", "")
		s.FilesRead = append(s.FilesRead, "zz\u2028<&>\x01")
		if r.IntN(2) == 0 {
			s.Network = append(s.Network, evidence.Endpoint{Family: "unix", Addr: "/run/x", Port: 0})
		}
		surfaces = append(surfaces, s)
	}
	for i := 0; i < 3000; i++ {
		s := evidence.CapabilitySurface{Schema: pick(evidence.SurfaceSchema, evidence.SurfaceSchema, "vigil.other/v1"), RunID: pick("run-1", "", "r\u00e9"),
			FilesRead: list(), FilesWritten: list(), FilesCreated: list(), OpenFailures: list(), Execs: list()}
		if r.IntN(4) > 0 {
			s.Network = []evidence.Endpoint{}
			for j := r.IntN(4); j > 0; j-- {
				s.Network = append(s.Network, evidence.Endpoint{Family: pick("inet", "unix"), Addr: pick("a", "b"), Port: uint16(r.IntN(2) * 65535)})
			}
		}
		surfaces = append(surfaces, s)
	}
	proven, refused := 0, 0
	for i := range surfaces {
		data, _ := marshalDoc(&surfaces[i])
		got, ok := provenSurface(data)
		schemaErr := schema.Validate("capability-surface", data)
		var dec evidence.CapabilitySurface
		decErr := strictJSON(data, &dec)
		again, _ := marshalDoc(&dec)
		canonical := decErr == nil && bytes.Equal(again, data)
		sorted := canonical && isSortedSurface(&dec)
		if ok != (schemaErr == nil && canonical && sorted) {
			t.Fatalf("surface %d: proven %v; schema %v, canonical %v, sorted %v\n%s", i, ok, schemaErr, canonical, sorted, data)
		}
		if ok && !reflect.DeepEqual(got, dec) {
			t.Fatalf("surface %d: proven value %+v, strict decoding gives %+v", i, got, dec)
		}
		if ok {
			proven++
		} else {
			refused++
		}
	}
	if proven < 100 || refused < 100 {
		t.Fatalf("%d proven, %d refused: the cases do not exercise both outcomes", proven, refused)
	}
}

func isSortedSurface(s *evidence.CapabilitySurface) bool {
	for _, l := range [][]string{s.FilesRead, s.FilesWritten, s.FilesCreated, s.OpenFailures, s.Execs} {
		if !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
			return false
		}
	}
	for i := 1; i < len(s.Network); i++ {
		a, b := s.Network[i-1], s.Network[i]
		if a == b || a.Family > b.Family || a.Family == b.Family && (a.Addr > b.Addr || a.Addr == b.Addr && a.Port > b.Port) {
			return false
		}
	}
	return true
}

// appendSurface must equal marshalDoc byte for byte: empty, nil and long
// lists, strings that need escaping, endpoints.
func TestAppendSurfaceMatchesMarshalDoc(t *testing.T) {
	nasty := []string{"", "plain", `q"uote`, `back\slash`, "<html>&amp;", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"caf\u00e9 \u65e5\u672c", "\u2028\u2029", "bad\xff\xfeutf8", "/tmp/a b/c"}
	r := rand.New(rand.NewPCG(5, 6))
	list := func() []string {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, r.IntN(6)+1)
		for i := range out {
			out[i] = nasty[r.IntN(len(nasty))]
		}
		return out
	}
	surfaces := []evidence.CapabilitySurface{evidencetest.Bundle(200, 3).Surface, {}}
	for i := 0; i < 500; i++ {
		s := evidence.CapabilitySurface{Schema: nasty[r.IntN(len(nasty))], RunID: nasty[r.IntN(len(nasty))],
			FilesRead: list(), FilesWritten: list(), FilesCreated: list(), OpenFailures: list(), Execs: list()}
		if r.IntN(3) > 0 {
			s.Network = []evidence.Endpoint{}
			for j := r.IntN(3); j > 0; j-- {
				s.Network = append(s.Network, evidence.Endpoint{Family: nasty[r.IntN(len(nasty))], Addr: nasty[r.IntN(len(nasty))], Port: uint16(r.Uint32())})
			}
		}
		surfaces = append(surfaces, s)
	}
	for i := range surfaces {
		want, err := marshalDoc(&surfaces[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSurface(nil, &surfaces[i]); !bytes.Equal(got, want) {
			t.Fatalf("surface %d:\n got %s\nwant %s", i, got, want)
		}
		if got, _ := marshalSurface(&surfaces[i]); !bytes.Equal(got, want) {
			t.Fatalf("marshalSurface %d differs", i)
		}
	}
}
