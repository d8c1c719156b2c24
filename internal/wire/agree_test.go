package wire_test

import (
	"testing"

	"vigil/internal/wire"
	"vigil/internal/wire/wiretest"
)

// TestTypesMatchSchemas is the one source of truth between the Go records
// and their schemas: every field of each record is a property of its schema
// with the same JSON type and the same requiredness, every property is a
// field, and enumerations list the same values.
func TestTypesMatchSchemas(t *testing.T) {
	// samples.jsonl of older versions holds "" for a status the phase
	// log lacked, and sample.schema.json still reads them.
	legacyEmpty := func(e wiretest.Enums) {
		for _, name := range []string{"wire.LayerStatus", "wire.CorrelationStatus"} {
			e[name] = append(e[name], "")
		}
	}
	for _, tc := range []struct {
		v      any
		schema string
		adjust func(wiretest.Enums)
	}{
		{wire.Kernel{}, "kernel-event", nil},
		{wire.SDK{}, "sdk-event", nil},
		{wire.Run{}, "run", nil},
		{wire.Health{}, "observation-health", nil},
		{wire.PhaseLog{}, "phases", nil},
		{wire.AgentResult{}, "agent-result", nil},
		{wire.Plan{}, "plan", nil},
		{wire.Sample{}, "sample", legacyEmpty},
		{wire.Summary{}, "summary", nil},
	} {
		t.Run(tc.schema, func(t *testing.T) { wiretest.Require(t, tc.v, tc.schema, tc.adjust) })
	}
}
