package evidence

import (
	"hash/maphash"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// TestPathSetsUnderCollisions runs the path index with hashes that
// collide: every path in one of four tags, and all in one run of slots,
// so that only the comparison of the paths themselves tells them apart.
// The result must be what a plain map gives.
func TestPathSetsUnderCollisions(t *testing.T) {
	for _, c := range []struct {
		name string
		hash func(maphash.Seed, string) uint64
	}{
		{"one slot, four tags", func(_ maphash.Seed, s string) uint64 { return uint64(len(s)%4) << 32 }},
		{"same tag, spread slots", func(seed maphash.Seed, s string) uint64 { return maphash.String(seed, s) & 0xffffffff }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(h func(maphash.Seed, string) uint64) { hashPath = h }(hashPath)
			hashPath = c.hash
			r := rand.New(rand.NewPCG(3, 4))
			pool := []wire.Bytes{"", "a", "\xff", "a\x00b", "é"}
			for i := range 1500 {
				pool = append(pool, wire.Bytes(strings.Repeat("p", i%7)+string(rune('a'+i%26))+string(rune('A'+i/26))))
			}
			want := map[wire.Bytes]uint16{}
			s := newPathSets(true) // paths copied: the arena is exercised too
			for range 8000 {
				p := pool[r.IntN(len(pool))]
				bit := uint16(1) << r.IntN(11)
				s.add(p, bit)
				want[p] |= bit
			}
			got := s.sorted()
			for bit := uint16(1); bit <= setExecFailed; bit <<= 1 {
				exp := []wire.Bytes{}
				for p, in := range want {
					if in&bit != 0 {
						exp = append(exp, p)
					}
				}
				slices.Sort(exp)
				if !reflect.DeepEqual(got[bit], exp) {
					t.Fatalf("set %#x: got %d paths, want %d (%q... against %q...)", bit, len(got[bit]), len(exp), head(got[bit]), head(exp))
				}
			}
		})
	}
}

func head(p []wire.Bytes) []wire.Bytes { return p[:min(len(p), 5)] }
