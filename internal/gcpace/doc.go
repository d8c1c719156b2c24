// Package gcpace sets the Go collector's pacing for a command that reads
// one archive, holds what it decoded until it is done, and exits
// (OneShot): collections there find little to free, and on this kind of
// heap (every event a struct of pointers) they are the most expensive
// ones. A recording keeps the default pacing: its kernel layer is written
// while the command runs, so at the drain its heap is the fold of that
// layer, not every event, and a relaxed pacing only let garbage pile up
// (a 1,500,000-event recording peaked at 438 MiB with it, 338 without).
package gcpace
