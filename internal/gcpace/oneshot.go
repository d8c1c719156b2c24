package gcpace

import (
	"os"
	"runtime/debug"
)

// minOneShotLimit is the least memory limit OneShot sets: below it, the
// default pacing is kept.
const minOneShotLimit = 256 << 20

// OneShot turns proportional collection off for the rest of a process
// that reads an archive and exits (verify, inspect, diff, check): what it
// decodes stays live until it is done. On a 900,000-event archive,
// verify took 2.4-2.7 s instead of 2.9-3.3 s and peaked at 528 instead
// of 587 MB (three runs each, interleaved).
//
// The collector still runs as the heap nears a memory limit: half of the
// memory available to the process (the host's MemAvailable, or the
// cgroup's limit when lower). A GOGC or GOMEMLIMIT in the environment is
// left alone, as is a host whose available memory cannot be read.
func OneShot() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	avail, ok := availableMemory()
	if !ok || avail/2 < minOneShotLimit {
		return
	}
	debug.SetMemoryLimit(int64(min(avail/2, 1<<62)))
	debug.SetGCPercent(-1)
}
