//go:build linux

package bench

import (
	"strings"
	"testing"
)

// Cell specs come from the command line: a cell or a one-line error.
func FuzzParseCellSpec(f *testing.F) {
	f.Add("mine:kernel=100,span=5,conc=2,payload=medium")
	f.Add("x:payload=4096")
	f.Add(":")
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := ParseCellSpec(spec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.Name == "" || c.KernelEvents < 0 || c.SpanEvents < 0 || c.Concurrency < 1 || c.PayloadBytes < 0 {
			t.Fatalf("accepted %q as %+v", spec, c)
		}
	})
}

// samples.jsonl is read back on --resume and by report: partial or
// corrupt files give samples or a one-line error.
func FuzzParseSamples(f *testing.F) {
	f.Add([]byte("{}\n"))
	f.Add([]byte("{\"schema\":\"vigil.sample/v1\"}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, n, err := ParseSamples(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if n < 0 || n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
	})
}
