// Package diff compares what two runs did: their capability surfaces
// (files read, written, created, deleted, renamed, mode-changed; programs
// executed; network endpoints), per tool call where both runs have an SDK
// layer, after normalizing the parts of a name that differ from run to run
// (run ids, pids, temporary names, numbered files). It also compares the
// runs' observation health, because a difference against an incomplete
// record may only be a missing event.
//
// The comparison is a pure function of two evidence bundles; rendering as
// text lives in text.go, and the JSON form is the Result type itself
// (schema "diff", id vigil.diff/v1).
package diff
