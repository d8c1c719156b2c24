package workload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"vigil/internal/wire"
)

func readSDKLog(t *testing.T, path string) []wire.SDK {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.ValidateNDJSON("sdk-event", data); err != nil {
		t.Fatalf("SDK event log does not match schema sdk-event: %v", err)
	}
	var out []wire.SDK
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		var ev wire.SDK
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// TestSDKEventLog: tool-call events carry contiguous sequence numbers,
// CLOCK_MONOTONIC times inside the run, and the same tool-call ids as the
// trace's gen_ai.tool.call.id; they are written with tracing on and off.
func TestSDKEventLog(t *testing.T) {
	for _, otel := range []bool{true, false} {
		t.Run(map[bool]string{true: "otel", false: "no-otel"}[otel], func(t *testing.T) {
			cfg := testConfig(t)
			cfg.OTel = otel
			cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
			cfg.RunID = "run-42"
			before := monoNS()
			res := mustRun(t, cfg)
			after := monoNS()
			evs := readSDKLog(t, cfg.SDKEventLog)
			if len(evs) != 5 || res.SDKEvents != 5 {
				t.Fatalf("%d events in the log, result says %d; want 5 (2 tool calls x 2 + run_finished)", len(evs), res.SDKEvents)
			}
			wantTypes := []string{wire.SDKToolCallStarted, wire.SDKToolCallCompleted, wire.SDKToolCallStarted, wire.SDKToolCallCompleted, wire.SDKRunFinished}
			var prev uint64
			for i, ev := range evs {
				if ev.Seq != uint64(i) || ev.Type != wantTypes[i] || ev.RunID != "run-42" || ev.PID != os.Getpid() {
					t.Fatalf("event %d: %+v", i, ev)
				}
				if ev.MonoNS < before || ev.MonoNS > after || ev.MonoNS < prev {
					t.Fatalf("event %d: mono_ns %d outside [%d, %d] or before the previous event", i, ev.MonoNS, before, after)
				}
				prev = ev.MonoNS
			}
			if evs[4].Status != wire.StatusOK || evs[1].Status != wire.StatusOK {
				t.Fatalf("statuses: %+v", evs)
			}
			if !otel {
				return
			}
			var traceIDs []string
			for _, s := range spansNamed(readTraceFile(t, cfg.TraceOut), ToolSpanNamePrefix) {
				traceIDs = append(traceIDs, attrStr(s.Attributes(), AttrToolCallID)+"/"+attrStr(s.Attributes(), AttrToolName))
			}
			for _, ev := range evs[:4] {
				found := false
				for _, id := range traceIDs {
					found = found || id == ev.ToolCallID+"/"+ev.ToolName
				}
				if !found {
					t.Errorf("SDK event tool call %s/%s not in the trace's %v", ev.ToolCallID, ev.ToolName, traceIDs)
				}
			}
		})
	}
}

// TestSDKEventLogFromEnv: vigil record passes the log path and run id in
// the environment.
func TestSDKEventLogFromEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sdk.ndjson")
	t.Setenv(wire.EnvSDKEventLog, path)
	t.Setenv(wire.EnvRunID, "from-env")
	res := mustRun(t, testConfig(t))
	evs := readSDKLog(t, path)
	if res.SDKEventLog != path || res.RunID != "from-env" || len(evs) != 5 || evs[0].RunID != "from-env" {
		t.Fatalf("result log %q run %q, %d events", res.SDKEventLog, res.RunID, len(evs))
	}
}

