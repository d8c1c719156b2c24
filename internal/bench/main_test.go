//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"vigil/internal/memcg"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// TestMain lets the test binary run the harness as a child ("harness DIR
// VIGIL WORKROOT", on an output directory that already holds plan.json),
// like `vigil bench` does, so a test can interrupt it with a real SIGINT.
func TestMain(m *testing.M) { testenv.Main(m, runHarness) }

func runHarness(name string, args []string) error {
	if name != "harness" || len(args) != 3 {
		return fmt.Errorf("%s %q: want harness DIR VIGIL WORKROOT", name, args)
	}
	p, err := LoadPlan(args[0])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = Run(ctx, Config{Plan: p, OutDir: args[0], Resume: true, VigilBin: args[1], WorkRoot: args[2], Log: os.Stderr})
	if errors.Is(err, ErrInterrupted) {
		return testenv.ExitCode(130)
	}
	return err
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
func readOut(t *testing.T, dir string) (wire.Plan, []wire.Sample) {
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
