package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/iotest"
	"time"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
)

// readAhead gives the entry's bytes in order, however they are asked for.
func TestReadAheadGivesTheEntry(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 1000, aheadChunkBytes - 1, aheadChunkBytes, 3*aheadChunkBytes + 17} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		// One byte per Read: the reader must gather each chunk.
		a := readAhead(iotest.OneByteReader(bytes.NewReader(data)), int64(size))
		var got []byte
		for len(got) < size {
			p := make([]byte, min(size-len(got), 1+rng.IntN(2*aheadChunkBytes)))
			if err := a.readFull(p); err != nil {
				t.Fatalf("size %d: after %d bytes: %v", size, len(got), err)
			}
			got = append(got, p...)
		}
		a.close()
		if !bytes.Equal(got, data) {
			t.Fatalf("size %d: bytes differ", size)
		}
	}
}

// An entry shorter than declared ends as io.ReadFull on it would; any
// other read error is passed on.
func TestReadAheadShortAndFailingEntries(t *testing.T) {
	data := bytes.Repeat([]byte("x"), aheadChunkBytes+10)
	a := readAhead(bytes.NewReader(data), int64(len(data))+5)
	if err := a.readFull(make([]byte, len(data)+5)); err != io.ErrUnexpectedEOF {
		t.Errorf("short entry read whole: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	a.close()

	a = readAhead(bytes.NewReader(data), int64(len(data))+5)
	if err := a.readFull(make([]byte, len(data))); err != nil {
		t.Fatal(err)
	}
	if err := a.readFull(make([]byte, 5)); err != io.ErrUnexpectedEOF {
		t.Errorf("read past a short entry's end: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	a.close()

	// An entry that ends where a chunk would start: the reader said EOF.
	even := data[:aheadChunkBytes]
	a = readAhead(bytes.NewReader(even), int64(len(even))+5)
	if err := a.readFull(make([]byte, len(even))); err != nil {
		t.Fatal(err)
	}
	if err := a.readFull(make([]byte, 5)); err != io.EOF {
		t.Errorf("read past an entry ending on a chunk: %v, want %v", err, io.EOF)
	}
	a.close()

	// A tar entry cut short says so itself; that is what readFull says.
	a = readAhead(io.MultiReader(bytes.NewReader(even), iotest.ErrReader(io.ErrUnexpectedEOF)), int64(len(even))+5)
	if err := a.readFull(make([]byte, len(even)+5)); err != io.ErrUnexpectedEOF {
		t.Errorf("cut tar entry: %v, want %v", err, io.ErrUnexpectedEOF)
	}
	a.close()

	broken := errors.New("disk on fire")
	a = readAhead(io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(broken)), int64(len(data)))
	if err := a.readFull(make([]byte, len(data))); !errors.Is(err, broken) {
		t.Errorf("failing entry: %v, want %v", err, broken)
	}
	a.close()
}

// Closing before the entry is read stops the goroutine, which must not
// hold r after close returns.
func TestReadAheadCloseEarly(t *testing.T) {
	data := make([]byte, 10*aheadChunkBytes)
	a := readAhead(bytes.NewReader(data), int64(len(data)))
	if err := a.readFull(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	a.close()
	select {
	case <-a.done:
	default:
		t.Fatal("goroutine still running after close")
	}
	a.close() // again: nothing
}

// Reading an entry starts a reader and a folder beside the checker; no
// path out of readEntry, a bad line early on included, leaves them
// running.
func TestReadEntryLeavesNoGoroutine(t *testing.T) {
	text := appendKernels(nil, evidencetest.Kernel(6*batchLines, 0))
	bad := bytes.Clone(text)
	// Past the first batch (so one is folding), well before the end (so
	// the reader has more to read).
	mid := bytes.IndexByte(bad[len(bad)/3:], '\n') + len(bad)/3 + 1
	copy(bad[mid:], `{"seq":"x"`)
	before := runtime.NumGoroutine()
	for _, c := range []struct {
		name string
		data []byte
		size int64
	}{{"whole", text, int64(len(text))}, {"bad line", bad, int64(len(bad))}, {"cut short", text[:len(text)/2], int64(len(text))}} {
		_, err := readEntry(bytes.NewReader(c.data), evidence.EntryKernel, c.size, &folding{}, false)
		if (err == nil) != (c.name == "whole") {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	// Goroutines the runtime or the test framework started meanwhile
	// settle within this wait too.
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before reading, %d after", before, n)
	}
}

// readEntry's hash is the entry's, however many pieces it takes and
// whichever way it keeps them: the kernel layer (compacted as it goes),
// and the surface kept in memory or spooled to a scratch file.
func TestReadEntryHashesEveryPiece(t *testing.T) {
	kernel := appendKernels(nil, evidencetest.Kernel(2*pieceBytes/200+batchLines, 0))
	if len(kernel) <= 2*pieceBytes {
		t.Fatalf("kernel entry of %d bytes: want more than two pieces", len(kernel))
	}
	surface := bytes.Repeat([]byte("x"), pieceBytes+17)
	for _, c := range []struct {
		name string
		data []byte
		fold *folding
	}{
		{evidence.EntryKernel, kernel, &folding{}},
		{evidence.EntryKernel, kernel, nil},
		{evidence.EntrySurface, surface, scratchFolding(t)},
		{evidence.EntrySurface, surface, nil},
	} {
		f, err := readEntry(bytes.NewReader(c.data), c.name, int64(len(c.data)), c.fold, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := sha256.Sum256(c.data); *f.sum != want || f.n != int64(len(c.data)) {
			t.Errorf("%s (folding %v): hash or size is not the entry's", c.name, c.fold != nil)
		}
	}
}
