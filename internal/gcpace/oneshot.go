package gcpace

import (
	"os"
	"runtime/debug"
)

// minOneShotLimit is the least memory limit OneShot sets: below it, the
// default pacing is kept.
const minOneShotLimit = 256 << 20

// OneShot turns proportional collection off for the rest of a process
// that reads an archive, holding its events, and exits (inspect, diff,
// check): what it decodes stays live until it is done. On a
// 900,000-event archive, reading it whole took 2.4-2.7 s instead of
// 2.9-3.3 s and peaked at 528 instead of 587 MB (three runs each,
// interleaved). verify, which folds the events instead of holding them,
// does not call it: nearly all it reads is soon garbage.
//
// The collector still runs as the heap nears a memory limit, set at three
// quarters of the memory available to the process: the host's
// MemAvailable, or, when lower, what its cgroup (or an ancestor) still
// has below its limit. Had the live heap outgrown that, the default
// pacing, which lets the heap reach twice it, would not have fitted
// either. A GOGC or GOMEMLIMIT in the environment is left alone, as is a
// host whose available memory cannot be read.
func OneShot() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	avail, ok := availableMemory()
	if !ok {
		return
	}
	if limit, ok := oneShotLimit(avail); ok {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(-1)
	}
}

// oneShotLimit is the memory limit OneShot sets for avail bytes
// available, or false when that is too little to bother.
func oneShotLimit(avail uint64) (int64, bool) {
	limit := min(avail/4*3, 1<<62)
	return int64(limit), limit >= minOneShotLimit
}
