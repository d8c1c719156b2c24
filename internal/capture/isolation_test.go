//go:build linux

package capture

import (
	"fmt"
	"path/filepath"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestIsolation(t *testing.T) {
	testenv.RequireRoot(t)
	const n = 500
	cgA, cgB := testCgroup(t), testCgroup(t)
	capA, capB := openCapture(t, cgA, 0), openCapture(t, cgB, 0)
	dir := t.TempDir()
	cmds := map[string]interface{ Run() error }{
		"a":       helper(t, cgA, "files", dir, "a", fmt.Sprint(n), "2"),
		"b":       helper(t, cgB, "files", dir, "b", fmt.Sprint(n), "2"),
		"outside": helper(t, "", "files", dir, "outside", fmt.Sprint(n), "2"),
	}
	errs := make(chan error, len(cmds))
	for _, cmd := range cmds {
		go func() { errs <- cmd.Run() }()
	}
	for range cmds {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rA, rB := finish(t, capA, cgA), finish(t, capB, cgB)
	for name, tc := range map[string]struct {
		r          *Result
		own, other string
		cgID       uint64
	}{
		"A": {rA, "a", "b", capA.SessionCgroupID()},
		"B": {rB, "b", "a", capB.SessionCgroupID()},
	} {
		checkComplete(t, tc.r)
		own := countOpens(tc.r, filepath.Join(dir, tc.own))
		if own[wire.AccessWrite] != n || own[wire.AccessRead] != n {
			t.Errorf("capture %s: own opens %v, want %d+%d", name, own, n, n)
		}
		for _, foreign := range []string{tc.other, "outside"} {
			if got := countOpens(tc.r, filepath.Join(dir, foreign)); len(got) != 0 {
				t.Errorf("capture %s saw %v opens of %q files", name, got, foreign)
			}
		}
		for _, ev := range tc.r.Events {
			if ev.CgroupID != tc.cgID {
				t.Errorf("capture %s: event from cgroup %d", name, ev.CgroupID)
				break
			}
		}
	}
}
