package workload

import (
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/atomicfile"
)

// atomicFile is written under a temporary name in the destination's
// directory and renamed into place on Commit, so readers never see a
// partial file and a failed run leaves none behind.
type atomicFile struct {
	path string
	f    *os.File
}

// createAtomic creates the temporary file now, which also proves the
// destination directory is writable before any work starts.
func createAtomic(path string) (*atomicFile, error) {
	if err := atomicfile.CheckTarget(path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &atomicFile{path: path, f: f}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) { return a.f.Write(p) }

// Commit closes the file and renames it to its final name. It does not
// fsync: the rename already hides partial files from readers, and a sync
// would add disk latency to every traced run being measured.
func (a *atomicFile) Commit() error {
	err := a.f.Close()
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.f.Name())
	}
	return err
}

// Abort removes the temporary file.
func (a *atomicFile) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// WriteFileAtomic writes data to path via a temporary file and a rename.
func WriteFileAtomic(path string, data []byte) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return err
	}
	return a.Commit()
}
