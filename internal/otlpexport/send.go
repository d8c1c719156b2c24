package otlpexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TracesPath is the OTLP/HTTP path for traces, added to an endpoint URL
// that has no path of its own.
const TracesPath = "/v1/traces"

// Sender sends batches to an OTLP/HTTP receiver (binary protobuf).
type Sender struct {
	// Endpoint is the receiver's URL, e.g. http://127.0.0.1:4318 (then
	// /v1/traces is used) or a full URL with a path.
	Endpoint string
	Client   *http.Client // nil: a client with Timeout
	// Attempts per request (>= 1) for retryable failures: connection
	// errors and HTTP 429, 502, 503, 504. Zero means 5.
	Attempts int
	// Timeout bounds each attempt. Zero means 10 s.
	Timeout time.Duration
	// Backoff before the first retry, doubled each time (a Retry-After
	// header wins). Zero means 200 ms.
	Backoff time.Duration
}

// Stats counts what a Send did. Spans and events are counted per request:
// a request that was never accepted counts all of its spans as failed.
type Stats struct {
	Requests      int   // requests accepted by the receiver
	Failed        int   // requests given up on
	Retries       int   // attempts beyond the first
	Bytes         int64 // request bodies accepted
	SpansSent     int   // spans in accepted requests
	SpansRejected int   // spans the receiver reported rejecting (partial success)
	SpansFailed   int   // spans in requests given up on, or not sent
	EventsSent    int   // span events in accepted requests
	EventsFailed  int
	// Messages are the receiver's partial-success messages and the error
	// of each request given up on, in order.
	Messages []string
}

// ParseEndpoint checks an OTLP/HTTP endpoint and returns the URL requests
// go to.
func ParseEndpoint(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q: want http://HOST:PORT or https://HOST:PORT[/path]", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = TracesPath
	}
	return u.String(), nil
}

// Send sends every batch of x in order. After a request is given up on,
// the rest are not tried (the receiver is unreachable or refusing) and are
// counted as failed. err is nil only when every span was accepted.
func (s *Sender) Send(ctx context.Context, x *Export) (Stats, error) {
	var st Stats
	target, err := ParseEndpoint(s.Endpoint)
	if err != nil {
		return st, err
	}
	attempts, timeout, backoff := s.Attempts, s.Timeout, s.Backoff
	if attempts <= 0 {
		attempts = 5
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	var firstErr error
	for i := range x.NumBatches() {
		td := x.Batch(i)
		spans, events := countBatch(td)
		if firstErr != nil {
			st.SpansFailed += spans
			st.EventsFailed += events
			continue
		}
		// giveUp counts a request that will not be accepted; the rest are
		// then not sent (counted above).
		giveUp := func(err error) {
			firstErr = fmt.Errorf("request %d of %d: %w", i+1, x.NumBatches(), err)
			st.Failed++
			st.SpansFailed += spans
			st.EventsFailed += events
			st.Messages = append(st.Messages, firstErr.Error())
		}
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			giveUp(fmt.Errorf("encoding: %w", err))
			continue
		}
		rejected, msg, retries, err := post(ctx, client, target, body, attempts, backoff)
		st.Retries += retries
		if err != nil {
			giveUp(err)
			continue
		}
		st.Requests++
		st.Bytes += int64(len(body))
		st.SpansSent += spans
		st.EventsSent += events
		st.SpansRejected += int(rejected)
		if msg != "" || rejected > 0 {
			st.Messages = append(st.Messages, fmt.Sprintf("request %d: receiver rejected %d span(s): %s", i+1, rejected, msg))
		}
	}
	if firstErr != nil {
		return st, firstErr
	}
	if st.SpansRejected > 0 {
		return st, fmt.Errorf("the receiver rejected %d of %d spans", st.SpansRejected, st.SpansSent)
	}
	return st, nil
}

func countBatch(td ptrace.Traces) (spans, events int) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sp := sss.At(j).Spans()
			spans += sp.Len()
			for k := 0; k < sp.Len(); k++ {
				events += sp.At(k).Events().Len()
			}
		}
	}
	return spans, events
}

// errRetryable marks a failure worth another attempt.
type errRetryable struct {
	err   error
	after time.Duration // Retry-After, or 0
}

func (e errRetryable) Error() string { return e.err.Error() }

// post sends one request, retrying retryable failures.
func post(ctx context.Context, client *http.Client, target string, body []byte, attempts int, backoff time.Duration) (rejected int64, msg string, retries int, err error) {
	for a := 1; ; a++ {
		rejected, msg, err = postOnce(ctx, client, target, body)
		var r errRetryable
		if err == nil || !errors.As(err, &r) || a >= attempts {
			if errors.As(err, &r) {
				err = fmt.Errorf("%v (after %d attempts)", r.err, a)
			}
			return rejected, msg, a - 1, err
		}
		wait := backoff << (a - 1)
		if r.after > 0 {
			wait = r.after
		}
		select {
		case <-ctx.Done():
			return 0, "", a - 1, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func postOnce(ctx context.Context, client *http.Client, target string, body []byte) (int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
		return 0, "", errRetryable{err: err}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") || len(data) == 0 {
			return 0, "", nil
		}
		er := ptraceotlp.NewExportResponse()
		if err := er.UnmarshalProto(data); err != nil {
			return 0, "", fmt.Errorf("%s answered 200 with an undecodable body: %v", target, err)
		}
		ps := er.PartialSuccess()
		return ps.RejectedSpans(), ps.ErrorMessage(), nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		after := time.Duration(0)
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			after = time.Duration(min(secs, 30)) * time.Second
		}
		return 0, "", errRetryable{err: fmt.Errorf("%s answered %s", target, resp.Status), after: after}
	default:
		return 0, "", fmt.Errorf("%s answered %s: %s", target, resp.Status, firstLine(data))
	}
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
