//go:build linux

package runner

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

// The kernel layer goes from the capture's sink into the archive as it
// arrives: the archive holds every event the sink was given, in order,
// though the sink's block was reused, and the health counts the events
// from outside the session cgroup (all of these: cgroup 77).
func TestRecordWritesWhatTheSinkGets(t *testing.T) {
	events := evidencetest.Kernel(3000, 0)
	b := &fakeBackend{events: events, result: &CaptureResult{
		DrainProven: true, DrainDetail: "fake", Emitted: evidence.CountKinds(events), Drops: map[wire.Kind]uint64{},
	}}
	o := fakeOptions(t, b, "true")
	o.WriteArchive = nil // the archive format itself
	o.VigilVersion = "0.0.0-test"
	o.ArchivePath = filepath.Join(t.TempDir(), "run.tar.gz")
	res, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := archive.Read(o.ArchivePath)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != len(events) || !reflect.DeepEqual(got.Kernel, events) {
		t.Fatalf("archive holds %d events (result says %d), want the %d the sink got, unchanged", len(got.Kernel), res.Events, len(events))
	}
	if n := got.Health.CgroupCorrelation.OutsideEvents; n != uint64(len(events)) {
		t.Fatalf("outside_events = %d, want %d", n, len(events))
	}
	if !reflect.DeepEqual(got.Surface.FilesWritten, evidence.BuildSurface(events).FilesWritten) || len(got.Surface.FilesWritten) == 0 {
		t.Fatalf("surface lists %d files written", len(got.Surface.FilesWritten))
	}
}
