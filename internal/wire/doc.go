// Package wire holds every record that passes from one stage of vigil to
// the next, each beside the JSON Schema (draft 2020-12) that describes it:
//
//   - kernel.ndjson and sdk.ndjson lines: Kernel, SDK (kernel-event,
//     sdk-event schemas), written by the capture and the workload;
//   - run.json and observation-health.json of an archive: Run, Health with
//     its Coverage (run, observation-health);
//   - the runner's --phase-log file: PhaseLog (phases);
//   - the agent's result line: AgentResult (agent-result);
//   - a benchmark's plan.json and samples.jsonl: Plan, Sample (plan,
//     sample).
//
// Types only, plus the embedded schemas and their validation, so that every
// stage can share them without depending on the stage that produces them.
// TestTypesMatchSchemas proves each Go type and its schema agree field by
// field: names, JSON types, required fields and enumerations.
//
// Each schema lives in NAME.schema.json; its "$id" is
// "https://vigil.invalid/schema/NAME.schema.json" and documents name it by
// NAME (e.g. "manifest", "kernel-event").
package wire
