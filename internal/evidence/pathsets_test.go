package evidence

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

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
			got, err := s.sorted()
			if err != nil {
				t.Fatal(err)
			}
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

// memScratch is a Scratch in memory; FailAfter > 0 makes writes fail once
// it holds that many bytes.
type memScratch struct {
	b         []byte
	FailAfter int
	ReadErr   error // cuts every section read in half, then fails
}

func (m *memScratch) Write(p []byte) (int, error) {
	if m.FailAfter > 0 && len(m.b)+len(p) > m.FailAfter {
		n := m.FailAfter - len(m.b)
		m.b = append(m.b, p[:n]...)
		return n, errors.New("scratch full")
	}
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memScratch) Size() int64 { return int64(len(m.b)) }

func (m *memScratch) Section(off, n int64) io.Reader {
	if m.ReadErr != nil {
		return io.MultiReader(bytes.NewReader(m.b[off:off+n/2]), iotest.ErrReader(m.ReadErr))
	}
	return bytes.NewReader(m.b[off : off+n])
}

// Path sets that move their entries to a scratch store list exactly what
// they list held in memory: whether the store takes a run of a few paths
// at a time (so a path is in many runs, the runs merged many times over),
// stops at a byte limit, or fails part way (the rest stays in memory).
func TestPathSetsSpilled(t *testing.T) {
	for _, c := range []struct {
		name                    string
		entries, bytes, maxRuns int
		failAfter               int
		wantRuns, wantMerges    bool
	}{
		{"a run every 40 paths, merged every 3 runs", 40, 1 << 20, 3, 0, true, true},
		{"a run every 300 bytes", 1 << 20, 300, 64, 0, true, false},
		{"one run, never merged", 2000, 1 << 30, 64, 0, true, false},
		{"the store fails part way", 50, 1 << 20, 4, 9000, true, true},
		// Past the failure the entries outgrow the index a fresh
		// table starts with (1024 slots, half of them usable).
		{"the store fails with more held than a fresh index takes", 2000, 1 << 20, 64, 10, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			pool := []wire.Bytes{"", "a", "\xff", "a\x00b", "é", wire.Bytes(strings.Repeat("long/", 200))}
			for i := range 3000 {
				pool = append(pool, wire.Bytes(fmt.Sprintf("/d%d/f%d", i%13, i)))
			}
			plain := newPathSets(true)
			st := &memScratch{FailAfter: c.failAfter}
			s := newPathSets(true)
			s.spill = newPathSpill(st)
			s.spill.entries, s.spill.bytes, s.spill.maxRuns = c.entries, c.bytes, c.maxRuns
			for range 20000 {
				// Runs of repeats, as a workload re-opening one file.
				p := pool[r.IntN(len(pool))]
				bit := uint16(1) << r.IntN(numSets)
				for range 1 + r.IntN(3) {
					plain.add(p, bit)
					s.add(p, bit)
				}
			}
			want, err := plain.sorted()
			if err != nil {
				t.Fatal(err)
			}
			sp := s.spill
			if c.wantRuns && sp.spills == 0 || c.wantMerges && sp.merges == 0 {
				t.Fatalf("%d runs, %d merges: the limits were not reached", sp.spills, sp.merges)
			}
			if (c.failAfter > 0) != (sp.err != nil) {
				t.Fatalf("store failing after %d bytes: spill error %v", c.failAfter, sp.err)
			}
			if sp.err == nil && len(s.entries) >= 2*c.entries {
				t.Fatalf("%d entries held in memory with a limit of %d", len(s.entries), c.entries)
			}
			got, err := s.sorted()
			if err != nil {
				t.Fatal(err)
			}
			for bit := uint16(1); bit <= setExecFailed; bit <<= 1 {
				if !reflect.DeepEqual(got[bit], want[bit]) {
					t.Fatalf("set %#x: %d paths spilled, %d in memory (%q... against %q...)", bit, len(got[bit]), len(want[bit]), head(got[bit]), head(want[bit]))
				}
				var each []wire.Bytes
				if err := s.each(bits.TrailingZeros16(bit), func(p wire.Bytes) error {
					each = append(each, wire.Bytes(strings.Clone(string(p))))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(each) == 0 {
					each = []wire.Bytes{}
				}
				if !reflect.DeepEqual(each, want[bit]) {
					t.Fatalf("set %#x: each gives %d paths, want %d", bit, len(each), len(want[bit]))
				}
			}
		})
	}
}

// A store that cannot give back what it took fails each, naming what
// went wrong, rather than listing fewer paths.
func TestPathSetsSpilledReadError(t *testing.T) {
	st := &memScratch{}
	s := newPathSets(true)
	s.spill = newPathSpill(st)
	s.spill.entries = 3
	for i := range 10 {
		s.add(wire.Bytes(fmt.Sprintf("/f%d", i)), setRead)
	}
	s.seal()
	st.ReadErr = errors.New("disk gone")
	err := s.each(0, func(wire.Bytes) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "read spilled paths: disk gone") {
		t.Fatalf("each over a cut store = %v, want a read error", err)
	}
}
