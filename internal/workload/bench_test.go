package workload

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"vigil/internal/wire"
)

// BenchmarkSpanEvent is the cost of one span event with tracing off (the
// agent's --otel=false path) and on (the SDK recording it).
func BenchmarkSpanEvent(b *testing.B) {
	payload := string(makePayload(128))
	b.Run("otel=off", func(b *testing.B) {
		span := noRecordingSpan()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			addSpanEvent(span, i, payload)
		}
	})
	b.Run("otel=on", func(b *testing.B) {
		span, done := recordingSpan(b)
		defer done()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			addSpanEvent(span, i, payload)
		}
	})
}

// BenchmarkFileWork is the worker-file phase: per op, the given number of
// files each written and read back.
func BenchmarkFileWork(b *testing.B) {
	for _, c := range []struct{ files, conc, payload int }{
		{100, 1, 128}, {100, 16, 128}, {1000, 16, 128}, {100, 4, 65536},
	} {
		b.Run(fmt.Sprintf("files=%d/c=%d/payload=%d", c.files, c.conc, c.payload), func(b *testing.B) {
			dir := b.TempDir()
			payload := makePayload(c.payload)
			b.SetBytes(int64(2 * c.files * c.payload))
			for b.Loop() {
				var st fileWorkStats
				if err := doFileWork(context.Background(), dir, c.files, c.conc, payload, &st); err != nil {
					b.Fatal(err)
				}
			}
			if err := removeWorkerFiles(dir, c.files); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkRun is one whole in-process agent run for a few cells, with the
// trace written to a file when tracing is on.
func BenchmarkRun(b *testing.B) {
	cells := []struct {
		name         string
		kernel, span int
		conc         int
	}{
		{"control", 0, 0, 1}, {"s500", 0, 500, 1}, {"k100", 100, 0, 1}, {"kc1000", 1000, 0, 16},
	}
	for _, c := range cells {
		for _, otel := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/otel=%v", c.name, otel), func(b *testing.B) {
				dir := b.TempDir()
				cfg := DefaultConfig()
				cfg.WorkDir = filepath.Join(dir, "work")
				cfg.KernelEvents, cfg.SpanEvents, cfg.Concurrency, cfg.OTel = c.kernel, c.span, c.conc, otel
				if otel {
					cfg.TraceOut = filepath.Join(dir, "t.jsonl")
				}
				b.ReportAllocs()
				for b.Loop() {
					if res, err := Run(context.Background(), cfg); err != nil || res.Status != wire.StatusOK {
						b.Fatalf("run: %v", err)
					}
				}
			})
		}
	}
}
