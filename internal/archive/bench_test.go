package archive

import (
	"bytes"
	"io"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
)

// BenchmarkEncode20k encodes a 20,000-event bundle (with 50 tool calls, so
// the SDK layer and correlation report are included).
func BenchmarkEncode20k(b *testing.B) {
	bundle := evidencetest.Bundle(20000, 50)
	size := len(encode(b, bundle))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := Encode(io.Discard, bundle); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "archive-bytes")
}

// BenchmarkDecode20k is the cost of full verification of the same archive.
func BenchmarkDecode20k(b *testing.B) {
	data := encode(b, evidencetest.Bundle(20000, 50))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck20k is the cross-document consistency check alone, which
// Encode runs beside the encoding.
func BenchmarkCheck20k(b *testing.B) {
	bundle := evidencetest.Bundle(20000, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := evidence.Check(bundle); err != nil {
			b.Fatal(err)
		}
	}
}
