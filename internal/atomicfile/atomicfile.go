// Package atomicfile writes a file so that readers see either the old
// content or the whole new one, never a part, and a failure leaves nothing
// behind: the data goes to a temporary file beside the target (named
// ".NAME.tmp-*"), is synced, and is renamed into place; then the directory
// is synced, so a write that returned nil survives a machine crash.
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

// unwrap drops the file names an error carries, so that an error names
// the target, never the temporary file.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Write writes data to path (mode 0644) through a synced temporary file
// and a rename. Errors name path, never the temporary file.
func Write(path string, data []byte) error {
	return WriteFrom(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write for output produced piece by piece: fill writes the
// content to w. When fill fails, nothing is left at path or beside it.
func WriteFrom(path string, fill func(w io.Writer) error) error {
	f, err := Open(path, Options{})
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// Create is Write with mode, for a path that must not exist yet: the
// complete file appears under path by a hard link, which fails if path
// exists, so an existing file is never replaced (a key, say).
func Create(path string, data []byte, mode os.FileMode) error {
	f, err := Open(path, Options{Mode: mode, NoReplace: true})
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// Options adjust one file; the zero value is mode 0644, replacing, synced.
type Options struct {
	// Mode is the file's permission bits; 0 means 0644, as readable as
	// any file the user writes.
	Mode os.FileMode
	// NoReplace places the file by a hard link, which fails when path
	// already exists, instead of renaming over it.
	NoReplace bool
	// Unsynced skips both syncs. It is for outputs written inside a
	// measured interval, where a sync would charge disk latency to what
	// is measured: readers still never see a part, but a machine crash
	// may lose the file.
	Unsynced bool
}

// File is a file being written: its content goes to a temporary file
// beside path, and Commit puts it in place. Until then path is untouched.
//
// The durability rule: Commit syncs the content before the rename and the
// directory after it, so once Commit returns nil the file survives a crash
// of the machine (unless Options.Unsynced).
type File struct {
	path string
	opts Options
	f    *os.File
	bw   *bufio.Writer
}

// Open checks that path can be replaced (CheckTarget) and creates the
// temporary file now, which also proves the directory is writable before
// any work starts. Errors name path.
func Open(path string, opts Options) (*File, error) {
	if err := CheckTarget(path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if opts.Mode == 0 {
		opts.Mode = 0o644
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	return &File{path: path, opts: opts, f: f, bw: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Write adds p to the content.
func (a *File) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Abort removes the temporary file; path is left as it was.
func (a *File) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// Commit puts the content in place under path. On an error before the
// rename nothing is left beside path; an error syncing the directory
// comes after the complete file is in place.
func (a *File) Commit() error {
	if err := a.commit(); err != nil {
		return fmt.Errorf("%s: %w", a.path, unwrap(err))
	}
	return nil
}

func (a *File) commit() error {
	if err := a.bw.Flush(); err != nil {
		a.Abort()
		return err
	}
	// CreateTemp makes the file 0600.
	if err := a.f.Chmod(a.opts.Mode); err != nil {
		a.Abort()
		return err
	}
	if !a.opts.Unsynced {
		if err := a.f.Sync(); err != nil {
			a.Abort()
			return err
		}
	}
	if err := a.f.Close(); err != nil {
		os.Remove(a.f.Name())
		return err
	}
	tmp := a.f.Name()
	if a.opts.NoReplace {
		if err := os.Link(tmp, a.path); err != nil {
			os.Remove(tmp)
			return err
		}
		os.Remove(tmp)
	} else if err := os.Rename(tmp, a.path); err != nil {
		os.Remove(tmp)
		return err
	}
	if a.opts.Unsynced {
		return nil
	}
	return SyncDir(filepath.Dir(a.path))
}

// Rename moves a complete file to newpath and syncs newpath's directory,
// so that the move, like a Commit, survives a crash once it returns nil.
func Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(newpath))
}

// SyncDir makes the entries of dir durable (a file created or renamed in
// it). Some file systems cannot sync a directory (EINVAL, ENOTSUP); there
// the entry is as durable as it gets, and that is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("syncing directory %s: %w", dir, unwrap(err))
	}
	return nil
}
