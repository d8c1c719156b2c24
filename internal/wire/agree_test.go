package wire_test

import (
	"reflect"
	"strings"
	"testing"

	"vigil/internal/wire"
	"vigil/internal/wire/wiretest"
)

// enums is every enumeration a record type carries, with its values.
func enums() wiretest.Enums {
	e := wiretest.Enums{
		reflect.TypeFor[wire.Status](): {string(wire.StatusOK), string(wire.StatusError)},
	}
	var kinds []string
	for _, k := range wire.Kinds {
		kinds = append(kinds, string(k))
	}
	e[reflect.TypeFor[wire.Kind]()] = kinds
	return e
}

// TestTypesMatchSchemas is the one source of truth between the Go records
// and their schemas: every field of each record is a property of its schema
// with the same JSON type and the same requiredness, every property is a
// field, and enumerations list the same values.
func TestTypesMatchSchemas(t *testing.T) {
	for _, tc := range []struct {
		v      any
		schema string
	}{
		{wire.Kernel{}, "kernel-event"},
		{wire.SDK{}, "sdk-event"},
		{wire.Run{}, "run"},
		{wire.Health{}, "observation-health"},
		{wire.PhaseLog{}, "phases"},
		{wire.AgentResult{}, "agent-result"},
		{wire.Plan{}, "plan"},
		{wire.Sample{}, "sample"},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			errs, err := wiretest.Agree(tc.v, tc.schema, enums())
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) > 0 {
				t.Errorf("%T and %s.schema.json disagree:\n%s", tc.v, tc.schema, strings.Join(errs, "\n"))
			}
		})
	}
}
