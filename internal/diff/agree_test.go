package diff

import (
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestResultMatchesSchema holds Result against diff.schema.json, field by
// field (see wiretest.Agree).
func TestResultMatchesSchema(t *testing.T) { wiretest.Require(t, Result{}, "diff", nil) }
