package wire_test

import (
	"strings"
	"testing"

	"vigil/internal/wire"
	"vigil/internal/wire/wiretest"
)

// enums is every enumeration of package wire: the values of its typed
// string constants.
func enums(t *testing.T) wiretest.Enums {
	e, err := wiretest.ConstEnums(".", "wire")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestTypesMatchSchemas is the one source of truth between the Go records
// and their schemas: every field of each record is a property of its schema
// with the same JSON type and the same requiredness, every property is a
// field, and enumerations list the same values.
func TestTypesMatchSchemas(t *testing.T) {
	// samples.jsonl of older versions holds "" for a status the phase
	// log lacked, and sample.schema.json still reads them.
	sampleEnums := enums(t)
	for _, name := range []string{"wire.LayerStatus", "wire.CorrelationStatus"} {
		sampleEnums[name] = append(sampleEnums[name], "")
	}
	for _, tc := range []struct {
		v      any
		schema string
		enums  wiretest.Enums
	}{
		{wire.Kernel{}, "kernel-event", nil},
		{wire.SDK{}, "sdk-event", nil},
		{wire.Run{}, "run", nil},
		{wire.Health{}, "observation-health", nil},
		{wire.PhaseLog{}, "phases", nil},
		{wire.AgentResult{}, "agent-result", nil},
		{wire.Plan{}, "plan", nil},
		{wire.Sample{}, "sample", sampleEnums},
		{wire.Summary{}, "summary", nil},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			e := tc.enums
			if e == nil {
				e = enums(t)
			}
			errs, err := wiretest.Agree(tc.v, tc.schema, e)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) > 0 {
				t.Errorf("%T and %s.schema.json disagree:\n%s", tc.v, tc.schema, strings.Join(errs, "\n"))
			}
		})
	}
}
