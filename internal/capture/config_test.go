//go:build linux

package capture

import (
	"context"
	"errors"
	"strings"
	"testing"

	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestRingSizeValidation(t *testing.T) {
	for _, n := range []int{1, 1000, 4095, 5000, 12288, 3 << 20} {
		_, err := ringSize(n)
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "ring size") {
			t.Errorf("ringSize(%d) = %v, want an ErrBadConfig naming the size", n, err)
		}
	}
	for n, want := range map[int]uint32{0: DefaultRingSize, 4096: 4096, 1 << 20: 1 << 20} {
		got, err := ringSize(n)
		if err != nil || got != want {
			t.Errorf("ringSize(%d) = %d, %v; want %d", n, got, err, want)
		}
	}
}

func TestOpenRejectsBadInput(t *testing.T) {
	testenv.RequireRoot(t)
	cases := map[string]struct {
		cfg  Config
		want error
	}{
		"relative path": {Config{CgroupPath: "sys/fs/cgroup"}, ErrBadConfig},
		"missing path":  {Config{CgroupPath: "/nonexistent/cgroup"}, ErrBadConfig},
		"not cgroup2":   {Config{CgroupPath: t.TempDir()}, ErrNoCgroupFS},
		"ring size":     {Config{CgroupPath: cgroup2Mount(t), RingSize: 5000}, ErrBadConfig},
	}
	for name, tc := range cases {
		c, err := Open(tc.cfg)
		if !errors.Is(err, tc.want) || c != nil {
			t.Errorf("%s: Open = %v, %v; want %v", name, c, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", name, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("%s: Close after failed Open: %v", name, err)
		}
	}
}

func TestFinishOnceCloseTwice(t *testing.T) {
	testenv.RequireRoot(t)
	if err := Preflight(Config{}); err != nil {
		t.Fatal(err)
	}
	cg := testCgroup(t)
	c := openCapture(t, cg, 0)
	r, err := c.Finish(context.Background())
	if err != nil || !r.DrainProven || len(r.Events) != 0 {
		t.Fatalf("Finish of an idle session = %+v, %v; want proven and empty", r, err)
	}
	if _, err := c.Finish(context.Background()); !errors.Is(err, ErrFinished) {
		t.Errorf("second Finish = %v, want ErrFinished", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// The stage knob of BenchmarkRecordStages: every stage short of
// VIGIL_STAGE_ALL loads, and stops the opens it sees before the ring
// (nothing emitted, nothing counted as dropped), while the fork, exec and
// exit records, which do not pass the knob, are still emitted.
func TestStopStagesStopBeforeTheRing(t *testing.T) {
	testenv.RequireRoot(t)
	for _, stage := range []vigilBPFVigilStage{
		vigilBPFVigilStageVIGIL_STAGE_TRACKED, vigilBPFVigilStageVIGIL_STAGE_BEGIN,
		vigilBPFVigilStageVIGIL_STAGE_BODY, vigilBPFVigilStageVIGIL_STAGE_RESERVE,
	} {
		cg := testCgroup(t)
		c := openCaptureWith(t, Config{CgroupPath: cg, stopStage: stage})
		if err := helper(t, cg, "openloop", "/etc/hostname", "20").Run(); err != nil {
			t.Fatal(err)
		}
		r := finish(t, c, cg)
		if r.Emitted[wire.KindOpen] != 0 || wire.Total(r.Drops) != 0 || r.Emitted[wire.KindExit] == 0 {
			t.Errorf("stage %d: emitted %v, dropped %v: want no opens, no drops, the exits", stage, r.Emitted, r.Drops)
		}
	}
}
