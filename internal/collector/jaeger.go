//go:build linux

package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// EnvJaeger names the Jaeger binary to use.
const EnvJaeger = "VIGIL_JAEGER"

// FindJaeger locates the Jaeger binary: $VIGIL_JAEGER, else tools/bin/jaeger
// in the directory tree above the working directory (the place the tools
// README builds it), else "jaeger" on PATH.
func FindJaeger() (string, error) {
	if p := os.Getenv(EnvJaeger); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %v", EnvJaeger, p, err)
		}
		return p, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			p := filepath.Join(dir, "tools", "bin", "jaeger")
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no Jaeger binary: set %s, or build one with: go build -C tools -o \"$PWD/tools/bin/jaeger\" github.com/jaegertracing/jaeger/cmd/jaeger", EnvJaeger)
}

// client talks to the query API without keeping connections open, which
// would hold up Jaeger's graceful shutdown.
var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Jaeger is a running Jaeger all-in-one.
type Jaeger struct {
	// OTLPEndpoint is the OTLP/HTTP receiver's base URL (send to
	// OTLPEndpoint + "/v1/traces").
	OTLPEndpoint string
	// QueryURL is the base URL of the query API and UI.
	QueryURL string
	cmd      *exec.Cmd
	dir      string
	done     chan error
}

// TracesURL is where OTLP/HTTP traces go.
func (j *Jaeger) TracesURL() string { return j.OTLPEndpoint + "/v1/traces" }

// config is the all-in-one configuration: OTLP/HTTP in, memory store,
// query API, nothing else listening.
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    enable_tracing: false
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// Start runs bin with a configuration on free loopback ports and returns
// once the query API answers and the OTLP port accepts connections. Its
// log goes to a file in a private directory that Stop removes; a failed
// start leaves nothing running and quotes the log.
func Start(ctx context.Context, bin string) (*Jaeger, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vigil-jaeger-")
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, config, addr(ports[0]), addr(ports[1]), addr(ports[2])), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	j := &Jaeger{
		OTLPEndpoint: "http://" + addr(ports[2]),
		QueryURL:     "http://" + addr(ports[0]),
		dir:          dir,
		done:         make(chan error, 1),
	}
	j.cmd = exec.Command(bin, "--config", "file:"+cfgPath)
	j.cmd.Stdout, j.cmd.Stderr = logf, logf
	// Its own process group, so Stop reaches anything it starts.
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := j.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %v", bin, err)
	}
	go func() { j.done <- j.cmd.Wait() }()
	if err := j.waitReady(ctx, addr(ports[2])); err != nil {
		j.Stop()
		return nil, err
	}
	return j, nil
}

func (j *Jaeger) waitReady(parent context.Context, otlp string) error {
	ctx, cancel := context.WithTimeout(parent, 60*time.Second)
	defer cancel()
	for {
		select {
		case err := <-j.done:
			j.done <- err
			return fmt.Errorf("jaeger exited during start (%v): %s", err, j.logTail())
		case <-ctx.Done():
			if parent.Err() != nil {
				return parent.Err()
			}
			return fmt.Errorf("jaeger not ready after 60s: %s", j.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := client.Get(j.QueryURL + "/api/services")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			continue
		}
		if c, err := net.DialTimeout("tcp", otlp, time.Second); err == nil {
			c.Close()
			return nil
		}
	}
}

func (j *Jaeger) logTail() string {
	b, _ := os.ReadFile(filepath.Join(j.dir, "jaeger.log"))
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}

// Exited reports, without waiting, whether Jaeger has ended on its own
// (a crash mid-run), and how.
func (j *Jaeger) Exited() error {
	select {
	case err := <-j.done:
		j.done <- err
		return fmt.Errorf("jaeger exited (%v): %s", err, j.logTail())
	default:
		return nil
	}
}

// Stop ends Jaeger (SIGTERM, then SIGKILL after 10 s) and removes its
// directory. It is safe to call twice.
func (j *Jaeger) Stop() error {
	if j.cmd == nil || j.cmd.Process == nil {
		return nil
	}
	if err := j.Exited(); err != nil {
		// Already gone (and reaped): its group id may be reused, so no
		// signal is sent.
		j.cmd = nil
		os.RemoveAll(j.dir)
		return err
	}
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGTERM)
	var err error
	select {
	case err = <-j.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
		err = <-j.done
		err = fmt.Errorf("jaeger did not stop on SIGTERM within 10s; killed (%v): %s", err, j.logTail())
	}
	j.cmd = nil
	os.RemoveAll(j.dir)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ProcessState != nil {
		// Ended by our SIGTERM: not a failure.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}

// freePorts finds n distinct free TCP ports on loopback. They are free when
// returned; a race with another process is possible and shows as a failed
// start.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Trace is a trace as Jaeger's query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace. StartTime and Duration are microseconds.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []KeyValue  `json:"tags"`
	Logs          []Log       `json:"logs"`
	ProcessID     string      `json:"processID"`
}

// Reference links a span to another (CHILD_OF: its parent).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is a tag or log field.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Log is a span event.
type Log struct {
	Timestamp int64      `json:"timestamp"`
	Fields    []KeyValue `json:"fields"`
}

// Process is the service a span came from.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// Parent is the span's CHILD_OF parent id, or "".
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Field returns the value of key among kvs, and whether it is there.
func Field(kvs []KeyValue, key string) (any, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Trace fetches one trace by id (32 hex digits) from the query API;
// found is false while Jaeger does not know it yet.
func (j *Jaeger) Trace(ctx context.Context, traceID string) (tr Trace, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.QueryURL+"/api/traces/"+traceID, nil)
	if err != nil {
		return tr, false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return tr, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return tr, false, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return tr, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return tr, false, fmt.Errorf("GET /api/traces/%s: %s: %.200s", traceID, resp.Status, body)
	}
	var out struct {
		Data []Trace `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return tr, false, fmt.Errorf("GET /api/traces/%s: %v", traceID, err)
	}
	if len(out.Data) == 0 {
		return tr, false, nil
	}
	return out.Data[0], true, nil
}