// TestOTelOff: --otel=false and OTEL_SDK_DISABLED=true both turn tracing
// off: no spans, no trace file, and the result says why.
func TestOTelOff(t *testing.T) {
	check := func(t *testing.T, cfg Config, by string) {
		cfg.SpanEvents = 300
		cfg.KernelEvents = 5
		res := mustRun(t, cfg)
		if res.OTel || res.OTelDisabledBy != by || res.SpansEnded != 0 || res.SpanEventsRetained != 0 ||
			res.SpanEventLimit != -1 || res.SpanEventLimitSource != LimitSourceOff || res.TraceOut != "" {
			t.Fatalf("tracing-off result: %+v", res)
		}
		if res.FilesWritten != 5 || res.ToolCalls != 2 || res.FinalAnswer == "" {
			t.Fatalf("the workload itself must still run: %+v", res)
		}
		if _, err := os.Stat(cfg.TraceOut); !os.IsNotExist(err) {
			t.Fatalf("trace file written with tracing off (err %v)", err)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "--trace-out") {
			t.Fatalf("want a warning that --trace-out was not written, got %q", res.Warnings)
		}
	}
	t.Run("flag", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.OTel = false
		check(t, cfg, "flag")
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv(EnvSDKDisabled, "TRUE")
		check(t, testConfig(t), "env:"+EnvSDKDisabled)
	})
}

// TestSpanEventOffPathAllocs: with tracing off adding a span event builds
// nothing; with tracing on it does allocate.
func TestSpanEventOffPathAllocs(t *testing.T) {
	payload := string(makePayload(128))
	off := noRecordingSpan()
	if a := testing.AllocsPerRun(1000, func() { addSpanEvent(off, 1, payload) }); a != 0 {
		t.Fatalf("tracing off: %v allocations per span event, want 0", a)
	}
	on, done := recordingSpan(t)
	defer done()
	if a := testing.AllocsPerRun(1000, func() { addSpanEvent(on, 1, payload) }); a < 1 {
		t.Fatalf("tracing on: %v allocations per span event; the comparison would be meaningless", a)
	}
}

