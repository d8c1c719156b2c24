package spill

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// File is an anonymous scratch file that only grows: data is appended and
// read back by offset. It is safe for concurrent use; a piece is
// contiguous only when one Write or Append wrote it.
type File struct {
	f   *os.File
	dir string
	mu  sync.Mutex
	end int64
}

// Create makes an anonymous file in dir ("" for os.TempDir()). It is gone
// once closed, or once the process ends.
func Create(dir string) (*File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := createAnonymous(dir)
	if err != nil {
		return nil, fmt.Errorf("spill: create a scratch file in %s: %w", dir, err)
	}
	return &File{f: f, dir: dir}, nil
}

// Write appends p, so that a bufio.Writer can sit on a File.
func (f *File) Write(p []byte) (int, error) {
	_, n, err := f.append(p)
	return n, err
}

// Append appends p and returns where it starts.
func (f *File) Append(p []byte) (int64, error) {
	off, _, err := f.append(p)
	return off, err
}

func (f *File) append(p []byte) (int64, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	off := f.end
	n, err := f.f.WriteAt(p, off)
	f.end += int64(n)
	if err != nil {
		return off, n, fmt.Errorf("spill: write to the scratch file in %s: %w", f.dir, err)
	}
	return off, n, nil
}

// Size is how many bytes were appended.
func (f *File) Size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.end
}

// Section reads the n bytes from off.
func (f *File) Section(off, n int64) io.Reader {
	return &sectionReader{r: io.NewSectionReader(f.f, off, n), dir: f.dir}
}

// Discard gives back the space of n bytes from off, which will not be
// read again, by punching a hole; the file's size and offsets stay as
// they were. A file system without holes keeps the bytes (the error says
// so; the file is as good as before).
func (f *File) Discard(off, n int64) error { return discard(f.f, off, n) }

// Close releases the file and its space; a nil File has nothing to close.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	return f.f.Close()
}

// sectionReader names the file in a read error.
type sectionReader struct {
	r   *io.SectionReader
	dir string
}

func (s *sectionReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("spill: read the scratch file in %s: %w", s.dir, err)
	}
	return n, err
}
