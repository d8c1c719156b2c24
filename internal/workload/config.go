package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Named payload sizes (bytes per worker file and per span event).
var payloadSizes = map[string]int{"small": 128, "medium": 4096, "large": 65536}

// MaxPayloadBytes bounds --payload-bytes: larger values are almost surely a
// typo and would make every span event carry that much memory.
const MaxPayloadBytes = 64 << 20

// PayloadSize resolves a named payload size (small, medium, large).
func PayloadSize(name string) (int, error) {
	if n, ok := payloadSizes[name]; ok {
		return n, nil
	}
	names := make([]string, 0, len(payloadSizes))
	for k := range payloadSizes {
		names = append(names, k)
	}
	sort.Strings(names)
	return 0, &ConfigError{Flag: "--payload", Msg: fmt.Sprintf("unknown payload %q (want one of %s)", name, strings.Join(names, ", "))}
}

// Config is one agent run. Use DefaultConfig and change what you need: the
// zero value is not valid (Concurrency must be at least 1).
type Config struct {
	// WorkDir holds the tool workspace and the worker files. Empty means a
	// fresh temporary directory, removed afterwards.
	WorkDir string
	// Keep leaves the files the run created in WorkDir.
	Keep bool

	KernelEvents int // worker files, 2 opens each
	SpanEvents   int // events on the root span
	Concurrency  int // parallel workers for the file work (>= 1)
	PayloadBytes int // bytes per worker file and per span event

	// OTel turns tracing on. OTEL_SDK_DISABLED=true in the environment
	// turns it off regardless.
	OTel bool
	// SpanEventLimit, when non-nil, sets the SDK's per-span event limit
	// explicitly (negative: unlimited). Nil leaves the SDK to its default
	// and its OTEL_SPAN_EVENT_COUNT_LIMIT environment variable.
	SpanEventLimit *int
	// TraceOut is the OTLP JSON-lines file to write (empty: none).
	TraceOut string
	// OTLPEndpoint, when set, also exports over OTLP/HTTP to this URL with
	// the SDK's exporter, which honours the OTEL_EXPORTER_OTLP_* variables.
	OTLPEndpoint string

	// SDKEventLog is the file tool-call events are appended to (empty:
	// none). RunID is written into every line.
	SDKEventLog string
	RunID       string

	// FailEvery, with FailCounterFile, makes every FailEvery-th invocation
	// (counted in the file) fail its first tool call: a testing aid for
	// harnesses that must cope with failing samples.
	FailEvery       int
	FailCounterFile string
}

// DefaultConfig is the control cell: no extra events, small payload,
// concurrency 1, tracing on.
func DefaultConfig() Config {
	return Config{Concurrency: 1, PayloadBytes: payloadSizes["small"], OTel: true}
}

// ConfigError is bad input: it names the flag and what was wrong with it.
// vigil agent exits 125 on it, having created no files.
type ConfigError struct {
	Flag string
	Msg  string
}

func (e *ConfigError) Error() string { return e.Flag + ": " + e.Msg }

func (c *Config) validate() error {
	nonNeg := []struct {
		flag string
		v    int
	}{
		{"--kernel-events", c.KernelEvents},
		{"--span-events", c.SpanEvents},
		{"--payload-bytes", c.PayloadBytes},
		{"--fail-every", c.FailEvery},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return &ConfigError{Flag: f.flag, Msg: fmt.Sprintf("must be >= 0, got %d", f.v)}
		}
	}
	if c.Concurrency < 1 {
		return &ConfigError{Flag: "--concurrency", Msg: fmt.Sprintf("must be >= 1, got %d", c.Concurrency)}
	}
	if c.PayloadBytes > MaxPayloadBytes {
		return &ConfigError{Flag: "--payload-bytes", Msg: fmt.Sprintf("must be <= %d, got %d", MaxPayloadBytes, c.PayloadBytes)}
	}
	if c.SpanEventLimit != nil && *c.SpanEventLimit < -1 {
		return &ConfigError{Flag: "--span-event-limit", Msg: fmt.Sprintf("must be >= -1 (-1: unlimited), got %d", *c.SpanEventLimit)}
	}
	if c.FailEvery > 0 && c.FailCounterFile == "" {
		return &ConfigError{Flag: "--fail-every", Msg: "needs --fail-counter-file to count invocations"}
	}
	if c.OTLPEndpoint != "" && !strings.HasPrefix(c.OTLPEndpoint, "http://") && !strings.HasPrefix(c.OTLPEndpoint, "https://") {
		return &ConfigError{Flag: "--otlp-endpoint", Msg: fmt.Sprintf("want an http:// or https:// URL, got %q", c.OTLPEndpoint)}
	}
	return nil
}
