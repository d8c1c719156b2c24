//go:build linux

package capture

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// dropCauseCounters names, for each drop cause the health document
// reports (by its JSON name), the kernel counter class that counts it.
var dropCauseCounters = map[string]struct {
	class vigilBPFVigilCounterClass
	name  string // as in bpf/capture.h
}{
	"ring_full":   {vigilBPFVigilCounterClassVIGIL_C_DROP, "VIGIL_C_DROP"},
	"slots_busy":  {vigilBPFVigilCounterClassVIGIL_C_BUSY, "VIGIL_C_BUSY"},
	"after_close": {vigilBPFVigilCounterClassVIGIL_C_LATE, "VIGIL_C_LATE"},
}

// TestDropCausesAreCounted: every drop cause the format reports is a
// counter the BPF programs increment; a cause nothing counts would always
// read zero and hide the drops it stands for.
func TestDropCausesAreCounted(t *testing.T) {
	src, err := os.ReadFile("bpf/capture.bpf.c")
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile("bpf/capture.h")
	if err != nil {
		t.Fatal(err)
	}
	classes := regexp.MustCompile(`(?s)enum vigil_counter_class \{(.*?)\}`).FindSubmatch(header)
	if classes == nil {
		t.Fatal("bpf/capture.h: no enum vigil_counter_class")
	}
	ty := reflect.TypeFor[wire.DropCauses]()
	if ty.NumField() != len(dropCauseCounters) {
		t.Errorf("wire.DropCauses has %d causes, the table here %d", ty.NumField(), len(dropCauseCounters))
	}
	for f := range ty.Fields() {
		cause, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		c, ok := dropCauseCounters[cause]
		if !ok {
			t.Errorf("drop cause %q (DropCauses.%s) has no kernel counter", cause, f.Name)
			continue
		}
		// The class's position in the C enum is the generated constant.
		names := regexp.MustCompile(`VIGIL_[A-Z_]+`).FindAllString(string(classes[1]), -1)
		if int(c.class) >= len(names) || names[c.class] != c.name {
			t.Errorf("drop cause %q: counter class %d is not %s in bpf/capture.h (%v)", cause, c.class, c.name, names)
		}
		if !strings.Contains(string(src), "count("+c.name+",") && !strings.Contains(string(src), "count_in(gen, "+c.name+",") {
			t.Errorf("drop cause %q: bpf/capture.bpf.c never counts %s", cause, c.name)
		}
	}
}

// TestRingOpen: requests followed from submission whose completion was not
// seen are untraced, and overflows count on their own: a later request
// that fails before submission at an overflowed request's address
// completes against its entry and must not net the overflow away.
func TestRingOpen(t *testing.T) {
	at := func(class vigilBPFVigilCounterClass) int {
		for i, k := range kindByIndex {
			if k == wire.KindIOUring {
				return int(class)*numKinds + int(i)
			}
		}
		t.Fatal("no io_uring kind")
		return 0
	}
	for _, c := range []struct {
		opened, done, overflowed, want uint64
	}{
		{5, 5, 0, 0},
		{5, 3, 0, 2},  // two never completed where the run could see
		{10, 8, 2, 2}, // two overflowed: their entries stay open
		{1, 1, 1, 1},  // the overflowed request's entry taken by a prep failure
		{0, 0, 0, 0},
	} {
		cnt := make(counterSnapshot, int(vigilBPFVigilCounterClassVIGIL_NCLASSES)*numKinds)
		cnt[at(vigilBPFVigilCounterClassVIGIL_C_RING_OPEN)] = c.opened
		cnt[at(vigilBPFVigilCounterClassVIGIL_C_RING_DONE)] = c.done
		cnt[at(vigilBPFVigilCounterClassVIGIL_C_RING_OVERFLOW)] = c.overflowed
		if got := ringOpen(cnt); got != c.want {
			t.Errorf("opened %d, done %d, overflowed %d: %d untraced, want %d", c.opened, c.done, c.overflowed, got, c.want)
		}
	}
}

// TestCounterReadOrder: every counter is read once, and RING_DONE before
// UNTRACED (see counterReadOrder).
func TestCounterReadOrder(t *testing.T) {
	order := counterReadOrder()
	n := int(vigilBPFVigilCounterClassVIGIL_NCLASSES) * numKinds
	seen := map[int]int{}
	for pos, i := range order {
		if _, dup := seen[i]; dup || i < 0 || i >= n {
			t.Fatalf("counter %d read twice or out of range", i)
		}
		seen[i] = pos
	}
	if len(seen) != n {
		t.Fatalf("%d of %d counters read", len(seen), n)
	}
	for k := range numKinds {
		done := seen[int(vigilBPFVigilCounterClassVIGIL_C_RING_DONE)*numKinds+k]
		untraced := seen[int(vigilBPFVigilCounterClassVIGIL_C_UNTRACED)*numKinds+k]
		if done > untraced {
			t.Fatalf("kind %d: RING_DONE read after UNTRACED", k)
		}
	}
}