// TestBadInput: each bad knob is named in a one-line error, and nothing is
// created: no work directory, no trace file, no SDK log.
func TestBadInput(t *testing.T) {
	neg := -2
	cases := []struct {
		flag string
		mut  func(c *Config)
	}{
		{"--kernel-events", func(c *Config) { c.KernelEvents = -1 }},
		{"--span-events", func(c *Config) { c.SpanEvents = -1 }},
		{"--concurrency", func(c *Config) { c.Concurrency = 0 }},
		{"--payload-bytes", func(c *Config) { c.PayloadBytes = -5 }},
		{"--payload-bytes", func(c *Config) { c.PayloadBytes = MaxPayloadBytes + 1 }},
		{"--span-event-limit", func(c *Config) { c.SpanEventLimit = &neg }},
		{"--fail-every", func(c *Config) { c.FailEvery = 3 }},
		{"--otlp-endpoint", func(c *Config) { c.OTLPEndpoint = "localhost:4318" }},
		{"--trace-out", func(c *Config) { c.TraceOut = filepath.Join(filepath.Dir(c.TraceOut), "missing", "t.jsonl") }},
		{"--trace-out", func(c *Config) { c.TraceOut = filepath.Join(c.SDKEventLog, "t.jsonl") }}, // parent is a file
		{"--sdk-event-log", func(c *Config) { c.SDKEventLog = filepath.Join(filepath.Dir(c.TraceOut), "missing", "sdk") }},
		{"--work-dir", func(c *Config) { c.WorkDir = filepath.Join(c.SDKEventLog, "work") }}, // parent is a file
	}
	for _, c := range cases {
		t.Run(c.flag, func(t *testing.T) {
			cfg := testConfig(t)
			dir := filepath.Dir(cfg.TraceOut)
			cfg.SDKEventLog = filepath.Join(dir, "existing-file")
			if err := os.WriteFile(cfg.SDKEventLog, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			c.mut(&cfg)
			res, err := Run(context.Background(), cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Flag[:len(c.flag)] != c.flag || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want a one-line ConfigError naming %s, got %v", c.flag, err)
			}
			if res.Status != "" {
				t.Fatalf("bad input produced a result: %+v", res)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 || ents[0].Name() != "existing-file" {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("files left behind: %v", names)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "existing-file")); len(b) != 0 {
				t.Fatalf("SDK log written on bad input: %q", b)
			}
		})
	}
	if _, err := PayloadSize("huge"); err == nil || !strings.HasPrefix(err.Error(), "--payload:") {
		t.Fatalf("unknown payload name: %v", err)
	}
}

// TestToolFailure: a failing tool call ends the run with status "error",
// the failure in the SDK log and on the spans, and no file work done.
func TestToolFailure(t *testing.T) {
	cfg := testConfig(t)
	cfg.KernelEvents = 10
	cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
	// A regular file where write_file needs a directory.
	if err := os.MkdirAll(filepath.Join(cfg.WorkDir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.WorkDir, "agent", "notes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg)
	checkResultSchema(t, res)
	if err == nil || res.Status != wire.StatusError || !strings.Contains(res.Error, "write_file") {
		t.Fatalf("want a write_file failure, got err %v, result %+v", err, res)
	}
	if res.WorkerOpens != 0 || res.ToolCalls != 1 {
		t.Fatalf("work went on after the failure: opens %d tool calls %d", res.WorkerOpens, res.ToolCalls)
	}
	evs := readSDKLog(t, cfg.SDKEventLog)
	if len(evs) != 3 || evs[1].Status != wire.StatusError || evs[2].Type != wire.SDKRunFinished || evs[2].Status != wire.StatusError {
		t.Fatalf("SDK log: %+v", evs)
	}
	spans := readTraceFile(t, cfg.TraceOut)
	if rootSpan(t, spans).Status().Code() != ptrace.StatusCodeError {
		t.Fatal("root span status is not error")
	}
	tools := spansNamed(spans, ToolSpanNamePrefix)
	if len(tools) != 1 || tools[0].Status().Code() != ptrace.StatusCodeError {
		t.Fatalf("want one failed tool span, got %d", len(tools))
	}
}

// TestFailEvery: the testing aid fails every K-th invocation, counted in a
// file across runs.
func TestFailEvery(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "count")
	var got []string
	for i := 0; i < 5; i++ {
		cfg := testConfig(t)
		cfg.FailEvery = 2
		cfg.FailCounterFile = counter
		res, err := Run(context.Background(), cfg)
		if (err != nil) != (res.Status == wire.StatusError) || res.Invocation != i+1 || res.FailInjected != (res.Status == wire.StatusError) {
			t.Fatalf("run %d: err %v result %+v", i+1, err, res)
		}
		got = append(got, string(res.Status))
	}
	if want := "ok,error,ok,error,ok"; strings.Join(got, ",") != want {
		t.Fatalf("statuses %s, want %s", strings.Join(got, ","), want)
	}
	if b, _ := os.ReadFile(counter); strings.TrimSpace(string(b)) != "5" {
		t.Fatalf("counter file holds %q, want 5", b)
	}
}

// TestOTLPHTTPExport exports to a local OTLP/HTTP receiver; a receiver that
// rejects the spans is reported in the result, not hidden.
func TestOTLPHTTPExport(t *testing.T) {
	var mu sync.Mutex
	received := 0
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "rejected", status)
			return
		}
		received += req.Traces().SpanCount()
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Write(resp)
	}))
	defer srv.Close()

	cfg := testConfig(t)
	cfg.OTLPEndpoint = srv.URL + "/v1/traces"
	res := mustRun(t, cfg)
	if received != 6 || res.OTLPSpansExported != 6 || res.OTLPSpansFailed != 0 {
		t.Fatalf("receiver got %d spans, result exported %d failed %d; want 6/6/0", received, res.OTLPSpansExported, res.OTLPSpansFailed)
	}

	mu.Lock()
	status = http.StatusBadRequest // not retried by the exporter
	mu.Unlock()
	res = mustRun(t, cfg)
	if res.OTLPSpansFailed != 6 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "6 of 6 spans not exported") {
		t.Fatalf("rejected export: failed %d, warnings %q", res.OTLPSpansFailed, res.Warnings)
	}
}
