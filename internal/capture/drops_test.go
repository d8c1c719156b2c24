//go:build linux

package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestTinyRingCountsDrops(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	c := openCapture(t, cg, 4096)
	// Paths of about 1,800 bytes: two records fill the ring, so the
	// reader cannot keep up however idle the machine is.
	dir := t.TempDir()
	for i := 0; i < 7; i++ {
		dir = filepath.Join(dir, strings.Repeat(string(rune('a'+i)), 250))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := helper(t, cg, "files", dir, "f", "5000", "4").Run(); err != nil {
		t.Fatal(err)
	}
	r := finish(t, c, cg)
	if r.Drops[wire.KindOpen] == 0 || r.RingFull[wire.KindOpen] == 0 {
		t.Errorf("drops = %v with a 4 KiB ring under 10,000 opens, want open drops", r.Drops)
	}
	if !r.DrainProven {
		t.Errorf("drain not proven: %s", r.DrainDetail)
	}
	if uint64(len(r.Events)) != totalEmitted(r) || r.Records != totalEmitted(r) {
		t.Errorf("read %d records (%d events), kernel emitted %d", r.Records, len(r.Events), totalEmitted(r))
	}
	opens := countOpens(r, dir)
	seenPlusDropped := uint64(opens[wire.AccessRead]+opens[wire.AccessWrite]) + r.Drops[wire.KindOpen]
	if seenPlusDropped < 10000 {
		t.Errorf("captured %v + dropped %d opens < the 10000 performed", opens, r.Drops[wire.KindOpen])
	}
	for _, ev := range r.Events {
		if ev.Kind == wire.KindOpen && strings.HasPrefix(string(ev.Open.Path()), dir) && (ev.Open.File == nil || ev.Open.File.Truncated || len(ev.Open.Path()) < len(dir)+7) {
			t.Fatalf("long path mangled: %+v", ev.Open)
		}
	}
	t.Logf("path bytes=%d events=%d drops=%v emitted=%v", len(dir)+7, len(r.Events), r.Drops, r.Emitted)
}
