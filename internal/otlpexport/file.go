package otlpexport

import (
	"bytes"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"vigil/internal/atomicfile"
)

// WriteTo writes the export in the OTLP file format: one TracesData per
// line in OTLP/JSON, one line per batch (what vigil agent --trace-out and
// the collector's file exporter write). It returns the bytes written.
func (x *Export) WriteTo(w io.Writer) (int64, error) {
	var m ptrace.JSONMarshaler
	var n int64
	for i := range x.NumBatches() {
		line, err := m.MarshalTraces(x.Batch(i))
		if err != nil {
			return n, err
		}
		k, err := w.Write(append(line, '\n'))
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// MarshalFile is WriteTo into memory.
func MarshalFile(x *Export) ([]byte, error) {
	var buf bytes.Buffer
	_, err := x.WriteTo(&buf)
	return buf.Bytes(), err
}

// WriteFile writes the export to path atomically (a failure leaves no
// partial file), a batch at a time, and returns its size.
func WriteFile(path string, x *Export) (int64, error) {
	var n int64
	err := atomicfile.WriteFrom(path, func(w io.Writer) error {
		var err error
		n, err = x.WriteTo(w)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
