// Package hostinfo describes the machine vigil runs on, for run.json and
// for a benchmark's plan and samples, so both name a host the same way.
package hostinfo
