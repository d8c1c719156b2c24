// Package bench is the harness behind `vigil bench`: it resolves a plan
// (arms x cells x blocks), runs every sample in a fresh work directory and
// its own memory cgroup, measures wall time, CPU, memory and artifact sizes,
// checks each sample's observation health and calibration, re-measures
// samples that fail the gate, and appends every sample to samples.jsonl as it
// is taken so an interrupted run can resume.
//
// Arms (bare, A, B, C) wrap one workload in different observation layers;
// cells set the workload's event pressure; a block runs every arm once in a
// seeded random (or counterbalanced) order so arms are compared side by side.
package bench
