package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// fileWorkStats counts what the worker-file phase did. Opens counts every
// open attempt on a worker path, because the kernel sees failed opens too.
type fileWorkStats struct {
	opens, written, read    atomic.Int64
	bytesWritten, bytesRead atomic.Int64
}

// workerFileName is the name of worker file i.
func workerFileName(i int) string { return fmt.Sprintf("w-%07d", i) }

// doFileWork creates n files under dir, each written with
// O_CREAT|O_TRUNC|O_WRONLY and then read back with O_RDONLY: exactly two
// opens per file and no other opens of those paths. concurrency workers
// share the files. The first error stops the remaining work.
func doFileWork(ctx context.Context, dir string, n, concurrency int, payload []byte, st *fileWorkStats) error {
	if n == 0 {
		return nil
	}
	if concurrency > n {
		concurrency = n
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		failed   atomic.Bool
	)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, len(payload)+1)
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err == nil {
					err = oneWorkerFile(filepath.Join(dir, workerFileName(i)), payload, buf, st)
					if err == nil {
						continue
					}
					errOnce.Do(func() { firstErr = err })
				} else {
					errOnce.Do(func() { firstErr = err })
				}
				failed.Store(true)
				return
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func oneWorkerFile(path string, payload, buf []byte, st *fileWorkStats) error {
	st.opens.Add(1)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	nw, err := f.Write(payload)
	st.bytesWritten.Add(int64(nw))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	st.written.Add(1)

	st.opens.Add(1)
	f, err = os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	// buf is one byte longer than the payload so a longer file shows up.
	nr, err := io.ReadFull(f, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	st.bytesRead.Add(int64(nr))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Equal(buf[:nr], payload) {
		return fmt.Errorf("read %s: got %d bytes that differ from the %d written", path, nr, len(payload))
	}
	st.read.Add(1)
	return nil
}

// removeWorkerFiles unlinks the n worker files by name and then the
// directory, so cleanup opens none of them (os.RemoveAll would open the
// directory to list it). Missing files are fine; anything else is returned.
func removeWorkerFiles(dir string, n int) error {
	var first error
	for i := 0; i < n; i++ {
		if err := os.Remove(filepath.Join(dir, workerFileName(i))); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
		first = err
	}
	return first
}
