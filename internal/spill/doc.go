// Package spill keeps scratch data in an anonymous file: one with no name
// in any directory, so that nothing is left on disk when the process ends,
// however it ends (a crash, SIGKILL). A recording uses it for what would
// otherwise grow in memory with the run (every distinct path it touched),
// so that its memory stays bounded whatever the workload does.
package spill
