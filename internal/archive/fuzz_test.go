package archive

import (
	"bytes"
	"strings"
	"testing"

	"vigil/internal/evidence/evidencetest"
)

// An archive is untrusted input: any bytes are either a bundle or a
// one-line error, never a panic.
func FuzzDecode(f *testing.F) {
	var good bytes.Buffer
	if err := Encode(&good, evidencetest.Bundle(12, 1)); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// What decodes must encode back to the same bytes (archives are
		// canonical), so nothing was accepted that verify would not write.
		var again bytes.Buffer
		if err := Encode(&again, b); err != nil {
			t.Fatalf("decoded bundle does not encode: %v", err)
		}
	})
}

// A gzip stream whose trailer does not match says so once, in one line.
func TestBadGzipChecksumSaysGzipOnce(t *testing.T) {
	var good bytes.Buffer
	if err := Encode(&good, evidencetest.Bundle(12, 1)); err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(good.Bytes())
	data[len(data)-8] ^= 0xff // the CRC-32 of the trailer
	_, err := Decode(bytes.NewReader(data))
	if err == nil || strings.Count(err.Error(), "gzip") != 1 || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("error %v: want one mention of gzip and the checksum", err)
	}
}
