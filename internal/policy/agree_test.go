package policy

import (
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestResultMatchesSchema holds Result against policy-check.schema.json, field by
// field (see wiretest.Agree).
func TestResultMatchesSchema(t *testing.T) { wiretest.Require(t, Result{}, "policy-check", nil) }
