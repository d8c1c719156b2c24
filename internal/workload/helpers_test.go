package workload

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"vigil/internal/wire"
)

// testConfig is DefaultConfig with a work directory and trace file inside
// the test's temporary directory.
func testConfig(t testing.TB) Config {
	t.Helper()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.WorkDir = filepath.Join(dir, "work")
	cfg.TraceOut = filepath.Join(dir, "t.jsonl")
	return cfg
}

// mustRun runs cfg and fails the test unless the run succeeded with a
// result line that satisfies the embedded schema.
func mustRun(t testing.TB, cfg Config) wire.AgentResult {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResultSchema(t, res)
	if res.Status != wire.StatusOK {
		t.Fatalf("status %q, error %q", res.Status, res.Error)
	}
	return res
}

func checkResultSchema(t testing.TB, res wire.AgentResult) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Validate("agent-result", b); err != nil {
		t.Fatalf("result line does not match schema agent-result: %v\n%s", err, b)
	}
}

// readTraceFile reads an OTLP JSON-lines file with pdata's own unmarshaler
// (independent of the exporter's code) and returns its spans.
func readTraceFile(t testing.TB, path string) []ptrace.Span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var spans []ptrace.Span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: not an OTLP JSON TracesData line: %v", path, err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					spans = append(spans, ss.Spans().At(k))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return spans
}

func spansNamed(spans []ptrace.Span, prefix string) []ptrace.Span {
	var out []ptrace.Span
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), prefix) {
			out = append(out, s)
		}
	}
	return out
}

func rootSpan(t testing.TB, spans []ptrace.Span) ptrace.Span {
	t.Helper()
	roots := spansNamed(spans, RootSpanName)
	if len(roots) != 1 {
		t.Fatalf("want 1 root span %q, got %d", RootSpanName, len(roots))
	}
	return roots[0]
}

func attrStr(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// shape is a span with its ids and times removed: what must be identical
// between two runs with the same flags.
type shape struct {
	Name, Kind, Parent, Status string
	Attrs                      string
	Events, Dropped            int
	EventAttrKeys              string
}

func traceShape(spans []ptrace.Span) []shape {
	names := map[pcommon.SpanID]string{}
	for _, s := range spans {
		names[s.SpanID()] = s.Name()
	}
	var out []shape
	for _, s := range spans {
		sh := shape{
			Name: s.Name(), Kind: s.Kind().String(), Parent: names[s.ParentSpanID()],
			Status: s.Status().Code().String(), Events: s.Events().Len(), Dropped: int(s.DroppedEventsCount()),
		}
		var attrs []string
		s.Attributes().Range(func(k string, v pcommon.Value) bool {
			attrs = append(attrs, k+"="+v.AsString())
			return true
		})
		sort.Strings(attrs)
		sh.Attrs = strings.Join(attrs, ",")
		keys := map[string]bool{}
		for i := 0; i < s.Events().Len(); i++ {
			s.Events().At(i).Attributes().Range(func(k string, _ pcommon.Value) bool {
				keys[s.Events().At(i).Name()+"/"+k] = true
				return true
			})
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		sh.EventAttrKeys = strings.Join(ks, ",")
		out = append(out, sh)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Attrs < b.Attrs
	})
	return out
}
