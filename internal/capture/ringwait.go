//go:build linux

package capture

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ringWaiter parks the reader in Go's network poller until the ring's
// descriptor is readable, instead of in ringbuf.Reader's own blocking
// epoll_wait. A goroutine blocked in a system call holds an OS thread, and
// the runtime's monitor takes its P away after 20 µs and keeps polling at
// that rate while it happens again and again; under a busy run the monitor's
// wake-ups and the thread hand-offs cost vigil more CPU than its reads do.
// A goroutine parked in the poller costs nothing until the kernel wakes the
// ring's wait queue (or the deadline passes).
type ringWaiter struct {
	f  *os.File
	rc syscall.RawConn
	// mu orders the ready checks against interrupt: once interrupt has
	// returned, ready is never called again, so the caller may then free
	// what ready reads (the ring reader's mapping).
	mu      sync.Mutex
	stopped bool
}

// newRingWaiter waits on a duplicate of the ring's descriptor fd, which it
// owns. It fails when the descriptor cannot be polled by the runtime; the
// reader then blocks in ringbuf.Reader as before.
func newRingWaiter(fd int) (*ringWaiter, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicate ring descriptor: %w", err)
	}
	// The flag is on the shared file description; the ring's own reads
	// (mmap, epoll) do not look at it.
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return nil, fmt.Errorf("ring descriptor non-blocking: %w", err)
	}
	f := os.NewFile(uintptr(dup), "ringbuf")
	// A descriptor the poller refused takes no deadline.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("ring descriptor not pollable: %w", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &ringWaiter{f: f, rc: rc}, nil
}

// wait returns once ready reports true, d has passed or interrupt was
// called. ready is checked first, then each time the kernel wakes the
// ring's wait queue.
func (w *ringWaiter) wait(d time.Duration, ready func() bool) {
	// The deadline is set before stopped is read, and interrupt does the
	// opposite: one of the two sees the other.
	if w.f.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	_ = w.rc.Read(func(uintptr) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.stopped || ready()
	})
}

// interrupt ends the current wait, and every later one at once. When it
// returns, no ready check is running or will run.
func (w *ringWaiter) interrupt() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	_ = w.f.SetReadDeadline(time.Unix(1, 0))
}

func (w *ringWaiter) close() error { return w.f.Close() }
