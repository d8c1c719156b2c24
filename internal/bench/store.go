//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"vigil/internal/atomicfile"
	"vigil/internal/wire"
)

// Store appends samples to samples.jsonl, one whole line per write,
// fsynced before the next sample starts: a crash loses at most the sample
// being measured, never a recorded one.
type Store struct {
	f *os.File
}

// OpenStore opens dir/samples.jsonl for appending and returns the samples
// already in it. A final line without its newline (a write cut short by a
// crash) is removed and its length returned as torn, so the caller can
// report it; any other unparseable line is an error.
func OpenStore(dir string) (st *Store, existing []wire.Sample, torn int, err error) {
	path := filepath.Join(dir, SamplesFile)
	data, err := os.ReadFile(path)
	created := os.IsNotExist(err)
	if err != nil && !created {
		return nil, nil, 0, err
	}
	existing, good, err := ParseSamples(data)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	torn = len(data) - good
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, 0, err
	}
	// A new file's name must be as durable as the lines synced into it.
	if created {
		if err := atomicfile.SyncDir(dir); err != nil {
			f.Close()
			return nil, nil, 0, err
		}
	}
	if torn > 0 {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, nil, 0, err
		}
	}
	if _, err := f.Seek(int64(good), 0); err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	return &Store{f: f}, existing, torn, nil
}

// ParseSamples decodes complete lines of samples.jsonl and returns how
// many bytes they span; trailing bytes without a newline are not counted.
func ParseSamples(data []byte) ([]wire.Sample, int, error) {
	var out []wire.Sample
	off := 0
	for line := 1; off < len(data); line++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		var s wire.Sample
		dec := json.NewDecoder(bytes.NewReader(data[off : off+i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, 0, fmt.Errorf("line %d: %v", line, err)
		}
		if s.Schema != wire.SampleSchema {
			return nil, 0, fmt.Errorf("line %d: schema %q, want %q", line, s.Schema, wire.SampleSchema)
		}
		out = append(out, s)
		off += i + 1
	}
	return out, off, nil
}

// Append writes one sample as a line and syncs it to disk.
func (s *Store) Append(smp wire.Sample) error {
	data, err := json.Marshal(smp)
	if err != nil {
		return err
	}
	if _, err := s.f.Write(append(data, '\n')); err != nil {
		return err
	}
	return s.f.Sync()
}

// Close closes the file.
func (s *Store) Close() error { return s.f.Close() }
