package evidence_test

import (
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire/wiretest"
)

// TestDocumentsMatchSchemas holds the documents this package derives
// against their schemas, field by field (see wiretest.Agree).
func TestDocumentsMatchSchemas(t *testing.T) {
	// A tool call the SDK log never completed has status "".
	notCompleted := func(e wiretest.Enums) { e["wire.Status"] = append(e["wire.Status"], "") }
	wiretest.Require(t, evidence.CapabilitySurface{}, "capability-surface", nil)
	wiretest.Require(t, evidence.CorrelationReport{}, "correlation-report", notCompleted)
	wiretest.Require(t, evidence.Summary{}, "inspect", notCompleted)
}
