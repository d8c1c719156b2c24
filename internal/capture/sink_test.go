//go:build linux

package capture

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// With a sink, the capture passes every event on while the run goes, in
// seq order, from reused blocks, and Finish returns once the sink has
// them all: four writers on every CPU make the kernel number records out
// of ring order now and then, and every file must be there exactly once.
func TestSinkGetsEveryEventInOrder(t *testing.T) {
	testenv.RequireRoot(t)
	cg := testCgroup(t)
	var got []wire.Kernel
	blocks := map[*wire.Kernel]bool{}
	sink := func(ev []wire.Kernel) {
		if len(ev) > 0 {
			blocks[&ev[:1][0]] = true
		}
		got = append(got, ev...) // the structs are copied; what they point to stays
	}
	c, err := Open(Config{CgroupPath: cg, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	work := t.TempDir()
	const files = 4000
	cmd := helper(t, cg, "files", work, "f", fmt.Sprint(files), "4")
	if err := cmd.Run(); err != nil {
		t.Fatalf("files helper: %v", err)
	}
	r := finish(t, c, cg)
	if r.Events != nil {
		t.Fatalf("Finish returned %d events although the sink took them", len(r.Events))
	}
	r.Events = got
	checkComplete(t, r)
	written := map[string]int{}
	for _, ev := range got {
		if ev.Open != nil && ev.Open.File != nil && ev.Open.Create {
			p := string(ev.Open.File.Path)
			if strings.HasPrefix(p, work+"/") {
				written[filepath.Base(p)]++
			}
		}
	}
	if len(written) != files {
		t.Fatalf("the sink saw %d of %d files created", len(written), files)
	}
	for name, n := range written {
		if n != 1 {
			t.Fatalf("%s created %d times", name, n)
		}
	}
	if len(blocks) >= len(got)/blockEvents {
		t.Errorf("%d events came in %d distinct blocks: blocks are not reused", len(got), len(blocks))
	}
	t.Logf("%d events in %d distinct blocks", len(got), len(blocks))
}
