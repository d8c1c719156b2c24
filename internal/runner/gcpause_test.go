package runner

import (
	"runtime/debug"
	"testing"
)

func TestPauseCollection(t *testing.T) {
	origPercent := debug.SetGCPercent(77)
	origLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(origPercent)
		debug.SetMemoryLimit(origLimit)
	})

	resume := pauseCollection()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent while paused = %d, want -1 (off)", p)
	}
	limit := debug.SetMemoryLimit(-1)
	if limit <= pauseHeadroom || limit == origLimit {
		t.Errorf("memory limit while paused = %d, want a finite safety net above %d", limit, pauseHeadroom)
	}
	resume()
	if p := debug.SetGCPercent(77); p != 77 {
		t.Errorf("GC percent after resume = %d, want 77", p)
	}
	if l := debug.SetMemoryLimit(-1); l != origLimit {
		t.Errorf("memory limit after resume = %d, want %d", l, origLimit)
	}
	resume() // a second call changes nothing
	if p := debug.SetGCPercent(77); p != 77 {
		t.Errorf("GC percent after a second resume = %d, want 77", p)
	}

	// A lower limit the caller set (GOMEMLIMIT) is kept.
	debug.SetMemoryLimit(64 << 20)
	resume = pauseCollection()
	if l := debug.SetMemoryLimit(-1); l != 64<<20 {
		t.Errorf("memory limit while paused under a caller limit = %d, want %d", l, 64<<20)
	}
	resume()
	if l := debug.SetMemoryLimit(-1); l != 64<<20 {
		t.Errorf("caller limit after resume = %d, want %d", l, 64<<20)
	}
}
