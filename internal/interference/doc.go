// Package interference measures what the host did besides a benchmark
// sample while the sample ran (CPU time spent outside the sample's tree,
// pressure stalls, context switches, load), and describes the host before
// a benchmark starts (frequency governor, boost, SMT, isolated CPUs,
// memory, swap, load): the facts a wall-time claim needs before anyone
// should believe it. Figures the host cannot provide are recorded as
// unavailable with the reason, never as zero.
package interference
