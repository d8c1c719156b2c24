package evidence_test

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Correlation gives what the plain definition gives, on layers in seq
// order, with repeated seqs, and out of order: every event in a tool
// call's time window (inclusive ends) is the call's, every other one
// unattributed, each set counted by kind and its seqs folded into ranges.
func TestCorrelateMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	kinds := []wire.Kind{wire.KindOpen, wire.KindExec, wire.KindConnect}
	for round := range 300 {
		n := r.IntN(400)
		k := make([]wire.Kernel, n)
		for i := range k {
			seq := uint64(i)
			switch round % 3 {
			case 1: // repeats and gaps, still in order
				seq = uint64(i/2 + i/7)
			case 2: // some out of order
				if r.IntN(10) == 0 {
					seq = uint64(r.IntN(n + 1))
				}
			}
			k[i] = wire.Kernel{Seq: seq, Kind: kinds[r.IntN(len(kinds))], TimeNS: uint64(r.IntN(1000))}
		}
		var sdk []wire.SDK
		for c := range r.IntN(5) {
			id := string(rune('a' + c))
			start := uint64(r.IntN(1000))
			sdk = append(sdk, wire.SDK{Type: wire.SDKToolCallStarted, ToolCallID: id, MonoNS: start})
			if r.IntN(3) > 0 {
				sdk = append(sdk, wire.SDK{Type: wire.SDKToolCallCompleted, ToolCallID: id, MonoNS: start + uint64(r.IntN(300))})
			}
		}
		got := evidence.Correlate(k, sdk)
		for i, tc := range got.ToolCalls {
			hi := ^uint64(0)
			if tc.Completed {
				hi = tc.CompletedMonoNS
			}
			if want := referenceSet(k, func(e *wire.Kernel) bool { return e.TimeNS >= tc.StartedMonoNS && e.TimeNS <= hi }); !sameJSON(tc.Kernel, want) {
				t.Fatalf("round %d, call %d: %+v, want %+v", round, i, tc.Kernel, want)
			}
		}
		rest := referenceSet(k, func(e *wire.Kernel) bool {
			for _, tc := range got.ToolCalls {
				if e.TimeNS >= tc.StartedMonoNS && (!tc.Completed || e.TimeNS <= tc.CompletedMonoNS) {
					return false
				}
			}
			return true
		})
		if !sameJSON(got.Unattributed, rest) {
			t.Fatalf("round %d: unattributed %+v, want %+v", round, got.Unattributed, rest)
		}
	}
}

// referenceSet is the EventSet of the events of k that in says are in it.
func referenceSet(k []wire.Kernel, in func(*wire.Kernel) bool) evidence.EventSet {
	set := evidence.EventSet{ByKind: evidence.CountKinds(nil), SeqRanges: [][2]uint64{}}
	var seqs []uint64
	for i := range k {
		if in(&k[i]) {
			set.Total++
			set.ByKind[k[i].Kind]++
			seqs = append(seqs, k[i].Seq)
		}
	}
	sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
	for _, q := range seqs {
		if n := len(set.SeqRanges); n > 0 && set.SeqRanges[n-1][1]+1 == q {
			set.SeqRanges[n-1][1] = q
		} else {
			set.SeqRanges = append(set.SeqRanges, [2]uint64{q, q})
		}
	}
	return set
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
