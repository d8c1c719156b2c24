package gcpace

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's pacing without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestRelax(t *testing.T) {
	orig := debug.SetGCPercent(77)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	resume := Relax()
	if p := gcPercent(); p != relaxedGCPercent {
		t.Errorf("GC percent while relaxed = %d, want %d", p, relaxedGCPercent)
	}
	resume()
	if p := gcPercent(); p != 77 {
		t.Errorf("GC percent after resume = %d, want 77", p)
	}
	debug.SetGCPercent(55)
	resume() // a second call changes nothing
	if p := gcPercent(); p != 55 {
		t.Errorf("GC percent after a second resume = %d, want 55 (set in between)", p)
	}

	// A caller's higher pacing, or none (GOGC=off), is kept.
	for _, caller := range []int{1000, -1} {
		debug.SetGCPercent(caller)
		resume := Relax()
		if p := gcPercent(); p != caller {
			t.Errorf("GC percent while relaxed under the caller's %d = %d, want it kept", caller, p)
		}
		resume()
		if p := gcPercent(); p != caller {
			t.Errorf("GC percent after resume under the caller's %d = %d", caller, p)
		}
	}

	// Two recordings at once: the first to finish does not restore.
	debug.SetGCPercent(77)
	first, second := Relax(), Relax()
	first()
	if p := gcPercent(); p != relaxedGCPercent {
		t.Errorf("GC percent with one recording still running = %d, want %d", p, relaxedGCPercent)
	}
	second()
	if p := gcPercent(); p != 77 {
		t.Errorf("GC percent after both finished = %d, want 77", p)
	}
}
