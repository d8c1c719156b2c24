//go:build linux

package capture

import (
	"fmt"

	"github.com/cilium/ebpf"

	"vigil/internal/wire"
)

// counterSnapshot holds the per-CPU counters summed over CPUs, indexed
// class*numKinds+kind (enum vigil_counter_class, enum vigil_kind).
type counterSnapshot []uint64

func (s counterSnapshot) perKind(class vigilBPFVigilCounterClass) map[wire.Kind]uint64 {
	out := make(map[wire.Kind]uint64, numKinds)
	for i, k := range kindByIndex {
		out[k] = s[int(class)*numKinds+int(i)]
	}
	return out
}

func (c *Capture) readCounters() (counterSnapshot, error) {
	n := int(vigilBPFVigilCounterClassVIGIL_NCLASSES) * numKinds
	snap := make(counterSnapshot, n)
	var perCPU []uint64
	m := c.objs.counters
	for _, i := range counterReadOrder() {
		if err := m.Lookup(uint32(i), &perCPU); err != nil {
			return nil, fmt.Errorf("capture: read kernel counter %d: %w", i, err)
		}
		for _, v := range perCPU {
			snap[i] += v
		}
	}
	return snap, nil
}

// counterReadOrder reads RING_DONE before every other class: a request
// completed by a task not the run's is counted untraced, then done (the
// first a fetching, fully ordered atomic), so a completion between two
// reads is counted twice (untraced, and still open), never lost. The
// reader's lookups are separate bpf() syscalls with no barrier of their
// own between them: on a weakly ordered CPU the reader's side of the
// ordering rests on the atomics those syscalls perform (fdget's), not on
// anything here.
func counterReadOrder() []int {
	n := int(vigilBPFVigilCounterClassVIGIL_NCLASSES) * numKinds
	done := int(vigilBPFVigilCounterClassVIGIL_C_RING_DONE) * numKinds
	order := make([]int, 0, n)
	for i := done; i < done+numKinds; i++ {
		order = append(order, i)
	}
	for i := 0; i < n; i++ {
		if i < done || i >= done+numKinds {
			order = append(order, i)
		}
	}
	return order
}

// emittedTotal is the kernel's count of emitted records, all kinds.
func (c *Capture) emittedTotal() (uint64, error) {
	var total uint64
	var perCPU []uint64
	m := c.objs.counters
	for i := range numKinds {
		if err := m.Lookup(uint32(int(vigilBPFVigilCounterClassVIGIL_C_EMIT)*numKinds+i), &perCPU); err != nil {
			return 0, fmt.Errorf("read emission counter: %w", err)
		}
		for _, v := range perCPU {
			total += v
		}
	}
	return total, nil
}

// zeroCounters sets every counter of m, on every CPU, to 0.
func zeroCounters(m *ebpf.Map) error {
	n := int(vigilBPFVigilCounterClassVIGIL_NCLASSES) * numKinds
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return fmt.Errorf("count possible CPUs: %w", err)
	}
	zeros := make([]uint64, cpus)
	for i := 0; i < n; i++ {
		if err := m.Update(uint32(i), zeros, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("reset kernel counter %d: %w", i, err)
		}
	}
	return nil
}

// ringOpen is how many io_uring requests of the run were followed from
// submission without their completion being seen, or, if larger, how
// many of its completions were queued past a full CQ ring (each leaves its
// request open; a completion takes an entry only if its opcode and
// user_data match, and io_uring_req_failed clears the address of a
// request that fails before submission, so another request can take it
// only by matching both). The per-CPU
// counts of a request's submission and completion may be on different
// CPUs; their sums are exact.
func ringOpen(cnt counterSnapshot) uint64 {
	opened := wire.Total(cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_RING_OPEN))
	done := wire.Total(cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_RING_DONE))
	overflowed := wire.Total(cnt.perKind(vigilBPFVigilCounterClassVIGIL_C_RING_OVERFLOW))
	var open uint64
	if opened > done {
		open = opened - done
	}
	return max(open, overflowed)
}
