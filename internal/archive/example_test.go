package archive_test

import (
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/archive"
	"vigil/internal/evidence/evidencetest"
)

// Write an evidence bundle as an archive, verify it, and read it back.
func Example() {
	dir, err := os.MkdirTemp("", "archive-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.tar.gz")

	// A bundle as vigil record would produce it: 10 kernel events, and
	// one tool call in the SDK layer (started, completed, run finished).
	if err := archive.Write(path, evidencetest.Bundle(10, 1)); err != nil {
		panic(err)
	}
	fmt.Println("verify:", archive.Verify(path))
	b, err := archive.Read(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Run.RunID, len(b.Kernel), "kernel events,", len(b.SDK), "sdk events")

	// One byte changed anywhere and the archive no longer verifies.
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	os.WriteFile(path, data, 0o644)
	fmt.Println("verify after a flipped bit fails:", archive.Verify(path) != nil)
	// Output:
	// verify: <nil>
	// run-0123456789abcdef 10 kernel events, 3 sdk events
	// verify after a flipped bit fails: true
}
