package workload

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// TestContinuesTraceparent: with TRACEPARENT set (as vigil record sets
// it), every span is in that trace, the root span's parent is the named
// span, and each SDK event carries the ids of the span it belongs to.
func TestContinuesTraceparent(t *testing.T) {
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	t.Setenv("TRACEPARENT", "00-"+traceID+"-"+parent+"-01")
	cfg := testConfig(t)
	cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
	cfg.RunID = "run-tp"
	cfg.SpanEvents = 10
	res := mustRun(t, cfg)
	// The root under a remote parent is still the run's root span.
	if res.SpanEventsRetained != 10 {
		t.Fatalf("root span kept %d of 10 span events", res.SpanEventsRetained)
	}
	if res.TraceID != traceID || res.ParentSpanID != parent || res.RootSpanID == "" {
		t.Fatalf("result trace %q parent %q root %q", res.TraceID, res.ParentSpanID, res.RootSpanID)
	}
	spans := readTraceFile(t, cfg.TraceOut)
	byID := map[string]string{} // span id -> name
	for _, s := range spans {
		if s.TraceID().String() != traceID {
			t.Fatalf("span %q in trace %s, want %s", s.Name(), s.TraceID(), traceID)
		}
		byID[s.SpanID().String()] = s.Name()
	}
	root := rootSpan(t, spans)
	if root.ParentSpanID().String() != parent || root.SpanID().String() != res.RootSpanID {
		t.Fatalf("root span %s has parent %s", root.SpanID(), root.ParentSpanID())
	}

	f, err := os.Open(cfg.SDKEventLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var tools int
	for sc.Scan() {
		var ev wire.SDK
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.TraceID != traceID {
			t.Fatalf("SDK event %s has trace %q", ev.Type, ev.TraceID)
		}
		name := byID[ev.SpanID]
		switch ev.Type {
		case wire.SDKRunFinished:
			if ev.SpanID != res.RootSpanID {
				t.Errorf("run_finished names span %s, root is %s", ev.SpanID, res.RootSpanID)
			}
		default:
			tools++
			if name != ToolSpanNamePrefix+ev.ToolName {
				t.Errorf("%s of %s names span %s (%q)", ev.Type, ev.ToolName, ev.SpanID, name)
			}
		}
	}
	if tools == 0 {
		t.Fatal("no tool call events")
	}
}

// TestBadTraceparentWarned: a malformed TRACEPARENT is reported and the
// run starts its own trace.
func TestBadTraceparentWarned(t *testing.T) {
	t.Setenv("TRACEPARENT", "00-nothex-00f067aa0ba902b7-01")
	res := mustRun(t, testConfig(t))
	if res.ParentSpanID != "" || res.TraceID == "" || !strings.Contains(strings.Join(res.Warnings, "\n"), "TRACEPARENT") {
		t.Fatalf("parent %q trace %q warnings %q", res.ParentSpanID, res.TraceID, res.Warnings)
	}
}

// TestNoIDsWithoutTracing: with tracing off, SDK events carry no span ids
// even when TRACEPARENT names one (it is not the tool call's span).
func TestNoIDsWithoutTracing(t *testing.T) {
	t.Setenv("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	cfg := testConfig(t)
	cfg.TraceOut = ""
	cfg.OTel = false
	cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
	res := mustRun(t, cfg)
	data, err := os.ReadFile(cfg.SDKEventLog)
	if err != nil {
		t.Fatal(err)
	}
	if res.TraceID != "" || strings.Contains(string(data), "span_id") {
		t.Fatalf("untraced run reported trace %q / SDK lines %s", res.TraceID, data)
	}
}

// TestUnsampledParentNoIDs: under an unsampled TRACEPARENT the agent's
// spans are not recorded (nor exported), so the SDK log names none.
func TestUnsampledParentNoIDs(t *testing.T) {
	t.Setenv("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	cfg := testConfig(t)
	cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
	mustRun(t, cfg)
	data, err := os.ReadFile(cfg.SDKEventLog)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || strings.Contains(string(data), "span_id") {
		t.Fatalf("SDK log under an unsampled parent: %s", data)
	}
}
