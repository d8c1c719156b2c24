package policy

import (
	"strings"
	"testing"

	"vigil/internal/evidence/evidencetest"
)

// A policy file is user input: any bytes are a policy or a one-line error,
// and a policy that parses can be checked.
func FuzzParse(f *testing.F) {
	f.Add([]byte(workspacePolicy))
	f.Add([]byte(`{"schema":"vigil.policy/v1","default":"allow","rules":[{"name":"a","action":"deny","endpoints":["[::1]:1-2"]}]}`))
	f.Add([]byte("schema: vigil.policy/v1\ndefault: deny\nrules:\n- {name: x, action: allow, paths: ['/{a,b}/**'], tool: t}\n"))
	b := evidencetest.Bundle(20, 1)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		r := Check(b, p)
		if r.Status != StatusPass && r.Status != StatusFail && r.Status != StatusIncomplete {
			t.Fatalf("status %q", r.Status)
		}
	})
}
