package spill

import (
	"bytes"
	"io"
	"syscall"
	"testing"
)

// Discarded space goes back to the file system; the rest reads as before.
func TestDiscardGivesBackSpace(t *testing.T) {
	f, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := bytes.Repeat([]byte("spill"), 400_000) // 2 MB
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	before := blocks(t, f)
	if err := f.Discard(0, 1<<20); err != nil {
		t.Fatalf("punching a hole in a file in %s: %v", f.dir, err)
	}
	after := blocks(t, f)
	if after >= before {
		t.Fatalf("%d blocks before the discard, %d after", before, after)
	}
	rest, err := io.ReadAll(f.Section(1<<20, int64(len(data))-1<<20))
	if err != nil || !bytes.Equal(rest, data[1<<20:]) {
		t.Fatalf("the rest reads back %d bytes (%v), not as written", len(rest), err)
	}
	if f.Size() != int64(len(data)) {
		t.Fatalf("size %d after the discard, want %d", f.Size(), len(data))
	}
}

func blocks(t *testing.T, f *File) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}
