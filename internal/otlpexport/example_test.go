package otlpexport_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/evidence/evidencetest"
	"vigil/internal/otlpexport"
)

// Export a recorded run as OTLP/JSON lines to a file, its kernel events
// as span events.
func ExampleDo() {
	dir, err := os.MkdirTemp("", "otlpexport-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	t := otlpexport.Target{File: filepath.Join(dir, "run.otlp.jsonl")}
	res, err := otlpexport.Do(context.Background(), evidencetest.Bundle(12, 2), t)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Spans, "spans,", res.KernelEvents, "of", res.ArchiveEvents, "kernel events as span events")
	// Output:
	// 5 spans, 12 of 12 kernel events as span events
}

func ExampleParseEndpoint() {
	for _, e := range []string{"http://127.0.0.1:4318", "https://collector.example/otlp/v1/traces", "localhost:4318"} {
		url, err := otlpexport.ParseEndpoint(e)
		fmt.Println(url, err)
	}
	// Output:
	// http://127.0.0.1:4318/v1/traces <nil>
	// https://collector.example/otlp/v1/traces <nil>
	//  "localhost:4318": want http://HOST:PORT or https://HOST:PORT[/path]
}
