package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// helperEnv makes the test binary act as a workload instead of running
// tests: "files:N:C:DIR" writes N files into DIR with C workers and reads
// each back, two opens per file, then removes them.
const helperEnv = "VIGIL_RUNNER_TEST_HELPER"

// runHelper runs the workload named by helperEnv, if any, and exits.
func runHelper() {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		return
	}
	var n, c int
	var dir string
	if _, err := fmt.Sscanf(spec, "files:%d:%d:%s", &n, &c, &dir); err != nil || n < 0 || c < 1 {
		fmt.Fprintf(os.Stderr, "%s=%q: want files:N:C:DIR\n", helperEnv, spec)
		os.Exit(2)
	}
	if err := fileWorkload(dir, n, c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func fileWorkload(dir string, n, workers int) error {
	payload := make([]byte, 128)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				p := filepath.Join(dir, "f"+strconv.Itoa(i))
				if err := os.WriteFile(p, payload, 0o644); err != nil {
					errs[w] = err
					return
				}
				got, err := os.ReadFile(p)
				if err != nil || len(got) != len(payload) {
					errs[w] = fmt.Errorf("reading back %s: %v (%d bytes)", p, err, len(got))
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		os.Remove(filepath.Join(dir, "f"+strconv.Itoa(i)))
	}
	return nil
}
