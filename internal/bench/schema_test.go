//go:build linux

package bench

import (
	"os"
	"path/filepath"
	"testing"

	"vigil/internal/wire"
)

// validateOut checks plan.json and every samples.jsonl line against the
// embedded schemas.
func validateOut(t *testing.T, dir string) {
	t.Helper()
	plan, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("plan", plan); err != nil {
		t.Fatalf("plan.json: %v", err)
	}
	samples, err := os.ReadFile(filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.ValidateNDJSON("sample", samples); err != nil {
		t.Fatalf("samples.jsonl: %v", err)
	}
}

func TestSchemasRejectBadDocuments(t *testing.T) {
	good := `{"schema":"vigil.sample/v1","id":"c.A.b0.t0","cell":"c","arm":"A","arm_kind":"A","block":0,"position":0,"attempt":0,"warmup":false,"seed":1,"start_unix_ns":1,"wall_ns":1,"user_ns":0,"sys_ns":0,"max_rss_bytes":1,"tree_peak_bytes":-1,"tree_peak_source":"unavailable","artifacts":{"trace_bytes":0,"archive_bytes":1,"archive_extracted_bytes":1},"exit_code":0,"stragglers_killed":0,"health":{"kernel_layer":"complete","cgroup_correlation":"clean","ringbuf_drops":0},"phases_ms":{"attach":1},"calibration":{"kernel_expected_opens":0,"kernel_write_opens":0,"kernel_read_opens":0,"span_requested":0,"span_retained":0,"span_dropped":0,"span_limit":-1,"retained_first_index":-1,"retained_last_index":-1},"valid":true,"host":{"hostname":"h","os":"linux","arch":"amd64","kernel":"6","host_class":"linux-amd64-6","cpus":2},"versions":{}}`
	if err := wire.Validate("sample", []byte(good)); err != nil {
		t.Fatalf("good sample rejected: %v", err)
	}
	for name, bad := range map[string]string{
		"valid with exit 1":       `"exit_code":0,`,
		"valid A partial capture": `"kernel_layer":"complete"`,
		"invalid without reason":  `"valid":true`,
	} {
		repl := map[string]string{
			"valid with exit 1":       `"exit_code":1,`,
			"valid A partial capture": `"kernel_layer":"partial"`,
			"invalid without reason":  `"valid":false`,
		}[name]
		doc := []byte(replaceOnce(good, bad, repl))
		if err := wire.Validate("sample", doc); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("no " + old)
}
