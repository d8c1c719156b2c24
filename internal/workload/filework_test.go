//go:build linux

package workload

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openWatch counts, through inotify, the opens, creations and closes of
// files in dir: a kernel-side count that does not rely on the workload's
// counters. Closes are watched too because inotify merges identical
// consecutive events: without the close between them, a file's two opens
// would arrive as one.
type openWatch struct {
	fd int
}

func watchOpens(t *testing.T, dir string) *openWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify, the independent open counter, is unavailable: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_CREATE|unix.IN_CLOSE_WRITE|unix.IN_CLOSE_NOWRITE); err != nil {
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	return &openWatch{fd: fd}
}

// watchCounts are per-file event counts.
type watchCounts struct {
	opens, creates, closeWrite, closeNoWrite map[string]int
}

// drain returns the counts per file name.
func (w *openWatch) drain(t *testing.T) watchCounts {
	t.Helper()
	c := watchCounts{map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EAGAIN {
			return c
		}
		if err != nil {
			t.Fatalf("read inotify: %v", err)
		}
		for off := 0; off < n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflowed: counts would be incomplete")
			}
			if name == "" {
				continue // the watched directory itself
			}
			if ev.Mask&unix.IN_OPEN != 0 {
				c.opens[name]++
			}
			if ev.Mask&unix.IN_CREATE != 0 {
				c.creates[name]++
			}
			if ev.Mask&unix.IN_CLOSE_WRITE != 0 {
				c.closeWrite[name]++
			}
			if ev.Mask&unix.IN_CLOSE_NOWRITE != 0 {
				c.closeNoWrite[name]++
			}
		}
	}
}

// TestKernelEventsOpens: 1000 worker files at concurrency 16 are exactly
// 2000 opens of worker paths (2 per file, counted by inotify), the SDK event
// log adds none there, and nothing is left in the work directory.
func TestKernelEventsOpens(t *testing.T) {
	cfg := testConfig(t)
	cfg.KernelEvents = 1000
	cfg.Concurrency = 16
	cfg.SDKEventLog = filepath.Join(t.TempDir(), "sdk.ndjson")
	workers := filepath.Join(cfg.WorkDir, "workers")
	if err := os.MkdirAll(workers, 0o755); err != nil {
		t.Fatal(err)
	}
	w := watchOpens(t, workers)
	res := mustRun(t, cfg)
	c := w.drain(t)

	if res.WorkerOpens != 2000 || res.FilesWritten != 1000 || res.FilesRead != 1000 {
		t.Fatalf("result opens/written/read = %d/%d/%d, want 2000/1000/1000", res.WorkerOpens, res.FilesWritten, res.FilesRead)
	}
	if want := int64(1000 * cfg.PayloadBytes); res.WorkerBytesWritten != want || res.WorkerBytesRead != want {
		t.Fatalf("bytes written/read %d/%d, want %d", res.WorkerBytesWritten, res.WorkerBytesRead, want)
	}
	if res.WorkerDir != workers {
		t.Fatalf("worker_dir %q, want %q", res.WorkerDir, workers)
	}
	total := 0
	for name, n := range c.opens {
		total += n
		// One open for writing (closed with IN_CLOSE_WRITE) and one for
		// reading (IN_CLOSE_NOWRITE).
		if n != 2 || c.closeWrite[name] != 1 || c.closeNoWrite[name] != 1 {
			t.Errorf("%s: %d opens, %d write closes, %d read closes; want 2, 1, 1", name, n, c.closeWrite[name], c.closeNoWrite[name])
		}
	}
	if total != 2000 || len(c.opens) != 1000 || len(c.creates) != 1000 {
		t.Fatalf("inotify saw %d opens of %d files and %d creations; want 2000, 1000, 1000", total, len(c.opens), len(c.creates))
	}
	left, err := os.ReadDir(cfg.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("work dir not empty after the run: %v", left)
	}
}

// TestKeepLeavesFiles: with Keep the worker files stay, each holding the
// payload exactly.
func TestKeepLeavesFiles(t *testing.T) {
	cfg := testConfig(t)
	cfg.KernelEvents = 50
	cfg.Concurrency = 3
	cfg.PayloadBytes = 4096
	cfg.Keep = true
	res := mustRun(t, cfg)
	ents, err := os.ReadDir(res.WorkerDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 50 {
		t.Fatalf("%d worker files kept, want 50", len(ents))
	}
	want := makePayload(4096)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(res.WorkerDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("%s: %d bytes, not the payload", e.Name(), len(b))
		}
	}
	if _, err := os.Stat(filepath.Join(res.WorkDir, "agent", notesPath)); err != nil {
		t.Fatalf("tool workspace file not kept: %v", err)
	}
}

// TestDefaultWorkDirRemoved: without --work-dir the run uses a fresh
// temporary directory and removes it.
func TestDefaultWorkDirRemoved(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KernelEvents = 10
	res := mustRun(t, cfg)
	if !filepath.IsAbs(res.WorkDir) || !strings.HasPrefix(res.WorkerDir, res.WorkDir) {
		t.Fatalf("work_dir %q worker_dir %q", res.WorkDir, res.WorkerDir)
	}
	if _, err := os.Stat(res.WorkDir); !os.IsNotExist(err) {
		t.Fatalf("temporary work dir %s still there (err %v)", res.WorkDir, err)
	}
}

// TestFileWorkCorruptionDetected: a read-back that differs from what was
// written fails the file work.
func TestFileWorkCorruptionDetected(t *testing.T) {
	dir := t.TempDir()
	var st fileWorkStats
	payload := makePayload(64)
	// A directory where a worker file should be makes that file fail.
	if err := os.Mkdir(filepath.Join(dir, workerFileName(3)), 0o755); err != nil {
		t.Fatal(err)
	}
	err := doFileWork(context.Background(), dir, 10, 2, payload, &st)
	if err == nil || !strings.Contains(err.Error(), workerFileName(3)) {
		t.Fatalf("want an error naming %s, got %v", workerFileName(3), err)
	}
}
