package gcpace

import (
	"runtime/debug"
	"sync"
)

// relaxedGCPercent is the pacing Relax sets: the next collection waits
// until the heap is five times what the last one found live.
//
// A recording relaxes it from its drain until its archive is written. By
// the drain, the heap is mostly the captured events, and they stay
// live until the archive holds them. A collection in that stretch finds
// almost nothing to free, yet it is the most expensive one of the run: it
// marks every event, and while it marks, each pointer the drain and the
// encoder copy goes through the write barrier. On a run of 300,000 events
// it cost 0.3 to 0.7 s of drain. The events, their copy in one slice and
// the archive's buffers stay within five times the last live heap (the
// heap itself is at most twice it, as the default pacing collects there),
// so the write usually runs without a collection; one that does start is
// an ordinary, paced one. A caller's own GOGC, when higher or off, and
// GOMEMLIMIT, are kept.
const relaxedGCPercent = 400

var relaxed struct {
	sync.Mutex
	holders int // Relax calls not yet resumed
	prev    int // the pacing before the first of them
}

// Relax sets the relaxed pacing and returns what restores the previous
// one. Calling the result again does nothing; with several
// recordings in one process, the last one to finish restores it, and a
// change made meanwhile is overwritten. The runtime reads the pacing only
// by setting it, so a caller's higher GOGC is back a moment after 400 was
// set.
func Relax() (resume func()) {
	relaxed.Lock()
	defer relaxed.Unlock()
	if relaxed.holders == 0 {
		relaxed.prev = debug.SetGCPercent(relaxedGCPercent)
		if relaxed.prev < 0 || relaxed.prev > relaxedGCPercent {
			debug.SetGCPercent(relaxed.prev)
		}
	}
	relaxed.holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			relaxed.Lock()
			defer relaxed.Unlock()
			if relaxed.holders--; relaxed.holders == 0 {
				debug.SetGCPercent(relaxed.prev)
			}
		})
	}
}
