package archive

import (
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestManifestMatchesSchema holds Manifest against manifest.schema.json,
// field by field (see wiretest.Agree).
func TestManifestMatchesSchema(t *testing.T) { wiretest.Require(t, Manifest{}, "manifest", nil) }
