package archive

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRC32Combine: combining the CRCs of two parts gives the CRC of the
// whole, for empty parts, single bytes, odd lengths and segment-sized ones.
func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*SegmentBytes+77)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	cuts := [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {5, 3}, {SegmentBytes, SegmentBytes}, {17, 2*SegmentBytes + 60}, {SegmentBytes + 1, 0}}
	for range 20 {
		a := r.IntN(len(data))
		cuts = append(cuts, [2]int{a, r.IntN(len(data) - a)})
	}
	for _, c := range cuts {
		a, b := data[:c[0]], data[c[0]:c[0]+c[1]]
		want := crc32.ChecksumIEEE(data[:c[0]+c[1]])
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Fatalf("parts of %d and %d bytes: combined %08x, whole %08x", len(a), len(b), got, want)
		}
	}
}
