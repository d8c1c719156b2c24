package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"vigil/internal/attest"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/spill"
)

// rawEntry is a tar entry as found, without any of Decode's checks.
type rawEntry struct {
	hdr  tar.Header
	data []byte
}

func encode(t testing.TB, b *evidence.Bundle) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func untar(t testing.TB, archive []byte) []rawEntry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []rawEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rawEntry{*h, data})
	}
}

// retar writes entries back exactly as given (sizes follow the data).
func retar(t testing.TB, entries []rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, CompressionLevel)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// remanifest rewrites manifest.json (entries[0]) so that its hashes and
// sizes match the other entries: only the content checks can then object.
func remanifest(t testing.TB, entries []rawEntry) {
	t.Helper()
	var m Manifest
	if err := json.Unmarshal(entries[0].data, &m); err != nil {
		t.Fatal(err)
	}
	m.Entries = nil
	for _, e := range entries[1:] {
		sum := sha256.Sum256(e.data)
		m.Entries = append(m.Entries, ManifestEntry{Path: e.hdr.Name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(e.data))})
	}
	data, err := marshalDoc(&m)
	if err != nil {
		t.Fatal(err)
	}
	entries[0].data = data
}

func entryIndex(t testing.TB, entries []rawEntry, name string) int {
	t.Helper()
	for i, e := range entries {
		if e.hdr.Name == name {
			return i
		}
	}
	t.Fatalf("no entry %s", name)
	return -1
}

// mustFail decodes archive and requires an *evidence.EntryError for entry
// whose one-line message contains every want.
func mustFail(t testing.TB, archive []byte, entry string, want ...string) {
	t.Helper()
	_, err := Decode(bytes.NewReader(archive))
	if err == nil {
		t.Fatalf("archive accepted; want a failure naming %q", entry)
	}
	// Folding the kernel layer instead of keeping it finds the same, in
	// memory or with the surface and paths in a scratch file.
	for _, fold := range []*folding{{}, scratchFolding(t)} {
		if _, ferr := decode(bytes.NewReader(archive), fold); ferr == nil || ferr.Error() != err.Error() {
			t.Fatalf("keeping the events: %v; folding them (scratch file %v): %v", err, fold.scratch != nil, ferr)
		}
	}
	var ee *evidence.EntryError
	if !errors.As(err, &ee) {
		t.Fatalf("error %v (%T) is not an EntryError", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Fatalf("error spans lines: %q", msg)
	}
	if ee.Entry != entry {
		t.Fatalf("error %q names entry %q, want %q", msg, ee.Entry, entry)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Fatalf("error %q lacks %q", msg, w)
		}
	}
}

// signerAndAbsent is a fresh signing key and the bundle of a run recorded
// without kernel capture (an empty kernel layer).
func signerAndAbsent(t testing.TB) (*attest.Key, *evidence.Bundle) {
	t.Helper()
	priv, _, _, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := attest.ParseKey("signer.key", priv)
	if err != nil {
		t.Fatal(err)
	}
	in := evidencetest.CleanInput()
	in.CaptureAvailable, in.AbsentReason = false, "no BPF"
	return key, evidence.Assemble(evidencetest.Run(), nil, nil, in)
}

// scratchFolding folds as OpenDigest does, into a scratch file removed
// with the test.
func scratchFolding(t testing.TB) *folding {
	t.Helper()
	f, err := spill.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &folding{scratch: f}
}

// surfaceWithPaths is b's surface with the path lists its digest gives
// (Bundle.WholeSurface).
func surfaceWithPaths(t testing.TB, b *evidence.Bundle) evidence.CapabilitySurface {
	t.Helper()
	s, err := b.WholeSurface()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
