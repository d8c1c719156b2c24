package otlpexport

import (
	"bytes"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"vigil/internal/atomicfile"
)

// MarshalFile encodes the batches in the OTLP file format: one TracesData
// per line in OTLP/JSON, one line per batch (what vigil agent --trace-out
// and the collector's file exporter write).
func MarshalFile(x *Export) ([]byte, error) {
	var buf bytes.Buffer
	var m ptrace.JSONMarshaler
	for _, td := range x.Batches {
		line, err := m.MarshalTraces(td)
		if err != nil {
			return nil, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// WriteFile writes MarshalFile's output to path atomically (a failure
// leaves no partial file) and returns its size.
func WriteFile(path string, x *Export) (int, error) {
	data, err := MarshalFile(x)
	if err != nil {
		return 0, err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return 0, err
	}
	return len(data), nil
}
