package main

import (
	"strings"
	"testing"

	"vigil/internal/wire"
)

// cliCase is one command line and what it must produce.
type cliCase struct {
	args   []string
	code   int
	stdout string // a substring of stdout
	stderr string // a substring of stderr
	schema string // stdout must validate against this schema
}

// runCLICases runs each case (runVigil resets the flags after each) and
// checks exit code, output and schema.
func runCLICases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, c := range cases {
		out, errOut, err := runVigil(t, c.args...)
		if got := exitCode(err); got != c.code {
			t.Errorf("%v: exit %d, want %d (err %v, stderr %q)", c.args, got, c.code, err, errOut)
		}
		if c.stdout != "" && !strings.Contains(out, c.stdout) {
			t.Errorf("%v: stdout lacks %q:\n%s", c.args, c.stdout, out)
		}
		if c.stderr != "" && !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: stderr lacks %q: %q", c.args, c.stderr, errOut)
		}
		if c.schema != "" {
			if err := wire.Validate(c.schema, []byte(out)); err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
		}
	}
}
