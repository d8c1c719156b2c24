// Package atomicfile writes a file so that readers see either the old
// content or the whole new one, never a part, and a failure leaves nothing
// behind: the data goes to a temporary file beside the target (named
// ".NAME.tmp-*"), is synced, and is renamed into place.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckTarget reports why path cannot be replaced by a new regular file:
// it is a directory, a symbolic link, a device, FIFO or socket (replacing
// it would destroy it, not write to it), or its directory is missing or
// not writable. The error does not repeat path.
func CheckTarget(path string) error {
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New("is a directory")
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return errors.New("is a symbolic link; outputs are replaced, not written through, so name the file itself")
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("is not a regular file (%s); outputs are replaced, not written through", kind(st.Mode()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return unwrap(err)
	}
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	if err == nil && !dst.IsDir() {
		err = syscall.ENOTDIR
	}
	if err == nil {
		err = dirWritable(dir)
	}
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %v", dir, unwrap(err))
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Write writes data to path (mode 0644) through a synced temporary file
// and a rename. Errors name path, never the temporary file.
func Write(path string, data []byte) error {
	if err := CheckTarget(path); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return WriteFrom(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write for output produced piece by piece: fill writes the
// content to w. When fill fails, nothing is left at path or beside it.
func WriteFrom(path string, fill func(w io.Writer) error) error {
	if err := CheckTarget(path); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := write(path, fill, 0o644, os.Rename); err != nil {
		return fmt.Errorf("%s: %v", path, unwrap(err))
	}
	return nil
}

// Create is Write with mode, for a path that must not exist yet: the
// complete file appears under path by a hard link, which fails if path
// exists, so an existing file is never replaced (a key, say).
func Create(path string, data []byte, mode os.FileMode) error {
	link := func(tmp, path string) error {
		if err := os.Link(tmp, path); err != nil {
			return err
		}
		return os.Remove(tmp)
	}
	fill := func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
	if err := write(path, fill, mode, link); err != nil {
		return fmt.Errorf("%s: %v", path, unwrap(err))
	}
	return nil
}

func write(path string, fill func(io.Writer) error, mode os.FileMode, place func(tmp, path string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fill(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	// CreateTemp makes the file 0600; outputs are as readable as any
	// file the user writes, unless mode says otherwise.
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := place(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
