package runner

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// pauseCollection turns the garbage collector's proportional pacing off
// from the drain until the archive is written, and returns what restores
// it.
//
// Why: by the drain, the heap is mostly the captured events, and they stay
// live until the archive holds them. A collection in that stretch finds
// almost nothing to free, yet it is the most expensive one of the run: it
// marks every event, and while it marks, each pointer the drain and the
// encoder copy goes through the write barrier. On a run of 300,000 events
// it cost 0.3 to 0.5 s of drain.
//
// A memory limit stays as the safety net: twice what the process holds at
// the drain, plus headroom, or the caller's own limit (GOMEMLIMIT) when
// that is lower. Past it the collector runs as usual.
func pauseCollection() (restore func()) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	held := s[0].Value.Uint64()
	limit := int64(math.MaxInt64)
	if held < math.MaxInt64/4 {
		limit = int64(2*held) + pauseHeadroom
	}
	prevLimit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(prevLimit, limit))
	prevPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}

// pauseHeadroom is what the archive write may allocate beyond twice the
// heap before collection resumes: its buffers, the surface's index.
const pauseHeadroom = 256 << 20
