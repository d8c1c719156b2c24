package workload

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"vigil/internal/wire"
)

// sdkLog appends wire.SDK lines to the file vigil record named. The file
// is opened once, so the log adds one open for the whole run and none per
// event; each line is one write, so a crash keeps every earlier line.
type sdkLog struct {
	mu    sync.Mutex
	f     *os.File
	runID string
	pid   int
	seq   uint64
	err   error // first write error; later writes are skipped and it is reported
}

func openSDKLog(path, runID string) (*sdkLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &sdkLog{f: f, runID: runID, pid: os.Getpid()}, nil
}

// emit writes one event; a nil log does nothing. sc is the span the
// event belongs to; an invalid one (no tracing) leaves the ids out.
func (l *sdkLog) emit(typ, toolCallID, toolName string, status wire.Status, sc trace.SpanContext) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	ev := wire.SDK{
		Schema: wire.SDKSchema, RunID: l.runID, Seq: l.seq, Type: typ,
		MonoNS: monoNS(), TimeUnixNS: time.Now().UnixNano(), PID: l.pid,
		ToolCallID: toolCallID, ToolName: toolName, Status: status,
	}
	if sc.IsValid() {
		ev.TraceID, ev.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	b, err := json.Marshal(ev)
	if err == nil {
		_, err = l.f.Write(append(b, '\n'))
	}
	if err != nil {
		l.err = err
		return
	}
	l.seq++
}

// close returns the number of lines written and the first error.
func (l *sdkLog) close() (int, error) {
	if l == nil {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return int(l.seq), l.err
}
