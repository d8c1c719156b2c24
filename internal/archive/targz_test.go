package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"vigil/internal/attest"
	"vigil/internal/evidence/evidencetest"
)

// The segmented stream is one gzip member holding exactly the tar stream
// that archive/tar writes for the same entries, under the header that
// compress/gzip writes, whatever the number of segments.
func TestSegmentedStreamIsThePlainTar(t *testing.T) {
	for _, n := range []int{10, 120, 20000} {
		b := evidencetest.Bundle(n, 3)
		files, err := marshalEntries(b)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		tw := tar.NewWriter(&want)
		for _, f := range files {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.path, Mode: entryMode,
				Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
				t.Fatal(err)
			}
			tw.Write(f.data)
		}
		tw.Close()
		if segs := len(cut([][]byte{want.Bytes()}, SegmentBytes)); n == 20000 && segs < 3 {
			t.Fatalf("%d events make %d segments: the test does not cover several", n, segs)
		}

		data := encode(t, b)
		var ref bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&ref, CompressionLevel)
		gz.Close()
		if !bytes.Equal(data[:10], ref.Bytes()[:10]) {
			t.Fatalf("gzip header % x, compress/gzip writes % x", data[:10], ref.Bytes()[:10])
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d events: %v", n, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%d events: the decompressed stream (%d bytes) is not the tar archive/tar writes (%d bytes)", n, len(got), want.Len())
		}
	}
}

func TestCut(t *testing.T) {
	pieces := [][]byte{[]byte("abc"), nil, []byte("defgh"), []byte("i")}
	var got []string
	for _, seg := range cut(pieces, 4) {
		got = append(got, string(bytes.Join(seg, nil)))
	}
	if want := []string{"abcd", "efgh", "i"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("cut = %q, want %q", got, want)
	}
	if segs := cut(nil, 4); len(segs) != 1 || len(segs[0]) != 0 {
		t.Fatalf("cut(nil) = %v, want one empty segment", segs)
	}
}

// TestStreamingEncodeIsTheSameArchive: the streaming encoder writes the
// same bytes as encoding everything first and compressing it at once,
// for empty, small and multi-segment kernel layers, signed or not.
func TestStreamingEncodeIsTheSameArchive(t *testing.T) {
	key, absent := signerAndAbsent(t)
	for _, n := range []int{0, 120, 20000, 60000} {
		for _, k := range []*attest.Key{nil, key} {
			b := absent
			if n > 0 {
				b = evidencetest.Bundle(n, 3)
			}
			pieces, err := encodeArchive(b, nil, k)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := pieces.writeTo(&buf); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			want, err := encodeArchiveAtOnce(b, k)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d events, signed %v: streaming wrote %d bytes, at once %d, first difference at %d",
					len(b.Kernel), k != nil, len(got), len(want), firstDiffAt(got, want))
			}
		}
	}
}

func firstDiffAt(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
