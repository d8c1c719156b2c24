package spill

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Appended data reads back by offset, and the directory never holds a
// name for the file, open or closed.
func TestAppendAndReadBack(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := range 100 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i*37)
		off, size := f.Size(), int64(len(p))
		if _, err := f.Write(p); err != nil {
			t.Fatal(err)
		}
		want.Write(p)
		got, err := io.ReadAll(f.Section(off, size))
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("piece %d: read back %d bytes (%v), want %d", i, len(got), err, len(p))
		}
	}
	if f.Size() != int64(want.Len()) {
		t.Fatalf("size %d, want %d", f.Size(), want.Len())
	}
	all, err := io.ReadAll(f.Section(0, f.Size()))
	if err != nil || !bytes.Equal(all, want.Bytes()) {
		t.Fatalf("whole file: %d bytes (%v), want %d", len(all), err, want.Len())
	}
	assertEmpty(t, dir)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
}

// The fallback for file systems without O_TMPFILE leaves no name either.
func TestCreateRemovedLeavesNoName(t *testing.T) {
	dir := t.TempDir()
	f, err := createRemoved(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("x"); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
	// The name it had for a moment is one a later process cleans up.
	if m := NamePattern.FindStringSubmatch(filepath.Base(f.Name())); m == nil || m[1] != strconv.Itoa(os.Getpid()) {
		t.Fatalf("name %s does not match %v with this pid", f.Name(), NamePattern)
	}
}

// A directory that cannot hold the file is named in the error.
func TestCreateNamesTheDirectory(t *testing.T) {
	dir := t.TempDir() + "/missing"
	_, err := Create(dir)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Create(%s) = %v, want an error naming it", dir, err)
	}
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("%s holds %d names (first %s), want none", dir, len(ents), ents[0].Name())
	}
}
