package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestSpanEventRetention: the SDK's default limit keeps the newest 128
// events and counts the rest as dropped; OTEL_SPAN_EVENT_COUNT_LIMIT (read
// by the SDK itself) or an explicit limit changes that, and the result
// line and the trace file agree with each other.
func TestSpanEventRetention(t *testing.T) {
	intp := func(n int) *int { return &n }
	cases := []struct {
		events   int
		env      string
		flag     *int
		retained int
		source   string
		limit    int
	}{
		{500, "", nil, 128, LimitSourceDefault, 128},
		{500, "1000", nil, 500, LimitSourceEnv, 1000},
		{1000, "", nil, 128, LimitSourceDefault, 128},
		{1000, "1000", nil, 1000, LimitSourceEnv, 1000},
		{100, "", nil, 100, LimitSourceDefault, 128},
		{300, "1000", intp(50), 50, LimitSourceFlag, 50},
		{300, "", intp(-1), 300, LimitSourceFlag, -1},
	}
	for _, c := range cases {
		name := fmt.Sprintf("events=%d/env=%q", c.events, c.env)
		if c.flag != nil {
			name += fmt.Sprintf("/flag=%d", *c.flag)
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvSpanEventLimit, c.env)
			cfg := testConfig(t)
			cfg.SpanEvents = c.events
			cfg.SpanEventLimit = c.flag
			res := mustRun(t, cfg)
			dropped := c.events - c.retained
			wantFirst, wantLast := dropped, c.events-1
			if c.retained == 0 {
				wantFirst, wantLast = -1, -1
			}
			got := [6]any{res.SpanEventsRetained, res.SpanEventsDropped, res.RetainedFirstIndex, res.RetainedLastIndex, res.SpanEventLimitSource, res.SpanEventLimit}
			want := [6]any{c.retained, dropped, wantFirst, wantLast, c.source, c.limit}
			if got != want {
				t.Fatalf("result retained/dropped/first/last/source/limit = %v, want %v", got, want)
			}

			if overridden := c.flag != nil && c.env != ""; overridden != (len(res.Warnings) == 1) {
				t.Errorf("warnings %q: an explicit limit must be reported when it overrides the environment, and only then", res.Warnings)
			}
			root := rootSpan(t, readTraceFile(t, cfg.TraceOut))
			if n := root.Events().Len(); n != c.retained {
				t.Errorf("trace: root span has %d events, want %d", n, c.retained)
			}
			if n := int(root.DroppedEventsCount()); n != dropped {
				t.Errorf("trace: droppedEventsCount %d, want %d", n, dropped)
			}
			// The retained events are the newest, in order.
			for i := 0; i < root.Events().Len(); i++ {
				ev := root.Events().At(i)
				idx, ok := ev.Attributes().Get(AttrEventIndex)
				if !ok || idx.Int() != int64(dropped+i) {
					t.Fatalf("trace: event %d has index %v, want %d", i, idx.AsRaw(), dropped+i)
				}
				if p, _ := ev.Attributes().Get(AttrEventPayload); len(p.Str()) != cfg.PayloadBytes {
					t.Fatalf("trace: event %d payload %d bytes, want %d", i, len(p.Str()), cfg.PayloadBytes)
				}
			}
		})
	}
}

// TestSpanEventLimitZero: with limit 0 the SDK keeps no event and its span
// data reports no drops either; the result keeps the SDK's numbers and
// warns about the events the SDK does not account for.
func TestSpanEventLimitZero(t *testing.T) {
	zero := 0
	cfg := testConfig(t)
	cfg.SpanEvents = 20
	cfg.SpanEventLimit = &zero
	res := mustRun(t, cfg)
	root := rootSpan(t, readTraceFile(t, cfg.TraceOut))
	if res.SpanEventsRetained != 0 || root.Events().Len() != 0 {
		t.Fatalf("retained %d (trace %d), want 0", res.SpanEventsRetained, root.Events().Len())
	}
	if res.SpanEventsDropped != int(root.DroppedEventsCount()) {
		t.Fatalf("result dropped %d, trace says %d", res.SpanEventsDropped, root.DroppedEventsCount())
	}
	if res.SpanEventsRetained+res.SpanEventsDropped != 20 && len(res.Warnings) != 1 {
		t.Fatalf("SDK accounts for %d of 20 events but the result has warnings %q", res.SpanEventsRetained+res.SpanEventsDropped, res.Warnings)
	}
}

// TestSpanEventLimitEnvInvalid: a value the SDK ignores is reported, not
// silently replaced by the default.
func TestSpanEventLimitEnvInvalid(t *testing.T) {
	t.Setenv(EnvSpanEventLimit, "lots")
	cfg := testConfig(t)
	cfg.SpanEvents = 200
	res := mustRun(t, cfg)
	if res.SpanEventLimitSource != LimitSourceDefault || res.SpanEventsRetained != 128 {
		t.Fatalf("source %q retained %d, want sdk-default and 128", res.SpanEventLimitSource, res.SpanEventsRetained)
	}
	if len(res.Warnings) != 1 {
		t.Fatalf("want one warning about %s, got %q", EnvSpanEventLimit, res.Warnings)
	}
}

