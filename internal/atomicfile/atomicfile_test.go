//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.html")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	st, _ := os.Stat(p)
	if err != nil || string(data) != "new" || st.Mode().Perm() != 0o644 {
		t.Fatalf("content %q, mode %v, err %v", data, st.Mode(), err)
	}
	// A failed write (the target is a directory) leaves no temporary file.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(sub, []byte("x")); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestWriteRefusesWhatItWouldDestroy(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"/dev/null":                             "a character device",
		fifo:                                    "a FIFO",
		link:                                    "symbolic link",
		dir:                                     "is a directory",
		filepath.Join(dir, "missing", "x.html"): "directory " + filepath.Join(dir, "missing") + " is not writable",
	}
	for path, want := range cases {
		err := Write(path, []byte("x"))
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), ".tmp-") {
			t.Errorf("Write(%s) = %v, want an error naming it and %q", path, err, want)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}

func TestCreateNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k.key")
	if err := Create(p, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	err := Create(p, []byte("second"), 0o600)
	if err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), "file exists") || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("second Create = %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "first" {
		t.Fatalf("content %q", data)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("left behind: %v", names)
	}
}

// TestWriteFromFailureLeavesNothing: when the producer fails halfway,
// neither the target nor a temporary file is left, and an existing file
// keeps its content.
func TestWriteFromFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	fill := func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 200<<10)); err != nil {
			return err
		}
		return errors.New("producer failed")
	}
	if err := WriteFrom(path, fill); err == nil || !strings.Contains(err.Error(), "producer failed") {
		t.Fatalf("err %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFrom(path, fill); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("existing file now %q", b)
	}
	if err := WriteFrom(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file %q, want new", b)
	}
}

// TestOpenCommitAbort: an opened file is invisible under its path until
// Commit, an aborted one leaves nothing, and Mode and Rename do what they say.
func TestOpenCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	for _, unsynced := range []bool{false, true} {
		f, err := Open(path, Options{Mode: 0o640, Unsynced: unsynced})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(f, "line\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("unsynced=%v: path exists before Commit: %v", unsynced, err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if b, _ := os.ReadFile(path); err != nil || string(b) != "line\n" || st.Mode().Perm() != 0o640 {
			t.Fatalf("unsynced=%v: content %q, mode %v, err %v", unsynced, b, st.Mode(), err)
		}
		os.Remove(path)
	}

	f, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "partial")
	f.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Abort left: %v", ents)
	}

	if _, err := Open(filepath.Join(dir, "missing", "x"), Options{}); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("Open in a missing directory = %v", err)
	}

	src := filepath.Join(dir, "a")
	if err := os.WriteFile(src, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rename(src, path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a" {
		t.Fatalf("renamed file holds %q", b)
	}
	if err := Rename(src, path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Rename of a missing file = %v", err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}
