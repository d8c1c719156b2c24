package policy

import (
	"strings"
	"testing"

	"vigil/internal/wire/wiretest"
)

// TestResultMatchesSchema holds Result against policy-check.schema.json, field by
// field (see wiretest.Agree).
func TestResultMatchesSchema(t *testing.T) {
	enums, err := wiretest.ConstEnums("../wire", "wire")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := wiretest.Agree(Result{}, "policy-check", enums)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Errorf("Result and policy-check.schema.json disagree:\n%s", strings.Join(errs, "\n"))
	}
}