var (
	hexTraceID = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hexSpanID  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// TestTraceFileFormat reads the trace with pdata's OTLP JSON reader and
// checks the OTLP file format details in the raw JSON.
func TestTraceFileFormat(t *testing.T) {
	cfg := testConfig(t)
	cfg.SpanEvents = 3
	res := mustRun(t, cfg)

	spans := readTraceFile(t, cfg.TraceOut)
	if len(spans) != 6 || res.SpansEnded != 6 || res.TraceSpansWritten != 6 {
		t.Fatalf("spans in file %d, ended %d, written %d; want 6 (1 root, 3 chat, 2 tools)", len(spans), res.SpansEnded, res.TraceSpansWritten)
	}
	root := rootSpan(t, spans)
	if !root.ParentSpanID().IsEmpty() {
		t.Fatal("root span has a parent")
	}
	tools := spansNamed(spans, ToolSpanNamePrefix)
	chats := spansNamed(spans, ChatSpanNamePrefix)
	if len(tools) != 2 || len(chats) != 3 {
		t.Fatalf("want 2 tool spans and 3 chat spans, got %d and %d", len(tools), len(chats))
	}
	seenTools := map[string]bool{}
	for _, s := range append(tools, chats...) {
		if s.ParentSpanID() != root.SpanID() {
			t.Errorf("%s: parent %s, want root %s", s.Name(), s.ParentSpanID(), root.SpanID())
		}
		if s.TraceID() != root.TraceID() {
			t.Errorf("%s: trace id %s, root has %s", s.Name(), s.TraceID(), root.TraceID())
		}
	}
	for _, s := range tools {
		a := s.Attributes()
		name := attrStr(a, AttrToolName)
		seenTools[name] = true
		if s.Name() != ToolSpanNamePrefix+name || attrStr(a, AttrOperationName) != OpExecuteTool ||
			attrStr(a, AttrToolCallID) == "" || attrStr(a, AttrToolType) != "function" {
			t.Errorf("tool span %s lacks GenAI attributes: %v", s.Name(), a.AsRaw())
		}
	}
	if !seenTools["read_file"] || !seenTools["write_file"] {
		t.Errorf("want read_file and write_file tool spans, got %v", seenTools)
	}
	for _, s := range chats {
		a := s.Attributes()
		in, _ := a.Get(AttrInputTokens)
		out, _ := a.Get(AttrOutputTokens)
		if attrStr(a, AttrOperationName) != OpChat || attrStr(a, AttrRequestModel) != ModelName || in.Int() <= 0 || out.Int() <= 0 {
			t.Errorf("chat span lacks GenAI attributes: %v", a.AsRaw())
		}
	}
	ra := root.Attributes()
	if attrStr(ra, AttrOperationName) != OpInvokeAgent || attrStr(ra, AttrAgentName) != AgentName || attrStr(ra, AttrProviderName) != ProviderName {
		t.Errorf("root span lacks GenAI attributes: %v", ra.AsRaw())
	}

	// Raw JSON: hex ids, times as strings.
	f, err := os.Open(cfg.TraceOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	checked := 0
	for sc.Scan() {
		var td struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []map[string]any `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(sc.Bytes(), &td); err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					checked++
					if id, _ := s["traceId"].(string); !hexTraceID.MatchString(id) {
						t.Errorf("traceId %v is not 32 lowercase hex digits", s["traceId"])
					}
					if id, _ := s["spanId"].(string); !hexSpanID.MatchString(id) {
						t.Errorf("spanId %v is not 16 lowercase hex digits", s["spanId"])
					}
					for _, k := range []string{"startTimeUnixNano", "endTimeUnixNano"} {
						if v, ok := s[k].(string); !ok || !regexp.MustCompile(`^[1-9][0-9]{18}$`).MatchString(v) {
							t.Errorf("%s = %#v, want a decimal nanosecond string", k, s[k])
						}
					}
					if evs, ok := s["events"].([]any); ok {
						for _, e := range evs {
							if _, ok := e.(map[string]any)["timeUnixNano"].(string); !ok {
								t.Errorf("event timeUnixNano is not a string: %v", e)
							}
						}
					}
				}
			}
		}
	}
	if checked != len(spans) {
		t.Fatalf("raw JSON has %d spans, pdata read %d", checked, len(spans))
	}
}

// TestTraceShapeDeterministic: two runs with the same flags give the same
// span names, kinds, parents, attributes (keys and values), event counts
// and event attribute keys; only ids and times differ.
func TestTraceShapeDeterministic(t *testing.T) {
	run := func() ([]shape, string) {
		cfg := testConfig(t)
		cfg.KernelEvents = 20
		cfg.SpanEvents = 150
		cfg.Concurrency = 4
		mustRun(t, cfg)
		spans := readTraceFile(t, cfg.TraceOut)
		return traceShape(spans), rootSpan(t, spans).TraceID().String()
	}
	a, idA := run()
	b, idB := run()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("trace shapes differ:\n%+v\n%+v", a, b)
	}
	if idA == idB {
		t.Fatalf("both runs have trace id %s; ids should be fresh per run", idA)
	}
	if len(a) != 6 {
		t.Fatalf("want 6 spans, got %d", len(a))
	}
}

// TestSamplerOff: when the SDK's own sampler (OTEL_TRACES_SAMPLER) records
// nothing, the result says so instead of reporting zero events as kept.
func TestSamplerOff(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	cfg := testConfig(t)
	cfg.SpanEvents = 10
	res := mustRun(t, cfg)
	if res.SpansEnded != 0 || res.RetainedFirstIndex != -1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "OTEL_TRACES_SAMPLER") {
		t.Fatalf("spans %d, warnings %q", res.SpansEnded, res.Warnings)
	}
}
