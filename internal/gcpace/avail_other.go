//go:build !linux

package gcpace

// availableMemory is not read outside Linux: OneShot keeps the default
// pacing there.
func availableMemory() (uint64, bool) { return 0, false }
