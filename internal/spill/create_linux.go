package spill

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// createAnonymous opens an O_TMPFILE file, which never has a name. A file
// system without O_TMPFILE gets a named file removed at once.
func createAnonymous(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		return createRemoved(dir)
	}
	return nil, err
}

func discard(f *os.File, off, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}
