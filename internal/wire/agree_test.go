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
	add(e, wire.Kinds)
	add(e, wire.LayerStatuses)
	add(e, wire.CorrelationStatuses)
	add(e, wire.SDKStatuses)
	return e
}

func add[T ~string](e wiretest.Enums, values []T) {
	var out []string
	for _, v := range values {
		out = append(out, string(v))
	}
	e[reflect.TypeFor[T]()] = out
}

// TestTypesMatchSchemas is the one source of truth between the Go records
// and their schemas: every field of each record is a property of its schema
// with the same JSON type and the same requiredness, every property is a
// field, and enumerations list the same values.
func TestTypesMatchSchemas(t *testing.T) {
	// samples.jsonl of older versions holds "" for a status the phase
	// log lacked, and sample.schema.json still reads them.
	sampleEnums := enums()
	for _, t := range []reflect.Type{reflect.TypeFor[wire.LayerStatus](), reflect.TypeFor[wire.CorrelationStatus]()} {
		sampleEnums[t] = append(sampleEnums[t], "")
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
	} {
		t.Run(tc.schema, func(t *testing.T) {
			e := tc.enums
			if e == nil {
				e = enums()
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
