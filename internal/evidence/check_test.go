package evidence_test

import (
	"errors"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func TestAssembleIsConsistent(t *testing.T) {
	for _, calls := range []int{0, 3} {
		b := evidencetest.Bundle(50, calls)
		if err := evidence.Check(b); err != nil {
			t.Fatalf("calls=%d: %v", calls, err)
		}
		if b.Health.KernelLayer.Status != wire.LayerComplete {
			t.Fatalf("fixture not complete: %v", b.Health.KernelLayer.Reasons)
		}
		if (b.Correlation != nil) != (calls > 0) {
			t.Fatalf("calls=%d: correlation present = %v", calls, b.Correlation != nil)
		}
	}
}

func TestAssembleDerivesFromEvents(t *testing.T) {
	k := evidencetest.Kernel(20, 0)
	k = append(k[:5], k[7:]...) // lose seqs 5 and 6
	k[0], k[len(k)-1] = k[len(k)-1], k[0]
	in := evidencetest.CleanInput()
	in.Counts = map[wire.Kind]uint64{wire.KindOpen: 999} // ignored: Assemble counts
	run := evidencetest.Run()
	run.EnvNames = []string{"PATH", "SECRET=hunter2", "HOME", "PATH"}
	b := evidence.Assemble(run, k, nil, in)
	for i := 1; i < len(b.Kernel); i++ {
		if b.Kernel[i].Seq <= b.Kernel[i-1].Seq {
			t.Fatal("kernel events not sorted by seq")
		}
	}
	if b.Health.Counts[wire.KindOpen] != 12 || b.Health.SeqGaps != 2 {
		t.Fatalf("counts %v, seq gaps %d", b.Health.Counts, b.Health.SeqGaps)
	}
	if b.Health.KernelLayer.Status != wire.LayerPartial {
		t.Fatalf("missing seqs left the layer %q", b.Health.KernelLayer.Status)
	}
	if got := strings.Join(b.Run.EnvNames, ","); got != "HOME,PATH,SECRET" {
		t.Fatalf("env names = %s", got)
	}
	if err := evidence.Check(b); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRejects(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(b *evidence.Bundle)
		entry string
		want  string
	}{
		{"health run id", func(b *evidence.Bundle) { b.Health.RunID = "other" }, evidence.EntryHealth, `run_id "other" differs`},
		{"surface run id", func(b *evidence.Bundle) { b.Surface.RunID = "other" }, evidence.EntrySurface, "run_id"},
		{"correlation run id", func(b *evidence.Bundle) { b.Correlation.RunID = "other" }, evidence.EntryCorrelation, "run_id"},
		{"sdk run id", func(b *evidence.Bundle) { b.SDK[2].RunID = "other" }, evidence.EntrySDK, "line 3: run_id"},
		{"empty run id", func(b *evidence.Bundle) { b.Run.RunID = "" }, evidence.EntryRun, "empty run_id"},
		{"env names unsorted", func(b *evidence.Bundle) { b.Run.EnvNames = []string{"Z", "A"} }, evidence.EntryRun, "env_names not sorted"},
		{"duplicate seq", func(b *evidence.Bundle) { b.Kernel[3].Seq = 2 }, evidence.EntryKernel, "line 4: seq 2 does not follow seq 2"},
		{"counts", func(b *evidence.Bundle) { b.Health.Counts[wire.KindOpen]++ }, evidence.EntryHealth, "counts.open is"},
		{"seq gaps", func(b *evidence.Bundle) { b.Health.SeqGaps = 1 }, evidence.EntryHealth, "seq_gaps is 1"},
		{"complete with drops", func(b *evidence.Bundle) {
			b.Health.RingbufDrops.PerKind[wire.KindOpen] = 3
			b.Health.RingbufDrops.Total = 3
		}, evidence.EntryHealth, `kernel_layer.status is "complete" but the recorded inputs imply "partial" (ring buffer dropped 3 events (open: 3))`},
		{"drop total", func(b *evidence.Bundle) { b.Health.RingbufDrops.Total = 7 }, evidence.EntryHealth, "ringbuf_drops.total is 7"},
		{"complete without drain", func(b *evidence.Bundle) { b.Health.Drain.Proven = false }, evidence.EntryHealth, "kernel_layer.status"},
		{"clean with stragglers", func(b *evidence.Bundle) { b.Health.CgroupCorrelation.StragglersKilled = 1 }, evidence.EntryHealth, "cgroup_correlation.status"},
		{"exit code rewritten", func(b *evidence.Bundle) { b.Run.ExitCode = 1 }, evidence.EntryRun, "the command exit with 0"},
		{"probe detached behind the coverage's back", func(b *evidence.Bundle) { b.Health.Probes[1].Attached = false }, evidence.EntryHealth, "coverage: class exec"},
		{"complete with a failed required probe", func(b *evidence.Bundle) {
			b.Health.Probes[1].Attached = false
			for i := range b.Health.Coverage.Covered {
				if b.Health.Coverage.Covered[i].Hook == b.Health.Probes[1].Name {
					b.Health.Coverage.Covered[i].Attached = false
				}
			}
		}, evidence.EntryHealth, "kernel_layer.status"},
		{"reasons rewritten", func(b *evidence.Bundle) {
			b.Health.KernelLayer.Status = wire.LayerPartial
			b.Health.KernelLayer.Reasons = []string{"felt like it"}
		}, evidence.EntryHealth, "kernel_layer.status"},
		{"absent with events", func(b *evidence.Bundle) {
			in := evidence.InputOf(b.Health)
			in.CaptureAvailable = false
			b.Health = evidence.BuildHealth(b.Run.RunID, in)
		}, evidence.EntryHealth, "kernel_layer is absent but"},
		{"sdk events count", func(b *evidence.Bundle) { b.Health.SDKLayer.Events = 1 }, evidence.EntryHealth, "sdk_layer.events is 1"},
		{"sdk complete but broken", func(b *evidence.Bundle) {
			b.SDK = b.SDK[1:] // drop the first start: seq no longer from 0
			b.Health.SDKLayer.Events = len(b.SDK)
			b.Correlation = evidence.Correlate(b.Kernel, b.SDK)
			b.Correlation.RunID = b.Run.RunID
		}, evidence.EntrySDK, "health calls the SDK layer complete but: line 1: seq 1, want 0"},
		{"correlation without sdk", func(b *evidence.Bundle) {
			b.SDK = nil
		}, evidence.EntryHealth, "sdk_layer.events"},
		{"surface edited", func(b *evidence.Bundle) { b.Surface.Execs = append(b.Surface.Execs, "/bin/sh") }, evidence.EntrySurface, "execs differs"},
		{"correlation edited", func(b *evidence.Bundle) { b.Correlation.ToolCalls[0].Kernel.Total++ }, evidence.EntryCorrelation, "tool_calls differs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := evidencetest.Bundle(60, 3)
			c.mod(b)
			err := evidence.Check(b)
			var ee *evidence.EntryError
			if !errors.As(err, &ee) {
				t.Fatalf("Check = %v, want an EntryError", err)
			}
			if ee.Entry != c.entry || !strings.Contains(ee.Reason, c.want) {
				t.Fatalf("Check = %q, want entry %s and %q", err, c.entry, c.want)
			}
		})
	}
}
