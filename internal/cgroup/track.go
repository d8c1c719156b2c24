//go:build linux

package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tracker remembers the cgroup id of every sub-cgroup created below a
// session while it runs, including ones removed before the run ends (a
// nested vigil's own session, a container runtime's scope). Without it,
// events from such a cgroup could not be told from events of a cgroup
// outside the session. A sub-cgroup created and removed again before the
// tracker can look at it stays unknown; its events then count as outside,
// which errs toward reporting, never toward hiding.
type tracker struct {
	fd int // raw descriptor; f.Fd() would switch f to blocking mode
	f  *os.File

	mu   sync.Mutex // serializes reading the queue and the maps
	ids  map[uint64]bool
	dirs map[int32]string // watch descriptor -> directory
	buf  []byte
}

const trackMask = unix.IN_CREATE | unix.IN_ONLYDIR

func startTracker(root string) (*tracker, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	t := &tracker{
		fd:   fd,
		f:    os.NewFile(uintptr(fd), "inotify"),
		ids:  map[uint64]bool{},
		dirs: map[int32]string{},
		buf:  make([]byte, 64<<10),
	}
	t.mu.Lock()
	err = t.add(root)
	t.mu.Unlock()
	if err != nil {
		t.f.Close()
		return nil, err
	}
	rc, err := t.f.SyscallConn()
	if err != nil {
		t.f.Close()
		return nil, err
	}
	// Whenever the queue becomes readable, process it; returning false
	// goes back to waiting. Read returns once the file is closed.
	go rc.Read(func(uintptr) bool {
		t.mu.Lock()
		t.drain()
		t.mu.Unlock()
		return false
	})
	return t, nil
}

// add watches dir and everything already below it, recording their ids.
// Watching before walking means nothing created in between is missed.
// The caller holds mu.
func (t *tracker) add(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		wd, err := unix.InotifyAddWatch(t.fd, p, trackMask)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return fs.SkipDir // removed meanwhile
			}
			return err
		}
		id, err := ID(p)
		if err != nil {
			return nil // removed meanwhile
		}
		t.dirs[int32(wd)] = p
		t.ids[id] = true
		return nil
	})
}

// drain processes every queued event without blocking. The caller holds mu.
func (t *tracker) drain() {
	for {
		n, err := unix.Read(t.fd, t.buf)
		if err != nil || n <= 0 {
			return // EAGAIN: queue empty
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&t.buf[off]))
			name := t.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_CREATE == 0 || ev.Mask&unix.IN_ISDIR == 0 {
				continue
			}
			if parent, ok := t.dirs[ev.Wd]; ok {
				// An error means the new cgroup is already gone.
				_ = t.add(filepath.Join(parent, unix.ByteSliceToString(name)))
			}
		}
	}
}

// snapshot processes what is queued and returns the ids seen so far.
func (t *tracker) snapshot() map[uint64]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drain()
	out := make(map[uint64]bool, len(t.ids))
	for id := range t.ids {
		out[id] = true
	}
	return out
}

// stop ends tracking. Closing an inotify instance waits for an SRCU grace
// period, which nobody needs to wait for, so it happens in the background.
func (t *tracker) stop() {
	go t.f.Close()
}
