package diff

import (
	"strings"
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestResultMatchesSchema holds Result against diff.schema.json, field by
// field (see wiretest.Agree).
func TestResultMatchesSchema(t *testing.T) {
	enums, err := wiretest.ConstEnums("../wire", "wire")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := wiretest.Agree(Result{}, "diff", enums)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("Result and diff.schema.json disagree:\n%s", strings.Join(errs, "\n"))
	}
}
