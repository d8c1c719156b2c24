//go:build linux

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"vigil/internal/collector"
	"vigil/internal/testenv"
)

// TestE2ETraceContext: the command starts inside the run's trace. Without
// a trace around vigil, the run starts a sampled one; with TRACEPARENT in
// vigil's environment, the run continues it as a child of that span and
// keeps its flags and trace state. Either way the command's TRACEPARENT
// names the run's span, and run.json records the ids.
func TestE2ETraceContext(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	script := `printf '%s|%s' "$TRACEPARENT" "$TRACESTATE" > ` + filepath.Join(dir, "seen")
	for _, tc := range []struct {
		name, parent, state string
	}{
		{name: "new trace"},
		{name: "inside a caller's trace", parent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", state: "vendor=opaque"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TRACEPARENT", tc.parent)
			t.Setenv("TRACESTATE", tc.state)
			arch := filepath.Join(dir, "a.tar.gz")
			if r := runVigil(t, dir, "record", "-q", "--archive", arch, "--", "sh", "-c", script); r.code != 0 {
				t.Fatalf("record: exit %d: %s", r.code, r.stderr)
			}
			tr := verifyAndRead(t, arch).Run.Trace
			if tr == nil || len(tr.TraceID) != 32 || len(tr.SpanID) != 16 {
				t.Fatalf("run.json trace %+v", tr)
			}
			seen, err := os.ReadFile(filepath.Join(dir, "seen"))
			if err != nil {
				t.Fatal(err)
			}
			flags := "01"
			if tc.parent != "" {
				flags = "00"
				if tr.TraceID != "0af7651916cd43dd8448eb211c80319c" || tr.ParentSpanID != "b7ad6b7169203331" || tr.Sampled || tr.TraceState != tc.state {
					t.Fatalf("run.json trace %+v does not continue %s", tr, tc.parent)
				}
			} else if tr.ParentSpanID != "" || !tr.Sampled {
				t.Fatalf("run.json trace %+v, want a new sampled trace", tr)
			}
			if want := "00-" + tr.TraceID + "-" + tr.SpanID + "-" + flags + "|" + tc.state; string(seen) != want {
				t.Fatalf("the command saw %q, want %q", seen, want)
			}
		})
	}
}

// TestE2EJaeger: vigil record --otlp-endpoint, around vigil agent sending
// its own spans to the same real Jaeger, yields one trace in Jaeger's
// query API: the agent's spans are children of the run span, the
// write_file tool call holds the open of the file it wrote (resolved path,
// flags), and every kernel event of the archive is a span event.
func TestE2EJaeger(t *testing.T) {
	testenv.RequireRoot(t)
	bin, err := collector.FindJaeger()
	if err != nil {
		testenv.RequireTool(t, os.Getenv(collector.EnvJaeger)+" (jaeger: "+err.Error()+")")
	}
	ctx := context.Background()
	j, err := collector.Start(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := j.Stop(); err != nil {
			t.Error(err)
		}
	}()
	dir := t.TempDir()
	arch := filepath.Join(dir, "run.tar.gz")
	r := runVigil(t, dir, "record", "--archive", arch, "--otlp-endpoint", j.OTLPEndpoint, "--",
		testenv.Vigil(t), "agent", "--otlp-endpoint", j.OTLPEndpoint+"/v1/traces", "--kernel-events", "20", "--work-dir", filepath.Join(dir, "w"))
	if r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arch)
	if !strings.Contains(r.stderr, "1 of 1 requests accepted") || !strings.Contains(r.stderr, "rejected 0, failed 0; events sent "+strconv.Itoa(len(b.Kernel))+", failed 0") {
		t.Fatalf("record's export report: %s", r.stderr)
	}
	traceID, runSpan := b.Run.Trace.TraceID, b.Run.Trace.SpanID

	// Jaeger's batch processor stores within about 100 ms; wait until the
	// agent's spans and the run's are both there.
	var tr collector.Trace
	deadline := time.Now().Add(30 * time.Second)
	for {
		var found bool
		tr, found, err = j.Trace(ctx, traceID)
		if err != nil {
			t.Fatal(err)
		}
		if found && hasOp(tr, "invoke_agent vigil-agent") && hasOp(tr, "vigil record") && hasOp(tr, "kernel events") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s incomplete in Jaeger after 30s: %d spans", traceID, len(tr.Spans))
		}
		time.Sleep(200 * time.Millisecond)
	}

	byID := map[string]collector.Span{}
	services := map[string]bool{}
	events := 0
	for _, s := range tr.Spans {
		if s.TraceID != traceID {
			t.Fatalf("span %s in trace %s", s.OperationName, s.TraceID)
		}
		byID[s.SpanID] = s
		services[tr.Processes[s.ProcessID].ServiceName] = true
		if tr.Processes[s.ProcessID].ServiceName == "vigil" {
			events += len(s.Logs)
		}
	}
	if !services["vigil"] || !services["vigil-agent"] {
		t.Fatalf("services in the trace: %v", services)
	}
	if events != len(b.Kernel) {
		t.Fatalf("Jaeger holds %d kernel span events, the archive %d events", events, len(b.Kernel))
	}
	var root, write collector.Span
	for _, s := range tr.Spans {
		switch s.OperationName {
		case "invoke_agent vigil-agent":
			root = s
		case "execute_tool write_file":
			write = s
		}
	}
	if root.Parent() != runSpan {
		t.Fatalf("the agent's root span has parent %q, want the run span %s", root.Parent(), runSpan)
	}
	if write.SpanID == "" {
		t.Fatal("no write_file tool-call span")
	}
	var opened []string
	for _, s := range tr.Spans {
		if s.OperationName != "kernel events" || s.Parent() != write.SpanID {
			continue
		}
		for _, l := range s.Logs {
			if ev, _ := collector.Field(l.Fields, "event"); ev != "open" {
				continue
			}
			p, _ := collector.Field(l.Fields, "file.path")
			flags, _ := collector.Field(l.Fields, "vigil.open.flags_text")
			opened = append(opened, p.(string)+" "+flags.(string))
		}
	}
	want := filepath.Join(dir, "w") + "/"
	found := false
	for _, o := range opened {
		if strings.HasPrefix(o, want) && strings.HasSuffix(strings.Fields(o)[0], "notes/plan.md") && strings.Contains(o, "O_CREAT") && strings.Contains(o, "O_WRONLY") {
			found = true
		}
	}
	if !found {
		t.Fatalf("the write_file span does not hold the open of notes/plan.md under %s with O_WRONLY|O_CREAT: %q", want, opened)
	}
}

func hasOp(tr collector.Trace, op string) bool {
	for _, s := range tr.Spans {
		if s.OperationName == op {
			return true
		}
	}
	return false
}
