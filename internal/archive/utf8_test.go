package archive

import (
	"bytes"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// File names are bytes on Linux. Two names that differ only in bytes that
// are not UTF-8 must stay two different names through an archive, and the
// run stays complete: nothing was lost.
func TestNonUTF8NamesAreLossless(t *testing.T) {
	k := evidencetest.Kernel(20, 7)
	a, b := wire.Bytes("/home/agent/bad\xffname"), wire.Bytes("/home/agent/bad\xfename")
	k[6].Open.File = &wire.ResolvedPath{Path: a}
	k[8].Open.File = &wire.ResolvedPath{Path: b}
	k[0].Comm = "\xfe"
	in := evidencetest.CleanInput()
	in.Emitted = evidence.CountKinds(k)
	bundle := evidence.Assemble(evidencetest.Run(), k, nil, in)
	var buf bytes.Buffer
	if err := Encode(&buf, bundle); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("archive of non-UTF-8 names does not verify: %v", err)
	}
	if p := got.Kernel[6].Open.File.Path; p != a {
		t.Errorf("path archived as %q, want %q", p, a)
	}
	if p := got.Kernel[8].Open.File.Path; p != b {
		t.Errorf("path archived as %q, want %q", p, b)
	}
	if c := got.Kernel[0].Comm; c != "\xfe" {
		t.Errorf("comm archived as %q", c)
	}
	if h := got.Health.KernelLayer; h.Status != wire.LayerComplete {
		t.Errorf("kernel layer %s: %v", h.Status, h.Reasons)
	}
	surface := got.Surface.FilesRead
	if !containsBytes(surface, a) || !containsBytes(surface, b) {
		t.Errorf("surface lost a name: %q", surface)
	}
}

func containsBytes(l []wire.Bytes, v wire.Bytes) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// A byte string whose text does not render its b64 bytes is rejected by
// verify, naming the kernel layer.
func TestInconsistentByteStringRejected(t *testing.T) {
	k := evidencetest.Kernel(20, 7)
	k[6].Open.File = &wire.ResolvedPath{Path: "/home/agent/bad\xffname"}
	in := evidencetest.CleanInput()
	in.Emitted = evidence.CountKinds(k)
	entries := untar(t, encode(t, evidence.Assemble(evidencetest.Run(), k, nil, in)))
	i := entryIndex(t, entries, evidence.EntryKernel)
	good := `"text":"/home/agent/bad` + "\ufffd" + `name"`
	if !strings.Contains(string(entries[i].data), good) {
		t.Fatalf("expected the object form in the kernel layer:\n%s", entries[i].data)
	}
	entries[i].data = []byte(strings.Replace(string(entries[i].data), good, `"text":"/home/agent/other"`, 1))
	remanifest(t, entries)
	mustFail(t, retar(t, entries), evidence.EntryKernel, "text")
}
