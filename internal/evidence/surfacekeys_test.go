package evidence

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// compareRenames and compareEndpoints are the surface's orders, field by
// field: what the keys' byte order must equal.
func compareRenames(a, b Rename) int {
	return cmp.Or(strings.Compare(string(a.From), string(b.From)), strings.Compare(string(a.To), string(b.To)))
}

func compareEndpoints(a, b Endpoint) int {
	return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(string(a.Addr), string(b.Addr)), cmp.Compare(a.Port, b.Port))
}

// checkKeys requires that keys split back into what made them, and that
// two keys compare as the fields they were made from.
func checkKeys(t *testing.T, r1, r2 Rename, e1, e2 Endpoint) {
	t.Helper()
	k1, k2 := appendRenameKey(nil, r1), appendRenameKey(nil, r2)
	if got, err := renameOfKey(wire.Bytes(k1)); err != nil || got != r1 {
		t.Fatalf("rename %q: key %q gives %q, %v", r1, k1, got, err)
	}
	if a, b := strings.Compare(string(k1), string(k2)), compareRenames(r1, r2); a != b {
		t.Fatalf("renames %q, %q: keys compare %d, fields %d", r1, r2, a, b)
	}
	j1, j2 := appendEndpointKey(nil, e1), appendEndpointKey(nil, e2)
	if got, err := endpointOfKey(wire.Bytes(j1)); err != nil || got != e1 {
		t.Fatalf("endpoint %q: key %q gives %q, %v", e1, j1, got, err)
	}
	if a, b := strings.Compare(string(j1), string(j2)), compareEndpoints(e1, e2); a != b {
		t.Fatalf("endpoints %q, %q: keys compare %d, fields %d", e1, e2, a, b)
	}
}

// Names with NUL and 0xff bytes, prefixes of each other, and empty ones:
// where a simpler separator would mis-order or mis-split.
func TestSurfaceKeys(t *testing.T) {
	names := []wire.Bytes{"", "x", "x\x00", "x\x00\xff", "x\xff", "\x00", "\x00\x01", "\xff", "x\x00y", "xy", "/a/b", "/a"}
	for _, a := range names {
		for _, b := range names {
			for _, c := range names {
				checkKeys(t, Rename{From: a, To: b}, Rename{From: b, To: c},
					Endpoint{Family: string(a), Addr: b, Port: 9}, Endpoint{Family: string(a), Addr: c, Port: 0xff00})
				checkKeys(t, Rename{From: a, To: c}, Rename{From: a, To: b},
					Endpoint{Family: string(a), Addr: b, Port: 0x0100}, Endpoint{Family: string(c), Addr: a, Port: 0x00ff})
			}
		}
	}
	for _, bad := range []wire.Bytes{"no field end", "x\x00", "x\x00\x02y", "inet\x00\x01addr\x00\x01\x01"} {
		if _, err := endpointOfKey(bad); err == nil {
			t.Errorf("endpoint key %q accepted", bad)
		}
	}
}

func FuzzSurfaceKeys(f *testing.F) {
	f.Add("x", "y\x00", "\xff", "x\x00\xff", uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, a, b, c, d string, p, q uint16) {
		checkKeys(t, Rename{From: wire.Bytes(a), To: wire.Bytes(b)}, Rename{From: wire.Bytes(c), To: wire.Bytes(d)},
			Endpoint{Family: a, Addr: wire.Bytes(b), Port: p}, Endpoint{Family: c, Addr: wire.Bytes(d), Port: q})
	})
}

// A surface's renames and endpoints come out in the surface's order, each
// once, from memory or spilled into runs, as they did when they were
// held in maps.
func TestRenamesAndEndpointsSpilled(t *testing.T) {
	var want CapabilitySurface
	var renames []Rename
	var eps [NumEndpointLists][]Endpoint
	b := newSurfaceBuilder(true)
	store := &memScratch{}
	b.paths.spill = newPathSpill(store)
	b.paths.spill.entries, b.paths.spill.bytes = 7, 1<<20
	for i := range 200 {
		r := Rename{From: wire.Bytes(strings.Repeat("/d", i%5) + "/f\x00" + string(rune('a'+i%26))), To: wire.Bytes("/t" + string(rune('a'+i%13)))}
		b.key = appendRenameKey(b.key[:0], r)
		b.addKey(setRenamed)
		renames = append(renames, r)
		for l := range EndpointList(NumEndpointLists) {
			e := Endpoint{Family: []string{"inet", "inet6", "unix"}[i%3], Addr: wire.Bytes(string(rune('0' + i%17))), Port: uint16(i % 7 * int(l+1))}
			b.key = appendEndpointKey(b.key[:0], e)
			b.addKey(endpointSet(l))
			eps[l] = append(eps[l], e)
		}
	}
	slices.SortFunc(renames, compareRenames)
	want.FilesRenamed = slices.Compact(renames)
	for l, f := range want.endpointFields() {
		slices.SortFunc(eps[l], compareEndpoints)
		*f = slices.Compact(eps[l])
	}
	if len(b.paths.spill.runs) == 0 {
		t.Fatal("nothing was spilled")
	}
	got := b.build()
	if !slices.Equal(got.FilesRenamed, want.FilesRenamed) {
		t.Errorf("renames %q, want %q", got.FilesRenamed, want.FilesRenamed)
	}
	for l := range EndpointList(NumEndpointLists) {
		if !slices.Equal(got.Endpoints(l), want.Endpoints(l)) {
			t.Errorf("endpoint list %d: %v, want %v", l, got.Endpoints(l), want.Endpoints(l))
		}
	}
}

// A surface built once, as diff builds one per tool call, keeps its
// renames and endpoints at their own size, not in a 64 KiB arena chunk.
func TestBuildSurfaceKeysNotInArena(t *testing.T) {
	b := newSurfaceBuilder(false)
	b.key = appendEndpointKey(b.key[:0], Endpoint{Family: "inet", Addr: "10.0.0.1", Port: 53})
	b.addKey(endpointSet(ListNetwork))
	b.key = appendRenameKey(b.key[:0], Rename{From: "/a", To: "/b"})
	b.addKey(setRenamed)
	if b.paths.arena != nil {
		t.Fatalf("keys went to an arena of %d bytes", cap(b.paths.arena))
	}
	s := b.build()
	if len(s.Network) != 1 || s.Network[0].Addr != "10.0.0.1" || len(s.FilesRenamed) != 1 || s.FilesRenamed[0].To != "/b" {
		t.Fatalf("surface %+v", s)
	}
}
