package capture

import (
	"fmt"
	"slices"

	"vigil/internal/wire"
)

// blockEvents is how many events the reader decodes into one block before
// passing it on.
const blockEvents = 1 << 10

// block is a run of decoded events. Blocks are reused once passed on.
type block struct{ ev []wire.Kernel }

// orderer passes the reader's blocks on in seq order. Records leave the
// ring in the order they were reserved, and the kernel numbers a record
// just after reserving it, so two CPUs racing between the two steps can
// put a record ahead of one with a lower seq. Each reserved record holds
// its place in the ring until committed, so everything that overtakes a
// record fits in the ring with it: holding back up to a ring's worth of
// records is enough to restore the order. Seqs are dense (the kernel
// numbers only records it emits); a record that could not be decoded
// still gives its seq (skip) when its header is whole.
type orderer struct {
	next    uint64          // the seq the next event passed on carries
	carry   []wire.Kernel   // events ahead of a missing seq, sorted
	skipped map[uint64]bool // seqs of records not decoded
	// limit is the most events held for a missing seq; beyond it they
	// go on with the gap, and a record arriving after its place has
	// passed is counted in late.
	limit     int
	late      uint64
	firstLate string
	emit      func(*block)
	newBlock  func() *block
	recycle   func(*block)
}

// push takes a block of events in arrival order.
func (o *orderer) push(b *block) {
	if len(o.carry) == 0 && o.inOrder(b.ev) {
		o.next += uint64(len(b.ev))
		o.emit(b)
		return
	}
	o.carry = append(o.carry, b.ev...)
	o.recycle(b)
	slices.SortStableFunc(o.carry, func(a, b wire.Kernel) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	o.release(false)
}

// inOrder reports whether ev carries exactly the seqs next, next+1, ...
func (o *orderer) inOrder(ev []wire.Kernel) bool {
	for i := range ev {
		if ev[i].Seq != o.next+uint64(i) {
			return false
		}
	}
	return true
}

// skip records the seq of a record that was not decoded.
func (o *orderer) skip(seq uint64) {
	if seq < o.next {
		return
	}
	if o.skipped == nil {
		o.skipped = map[uint64]bool{}
	}
	o.skipped[seq] = true
}

// flush passes on everything held, in seq order, gaps and all: nothing
// more will arrive.
func (o *orderer) flush() { o.release(true) }

// release passes on the run of held events that continues from next. A
// gap is passed over when final, or when more than limit events would
// still be held behind it: the oldest gap first, and only as many as
// that takes.
func (o *orderer) release(final bool) {
	i, out := 0, 0
	for i < len(o.carry) {
		s := o.carry[i].Seq
		switch {
		case s < o.next:
			// Its place has passed (or it repeats a seq): it cannot be
			// put in order, so it is counted, not written.
			o.late++
			if o.firstLate == "" {
				o.firstLate = fmt.Sprintf("record with seq %d arrived after seq %d had been passed on", s, o.next-1)
			}
			i++
			continue
		case s == o.next:
		case o.skipped[o.next]:
			delete(o.skipped, o.next)
			o.next++
			continue
		case final || len(o.carry)-i > o.limit:
			o.next = s // a gap: the consumer reports it
		default:
			o.moveDown(i, out)
			return
		}
		o.carry[out] = o.carry[i]
		out++
		i++
		o.next++
	}
	o.moveDown(i, out)
	if final {
		o.skipped = nil
	}
}

// moveDown passes on the first out events of carry (the ones kept, in
// order, among the first i) and keeps carry[i:].
func (o *orderer) moveDown(i, out int) {
	for start := 0; start < out; start += blockEvents {
		b := o.newBlock()
		b.ev = append(b.ev[:0], o.carry[start:min(out, start+blockEvents)]...)
		o.emit(b)
	}
	n := copy(o.carry, o.carry[i:])
	clear(o.carry[n:])
	o.carry = o.carry[:n]
	for s := range o.skipped {
		if s < o.next {
			delete(o.skipped, s)
		}
	}
}
