package otlpexport

import (
	"io"
	"testing"

	"vigil/internal/evidence/evidencetest"
)

// BenchmarkExportFile is Build plus the OTLP/JSON encoding of an archive
// of 100,000 kernel events in 10 tool calls: ns/event and bytes/event.
func BenchmarkExportFile(b *testing.B) {
	bundle := evidencetest.Bundle(100_000, 10)
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		x, err := Build(bundle, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n, err = x.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/event")
	b.ReportMetric(float64(n)/100_000, "bytes/event")
}
