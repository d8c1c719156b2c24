package archive

import (
	"bytes"
	"compress/flate"
	"io"
	"runtime"
	"testing"
)

// A segment writer starts a compressor per segment it is given, up to one
// per CPU: a small entry takes one, and the segments still make one
// deflate stream.
func TestSegmentWriterStartsWorkersAsNeeded(t *testing.T) {
	const size = 1 << 12
	// More CPUs than this host may have, so that starting them all at
	// once would show.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	cpus := 4
	for _, n := range []int{1, size, 3*size + 5, (cpus + 2) * size} {
		w := newSegmentWriter(size)
		data := bytes.Repeat([]byte("vigil "), n/6+1)[:n]
		w.write(data)
		segs, err := w.close(true)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(len(segs), cpus); w.started != want {
			t.Errorf("%d bytes in %d segments started %d compressors, want %d", n, len(segs), w.started, want)
		}
		var z bytes.Buffer
		for _, s := range segs {
			z.Write(s.out)
		}
		got, err := io.ReadAll(flate.NewReader(&z))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: the segments inflate to %d bytes (%v)", n, len(got), err)
		}
	}
}
