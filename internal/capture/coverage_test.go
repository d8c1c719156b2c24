//go:build linux

package capture

import (
	"slices"
	"testing"

	"vigil/internal/wire"
)

// Where io_uring completions are recorded but those that skip the
// completion hook cannot be counted (no io_uring_submit_req, as before
// about 6.3), coverage says so; the io_uring class itself stays covered.
func TestUncoveredIOUringUntraced(t *testing.T) {
	untraced := func(probes []ProbeStatus) bool {
		return slices.ContainsFunc(uncoveredGiven(probes), func(u Uncovered) bool { return u.Class == wire.UncoveredIOUringUntraced })
	}
	all := []ProbeStatus{{Name: "tp_btf/io_uring_complete", Attached: true}, {Name: "tp_btf/io_uring_submit_req", Attached: true},
		{Name: "tp_btf/io_uring_cqe_overflow", Attached: true}}
	if untraced(all) {
		t.Error("every io_uring hook attached, yet untraced completions are declared unseen")
	}
	noSubmit := slices.Clone(all)
	noSubmit[1] = ProbeStatus{Name: "tp_btf/io_uring_submit_req", Error: "no such tracepoint"}
	if !untraced(noSubmit) {
		t.Error("io_uring_submit_req missing, yet coverage does not say untraced completions are unseen")
	}
	noRing := []ProbeStatus{{Name: "tp_btf/io_uring_complete", Error: "no io_uring"}}
	if untraced(noRing) {
		t.Error("without io_uring at all, the io_uring class is what is not covered")
	}
}
