package evidence_test

import (
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire/wiretest"
)

// TestDocumentsMatchSchemas holds the documents this package derives
// against their schemas, field by field (see wiretest.Agree).
func TestDocumentsMatchSchemas(t *testing.T) {
	enums, err := wiretest.ConstEnums("../wire", "wire")
	if err != nil {
		t.Fatal(err)
	}
	// A tool call the SDK log never completed has status "".
	enums["wire.Status"] = append(enums["wire.Status"], "")
	for _, tc := range []struct {
		v      any
		schema string
	}{
		{evidence.CapabilitySurface{}, "capability-surface"},
		{evidence.CorrelationReport{}, "correlation-report"},
		{evidence.Summary{}, "inspect"},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			errs, err := wiretest.Agree(tc.v, tc.schema, enums)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) > 0 {
				t.Errorf("%T and %s.schema.json disagree:\n%s", tc.v, tc.schema, strings.Join(errs, "\n"))
			}
		})
	}
}
