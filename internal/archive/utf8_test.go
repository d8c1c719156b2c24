package archive

import (
	"bytes"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
)

// A file name that is not UTF-8 is legal on Linux. The archive of a run
// that opened one must still verify, and say what it changed.
func TestNonUTF8PathArchivesAndVerifies(t *testing.T) {
	k := evidencetest.Kernel(20, 7)
	k[5].Open.Path = "bad\xffname"
	k[0].Comm = "\xfe"
	b := evidence.Assemble(evidencetest.Run(), k, nil, evidencetest.CleanInput())
	if k[5].Open.Path != "bad\xffname" || k[0].Comm != "\xfe" {
		t.Fatal("Assemble changed the caller's events")
	}
	var buf bytes.Buffer
	if err := Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("archive of a non-UTF-8 path does not verify: %v", err)
	}
	h := got.Health
	if h.NonUTF8Events != 2 || h.KernelLayer.Status != evidence.LayerPartial ||
		!strings.Contains(strings.Join(h.KernelLayer.Reasons, ";"), "2 events carry a string that is not valid UTF-8") {
		t.Fatalf("health: non_utf8_events %d, kernel_layer %+v", h.NonUTF8Events, h.KernelLayer)
	}
	if p := got.Kernel[5].Open.Path; p != "bad\uFFFDname" {
		t.Fatalf("path archived as %q", p)
	}
}
