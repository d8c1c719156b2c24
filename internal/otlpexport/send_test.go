package otlpexport

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"vigil/internal/evidence/evidencetest"
)

// receiver is an OTLP/HTTP receiver whose answers a test scripts: the
// i-th request gets answer(i); it decodes every request it accepts.
type receiver struct {
	mu       sync.Mutex
	calls    int
	spans    int
	events   int
	paths    []string
	answer   func(i int, w http.ResponseWriter) bool // true: accepted
	badBody  int
	ctypeBad int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.calls
	r.calls++
	r.paths = append(r.paths, req.URL.Path)
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.ctypeBad++
	}
	body, _ := io.ReadAll(req.Body)
	if !r.answer(i, w) {
		return
	}
	er := ptraceotlp.NewExportRequest()
	if err := er.UnmarshalProto(body); err != nil {
		r.badBody++
		return
	}
	s, e := countBatch(er.Traces())
	r.spans += s
	r.events += e
}

func okAnswer(int, http.ResponseWriter) bool { return true }

func export(t *testing.T, perRq int) *Export {
	t.Helper()
	x, err := Build(evidencetest.Bundle(120, 3), Options{MaxEventsPerSpan: 10, MaxEventsPerRequest: perRq})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestSendAllAccepted(t *testing.T) {
	r := &receiver{answer: okAnswer}
	srv := httptest.NewServer(r)
	defer srv.Close()
	x := export(t, 25)
	st, err := (&Sender{Endpoint: srv.URL}).Send(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != x.NumBatches() || x.NumBatches() < 3 || st.SpansSent != x.Spans || st.EventsSent != x.KernelEvents ||
		st.SpansFailed+st.EventsFailed+st.SpansRejected+st.Retries+st.Failed != 0 {
		t.Fatalf("stats %+v for %d batches, %d spans, %d events", st, x.NumBatches(), x.Spans, x.KernelEvents)
	}
	if r.spans != x.Spans || r.events != x.KernelEvents || r.badBody+r.ctypeBad != 0 {
		t.Fatalf("receiver decoded %d spans, %d events (bad bodies %d, content types %d)", r.spans, r.events, r.badBody, r.ctypeBad)
	}
	if r.paths[0] != TracesPath {
		t.Errorf("posted to %q, want %q", r.paths[0], TracesPath)
	}
}

func TestSendRetriesThenSucceeds(t *testing.T) {
	r := &receiver{answer: func(i int, w http.ResponseWriter) bool {
		if i < 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return false
		}
		return true
	}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	x := export(t, 1_000_000)
	st, err := (&Sender{Endpoint: srv.URL + "/custom/path", Backoff: time.Millisecond}).Send(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if st.Retries != 2 || st.Requests != 1 || st.SpansSent != x.Spans || r.paths[2] != "/custom/path" {
		t.Fatalf("stats %+v, paths %v", st, r.paths)
	}
}

func TestSendPartialSuccessCounted(t *testing.T) {
	r := &receiver{answer: func(i int, w http.ResponseWriter) bool {
		resp := ptraceotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedSpans(2)
		resp.PartialSuccess().SetErrorMessage("span too big")
		b, _ := resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
		return true
	}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	x := export(t, 1_000_000)
	st, err := (&Sender{Endpoint: srv.URL}).Send(context.Background(), x)
	if err == nil || st.SpansRejected != 2 || !strings.Contains(strings.Join(st.Messages, "\n"), "span too big") {
		t.Fatalf("err %v, stats %+v", err, st)
	}
}

// TestSendStopsAtRefusal: a request refused outright is not retried, and
// the requests after it are not sent but counted as failed.
func TestSendStopsAtRefusal(t *testing.T) {
	r := &receiver{answer: func(i int, w http.ResponseWriter) bool {
		if i == 1 {
			http.Error(w, "bad request: nope", http.StatusBadRequest)
			return false
		}
		return true
	}}
	srv := httptest.NewServer(r)
	defer srv.Close()
	x := export(t, 20)
	st, err := (&Sender{Endpoint: srv.URL}).Send(context.Background(), x)
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("err %v", err)
	}
	if r.calls != 2 || st.Requests != 1 || st.Failed != 1 || st.Retries != 0 {
		t.Fatalf("%d calls, stats %+v", r.calls, st)
	}
	if st.SpansSent+st.SpansFailed != x.Spans || st.EventsSent+st.EventsFailed != x.KernelEvents || st.EventsSent != r.events {
		t.Fatalf("stats %+v do not add up to %d spans, %d events", st, x.Spans, x.KernelEvents)
	}
}

func TestSendUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	x := export(t, 1_000_000)
	st, err := (&Sender{Endpoint: url, Attempts: 3, Backoff: time.Millisecond}).Send(context.Background(), x)
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || st.Retries != 2 || st.SpansFailed != x.Spans {
		t.Fatalf("err %v, stats %+v", err, st)
	}
}

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":            "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":           "http://127.0.0.1:4318/v1/traces",
		"https://c.example/otlp/v1/traces": "https://c.example/otlp/v1/traces",
		"127.0.0.1:4318":                   "",
		"ftp://x":                          "",
		"http://":                          "",
	} {
		got, err := ParseEndpoint(in)
		if want == "" && err == nil || want != "" && got != want {
			t.Errorf("ParseEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
