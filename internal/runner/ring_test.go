//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// A ring far too small for the event rate must lose events, count them, and
// say partial: a run that lost events is never complete.
func TestE2ETinyRingIsPartial(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	// Long paths (~1.6 KiB) make each open event large, so a 4 KiB ring
	// holds only a couple of them and the reader cannot keep up.
	work := filepath.Join(dir, "work")
	for i := 0; i < 8; i++ {
		work = filepath.Join(work, strings.Repeat(string(rune('a'+i)), 200))
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "a.tar.gz")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"record", "--run-id", "e2etinyring", "--ring-size", "4096", "--archive", arc, "--", "env",
		testenv.HelperEnv("files"), self, "3000", "2", work}
	r := runVigil(t, dir, cmd...)
	if r.code != 0 {
		t.Fatalf("exit %d, want the workload's 0; stderr: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arc)
	assertNoSessions(t, "e2etinyring")

	h := b.Health
	if h.RingbufDrops.Total == 0 {
		t.Fatalf("a 4 KiB ring under 6000 opens dropped nothing (events %d)", len(b.Kernel))
	}
	if h.KernelLayer.Status != wire.LayerPartial {
		t.Fatalf("kernel_layer %q with %d drops, want partial", h.KernelLayer.Status, h.RingbufDrops.Total)
	}
	var named bool
	for _, reason := range h.KernelLayer.Reasons {
		if strings.Contains(reason, "drop") {
			named = true
		}
	}
	if !named {
		t.Errorf("no reason names the drops: %q", h.KernelLayer.Reasons)
	}
	// Every open either reached the archive or was counted as dropped.
	var archived uint64
	for _, e := range b.Kernel {
		if e.Kind == wire.KindOpen && strings.HasPrefix(string(e.Open.Path()), work+"/") {
			archived++
		}
	}
	if got := archived + h.RingbufDrops.PerKind[wire.KindOpen]; got < 6000 {
		t.Errorf("archived + dropped worker opens = %d, want >= 6000", got)
	}
	// Counted per kind and cause: the opens were lost to a full ring.
	if c := h.RingbufDrops.Causes; c == nil || c.RingFull[wire.KindOpen] == 0 {
		t.Errorf("drop causes %+v; want ring_full opens", h.RingbufDrops.Causes)
	}
	t.Logf("%d events archived, %d dropped; peak RSS of vigil's tree %d KiB", len(b.Kernel), h.RingbufDrops.Total, r.treeMaxRSSKiB)
	if !strings.Contains(r.stderr, "partial") {
		t.Errorf("stderr does not report the partial layer: %s", r.stderr)
	}
}
