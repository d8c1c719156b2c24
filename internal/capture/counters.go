package capture

import (
	"fmt"

	"vigil/internal/event"
)

// Counter classes, mirroring VIGIL_C_* in bpf/capture.h.
const (
	classEmit = iota
	classDrop
	classInflightFull
	numClasses
)

// counterSnapshot holds the per-CPU counters summed over CPUs, indexed
// class*len(kindByIndex)+kind.
type counterSnapshot []uint64

func (s counterSnapshot) perKind(class int) map[event.Kind]uint64 {
	out := make(map[event.Kind]uint64, len(kindByIndex))
	for i, k := range kindByIndex {
		out[k] = s[class*len(kindByIndex)+i]
	}
	return out
}

func (c *Capture) readCounters() (counterSnapshot, error) {
	n := numClasses * len(kindByIndex)
	snap := make(counterSnapshot, n)
	var perCPU []uint64
	for i := 0; i < n; i++ {
		if err := c.objs.Counters.Lookup(uint32(i), &perCPU); err != nil {
			return nil, fmt.Errorf("capture: read kernel counter %d: %w", i, err)
		}
		for _, v := range perCPU {
			snap[i] += v
		}
	}
	return snap, nil
}

// emittedTotal is the kernel's count of emitted records, all kinds.
func (c *Capture) emittedTotal() (uint64, error) {
	var total uint64
	var perCPU []uint64
	for i := range kindByIndex {
		if err := c.objs.Counters.Lookup(uint32(classEmit*len(kindByIndex)+i), &perCPU); err != nil {
			return 0, fmt.Errorf("read emission counter: %w", err)
		}
		for _, v := range perCPU {
			total += v
		}
	}
	return total, nil
}
