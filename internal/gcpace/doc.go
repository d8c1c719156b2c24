// Package gcpace sets the Go collector's pacing for the stretches of
// vigil's work where most of the heap is data that stays live until the
// work ends: a recording from its drain until its archive is written
// (Relax), and a command that reads one archive and exits (OneShot).
// Collections there find little to free, and on this kind of heap (every
// event a struct of pointers) they are the most expensive ones.
package gcpace
