package archive

import (
	"strings"
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestManifestMatchesSchema holds Manifest against manifest.schema.json,
// field by field (see wiretest.Agree).
func TestManifestMatchesSchema(t *testing.T) {
	errs, err := wiretest.Agree(Manifest{}, "manifest", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("Manifest and manifest.schema.json disagree:\n%s", strings.Join(errs, "\n"))
	}
}
