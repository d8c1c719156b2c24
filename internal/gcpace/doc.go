// Package gcpace sets the Go collector's pacing for a command that reads
// one archive, holds what it decoded until it is done, and exits
// (OneShot): collections there find little to free, and on this kind of
// heap (every event a struct of pointers) they are the most expensive
// ones. A recording keeps the default pacing: its kernel layer is written
// while the command runs, so its heap is the fold of that layer, not the
// events.
package gcpace
