package capture

import (
	"math/rand/v2"
	"slices"
	"testing"

	"vigil/internal/wire"
)

// collect runs an orderer over arrivals (seqs in arrival order; a
// negative entry -s-1 is a record with seq s that could not be decoded),
// in blocks of size, and returns the seqs passed on and the late count.
func collect(arrivals []int64, size, limit int) ([]uint64, uint64) {
	var out []uint64
	var pool []*block
	o := orderer{
		limit: limit,
		emit: func(b *block) {
			for _, e := range b.ev {
				out = append(out, e.Seq)
			}
			pool = append(pool, b)
		},
		newBlock: func() *block {
			if n := len(pool); n > 0 {
				b := pool[n-1]
				pool = pool[:n-1]
				b.ev = b.ev[:0]
				return b
			}
			return &block{ev: make([]wire.Kernel, 0, size)}
		},
	}
	o.recycle = func(b *block) { pool = append(pool, b) }
	cur := o.newBlock()
	for _, a := range arrivals {
		if a < 0 {
			o.skip(uint64(-a - 1))
			continue
		}
		cur.ev = append(cur.ev, wire.Kernel{Seq: uint64(a)})
		if len(cur.ev) == size {
			o.push(cur)
			cur = o.newBlock()
		}
	}
	o.push(cur)
	o.flush()
	return out, o.late
}

func seqs(n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i)
	}
	return s
}

// Records overtaken by up to a ring's worth of others come out in seq
// order, whatever the block size; records that could not be decoded
// leave their seq out and hold nothing back.
func TestOrdererRestoresSeqOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + r.IntN(5000)
		window := 1 + r.IntN(300)
		arrivals := make([]int64, n)
		for i := range arrivals {
			arrivals[i] = int64(i)
		}
		// Each record is overtaken by fewer than window others.
		key := make([]int, n)
		for i := range key {
			key[i] = i + r.IntN(window)
		}
		slices.SortStableFunc(arrivals, func(a, b int64) int { return key[a] - key[b] })
		want := seqs(n)
		if round%4 == 0 {
			// Two records not decoded.
			for range 2 {
				i := r.IntN(n)
				if arrivals[i] >= 0 {
					want = slices.DeleteFunc(want, func(s uint64) bool { return s == uint64(arrivals[i]) })
					arrivals[i] = -arrivals[i] - 1
				}
			}
		}
		size := []int{1, 7, blockEvents}[round%3]
		got, late := collect(arrivals, size, 2*window+size)
		if late != 0 || !slices.Equal(got, want) {
			t.Fatalf("round %d (n %d, window %d, block %d): %d late, passed on %d events, in order %v", round, n, window, size, late, len(got), slices.IsSorted(got))
		}
	}
}

// A seq that never arrives holds back at most limit events; then they go
// on with the gap, and the missing record, if it turns up, is counted
// late and not passed on.
func TestOrdererBoundsWhatItHolds(t *testing.T) {
	var arrivals []int64
	for i := 1; i <= 100; i++ {
		arrivals = append(arrivals, int64(i))
	}
	got, late := collect(arrivals, 10, 50)
	if late != 0 || !slices.Equal(got, seqs(101)[1:]) {
		t.Fatalf("a missing seq 0: late %d, passed on %v", late, got)
	}
	arrivals = append(arrivals, 0)
	got, late = collect(arrivals, 10, 50)
	if late != 1 || !slices.Equal(got, seqs(101)[1:]) {
		t.Fatalf("seq 0 after 100 others with a limit of 50: late %d, passed on %v", late, got)
	}
	// Within the limit it is put back in its place.
	got, late = collect(arrivals, 10, 200)
	if late != 0 || !slices.Equal(got, seqs(101)) {
		t.Fatalf("seq 0 after 100 others with a limit of 200: late %d, passed on %v", late, got)
	}
	// A gap is passed over only for what is held behind it: two races
	// straddling block ends, with the limit at one block, lose nothing.
	arrivals = nil
	for s := range 4096 {
		arrivals = append(arrivals, int64(s))
	}
	arrivals[1023], arrivals[1024] = arrivals[1024], arrivals[1023]
	arrivals[2046], arrivals[2047] = arrivals[2047], arrivals[2046]
	arrivals[2047], arrivals[2048] = arrivals[2048], arrivals[2047]
	got, late = collect(arrivals, blockEvents, blockEvents)
	if late != 0 || !slices.Equal(got, seqs(4096)) {
		t.Fatalf("two races at block ends, limit one block: late %d, %d passed on, in order %v", late, len(got), slices.IsSorted(got))
	}
	// A repeated seq is late, never written twice.
	got, late = collect([]int64{0, 1, 2, 2, 3}, 2, 50)
	if late != 1 || !slices.Equal(got, seqs(4)) {
		t.Fatalf("a repeated seq: late %d, passed on %v", late, got)
	}
}
