//go:build linux

package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"vigil/internal/memcg"
	"vigil/internal/sample"
)

// childEnv makes the test binary run the harness on an output directory
// that already holds plan.json, like `vigil bench` does, so a test can
// interrupt it with a real SIGINT.
const childEnv = "VIGIL_BENCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(childMain(dir))
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func childMain(dir string) int {
	p, err := LoadPlan(dir)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 125
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = Run(ctx, Config{Plan: p, OutDir: dir, Resume: true, VigilBin: os.Getenv("VIGIL_BENCH_TEST_VIGIL"),
		WorkRoot: os.Getenv("VIGIL_BENCH_TEST_WORKROOT"), Log: os.Stderr})
	switch {
	case errors.Is(err, ErrInterrupted):
		return 130
	case err != nil:
		os.Stderr.WriteString(err.Error() + "\n")
		return 125
	}
	return 0
}

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

// vigilBinary builds cmd/vigil once per test binary run.
func vigilBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "vigil-bench-test-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "vigil")
		out, err := exec.Command("go", "build", "-o", builtBin, "vigil/cmd/vigil").CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build vigil/cmd/vigil: " + err.Error() + ": " + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// leftoverMemcgs lists per-sample memory cgroups of process pid still present.
func leftoverMemcgs(t *testing.T, pid int) []string {
	t.Helper()
	c := memcg.Detect()
	if c.Mode() == memcg.None {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(c.Parent(), memcg.NamePrefix+itoa(pid)+"-*"))
	return m
}

func itoa(i int) string { return strconv.Itoa(i) }

// readOut parses and schema-checks an output directory.
func readOut(t *testing.T, dir string) (sample.Plan, []sample.Sample) {
	t.Helper()
	p, err := LoadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	ss, n, err := ParseSamples(data)
	if err != nil || n != len(data) {
		t.Fatalf("samples.jsonl: %d of %d bytes parse, %v", n, len(data), err)
	}
	validateOut(t, dir)
	return p, ss
}
