package policy_test

import (
	"fmt"

	"vigil/internal/evidence/evidencetest"
	"vigil/internal/policy"
)

// A policy that denies reads under /home judged against a recorded run:
// every denied (operation, object) is a violation, with the events that
// did it.
func ExampleCheck() {
	p, err := policy.Parse([]byte(`schema: vigil.policy/v1
default: allow
rules:
- {name: no-home, action: deny, ops: [read], paths: ['/home/**']}
`))
	if err != nil {
		panic(err)
	}
	r := policy.Check(evidencetest.Bundle(12, 1), p)
	fmt.Println(r.Status, r.Denied, "denied of", r.ActionsChecked)
	for _, v := range r.Violations {
		fmt.Println(v.Rule, v.Op, v.Object, len(v.Events), "event(s)")
	}
	// Output:
	// fail 2 denied of 10
	// no-home read /home/agent/work/file-00000 1 event(s)
	// no-home read /home/agent/work/file-00001 1 event(s)
}

// A policy that does not compile is refused with what is wrong.
func ExampleParse() {
	_, err := policy.Parse([]byte("schema: vigil.policy/v1\ndefault: deny\nrules:\n- {name: x, action: allow, paths: ['relative/**']}\n"))
	fmt.Println(err)
	// Output:
	// rule "x": path "relative/**": must be absolute (start with / or a wildcard)
}
