// Package atomicfile writes a file so that readers see either the old
// content or the whole new one, never a part, and a failure leaves nothing
// behind: the data goes to a temporary file beside the target (named
// ".NAME.tmp-*"), is synced, and is renamed into place.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path (mode 0644) through a synced temporary file
// and a rename.
func Write(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	// CreateTemp makes the file 0600; outputs are as readable as any
	// file the user writes.
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
