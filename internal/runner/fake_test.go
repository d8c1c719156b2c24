//go:build linux

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/cgroup"
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// fakeBackend stands in for kernel capture: it attaches nothing and
// reports a proven-empty drain, so runner behaviour can be tested on its
// own. openErr makes Open fail; result, when set, is what Finish reports;
// events, when set, go to the sink at Finish, through one reused block.
type fakeBackend struct {
	preflightErr, openErr, finishErr, closeErr error
	result                                     *CaptureResult
	events                                     []wire.Kernel
	sink                                       func([]wire.Kernel)
	mu                                         sync.Mutex
	opened                                     []string
	closed                                     int
}

func (f *fakeBackend) Preflight() error { return f.preflightErr }

func (f *fakeBackend) Open(dir string, _ int, sink func([]wire.Kernel)) (Capture, error) {
	if f.openErr != nil {
		return nil, f.openErr
	}
	f.mu.Lock()
	f.opened = append(f.opened, dir)
	f.sink = sink
	f.mu.Unlock()
	return &fakeCapture{b: f}, nil
}

type fakeCapture struct{ b *fakeBackend }

func (c *fakeCapture) Probes() []wire.Probe {
	return []wire.Probe{{Name: "fake", Attached: true, Required: true}}
}

func (c *fakeCapture) Coverage() wire.Coverage { return wire.Coverage{} }

func (c *fakeCapture) Finish(context.Context) (*CaptureResult, error) {
	if c.b.finishErr != nil {
		return nil, c.b.finishErr
	}
	block := make([]wire.Kernel, 0, 700)
	for rest := c.b.events; len(rest) > 0; {
		n := min(len(rest), cap(block))
		block = append(block[:0], rest[:n]...)
		c.b.sink(block)
		for i := range block {
			block[i] = wire.Kernel{Seq: 1 << 62, Kind: "reused"}
		}
		rest = rest[n:]
	}
	if c.b.result != nil {
		return c.b.result, nil
	}
	return &CaptureResult{DrainProven: true, DrainDetail: "fake"}, nil
}

func (c *fakeCapture) Close() error {
	c.b.mu.Lock()
	c.b.closed++
	c.b.mu.Unlock()
	return c.b.closeErr
}

// jsonArchive writes the bundle as JSON, standing in for the archive
// format so runner tests do not depend on it.
func jsonArchive(path string, b *evidence.Bundle, _ *archive.KernelLayer) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func readJSONArchive(t *testing.T, path string) *evidence.Bundle {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b evidence.Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// assertNoSession fails if the session cgroup of runID still exists.
func assertNoSession(t *testing.T, runID string) {
	t.Helper()
	parent, err := cgroup.SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), cgroup.NamePrefix) && strings.HasSuffix(e.Name(), "-"+runID) {
			t.Errorf("session cgroup %s left behind", e.Name())
		}
	}
}

// assertOnlyFiles fails unless dir holds exactly the named files.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// stdio returns a temp file used as the child's stdout and stderr.
func stdio(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stdio"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func fakeOptions(t *testing.T, b *fakeBackend, argv ...string) Options {
	dir := t.TempDir()
	out := stdio(t)
	return Options{
		Argv:         argv,
		ArchivePath:  filepath.Join(dir, "a.json"),
		Grace:        DefaultGrace,
		Backend:      b,
		WriteArchive: jsonArchive,
		Stdout:       out,
		Stderr:       out,
		RunID:        strings.ReplaceAll(t.Name(), "/", "_"),
	}
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var re *Error
	if !errors.As(err, &re) || re.Code != code {
		t.Fatalf("want *Error with code %d, got %v", code, err)
	}
	if strings.Contains(re.Error(), "\n") {
		t.Errorf("error is not one line: %q", re.Error())
	}
}
