package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func TestExportCommand(t *testing.T) {
	good, bad := writeArchives(t)
	dir := t.TempDir()
	var spans atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		spans.Add(int64(req.Traces().SpanCount()))
	}))
	defer srv.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer refuse.Close()
	out := filepath.Join(dir, "run.otlp.jsonl")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	runCLICases(t, []cliCase{
		{args: []string{"export", good}, code: 125},
		{args: []string{"export", good, "--otlp-endpoint", "localhost:4318"}, code: 125},
		{args: []string{"export", good, "--otlp-file", out, "--max-events-per-span", "0"}, code: 125},
		{args: []string{"export", good, "--otlp-file", dir}, code: 125},
		{args: []string{"export", filepath.Join(dir, "missing.tar.gz"), "--otlp-file", out}, code: 125},
		{args: []string{"export", bad, "--otlp-file", out}, code: ExitVerifyFailed},
		{args: []string{"export", good, "--otlp-endpoint", refuse.URL}, code: ExitExportFailed, stderr: "403"},
		{args: []string{"export", good, "--otlp-endpoint", srv.URL, "--otlp-file", out, "--max-events-per-span", "5"},
			code: 0, stderr: "rejected 0, failed 0; events sent 60, failed 0"},
	})
	if _, err := os.Stat(filepath.Join(dir, "missing.tar.gz")); err == nil {
		t.Fatal("a failed export created its input")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var u ptrace.JSONUnmarshaler
	var fileSpans int
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		td, err := u.UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("--otlp-file line is not OTLP/JSON: %v", err)
		}
		fileSpans += td.SpanCount()
	}
	if fileSpans == 0 || int64(fileSpans) != spans.Load() {
		t.Fatalf("file holds %d spans, the receiver got %d", fileSpans, spans.Load())
	}

	// The endpoint can come from the standard environment variable.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	before := spans.Load()
	runCLICases(t, []cliCase{{args: []string{"export", good}, code: 0}})
	// With the default span size the continuation spans are not needed.
	if got, want := spans.Load()-before, int64(fileSpans-bytes.Count(data, []byte(`(continued)`))); got != want {
		t.Fatalf("export to OTEL_EXPORTER_OTLP_ENDPOINT sent %d spans, want %d", got, want)
	}
}
