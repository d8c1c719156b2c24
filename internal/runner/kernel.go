//go:build linux

package runner

import (
	"context"

	"vigil/internal/capture"
	"vigil/internal/wire"
)

// kernelBackend is the eBPF capture of package capture.
type kernelBackend struct {
	ringSize    int
	resident    capture.ResidentMode
	residentDir string
}

func (b kernelBackend) config() capture.Config {
	return capture.Config{RingSize: b.ringSize, Resident: b.resident, ResidentDir: b.residentDir}
}

func (b kernelBackend) Preflight() error { return capture.Preflight(b.config()) }

func (b kernelBackend) Open(dir string, ringSize int, sink func([]wire.Kernel)) (Capture, error) {
	cfg := b.config()
	cfg.CgroupPath, cfg.RingSize, cfg.Sink = dir, ringSize, sink
	c, err := capture.Open(cfg)
	// A record opens one capture: what loading parsed (the BPF object,
	// the kernel's BTF) would stay in its heap through the run. In the
	// background: a preparation Preflight started and Open did not need
	// (a resident set was taken) is waited for there, not here.
	go capture.ReleaseCaches()
	if err != nil {
		return nil, err
	}
	return kernelCapture{c}, nil
}

type kernelCapture struct{ c *capture.Capture }

func (k kernelCapture) Probes() []wire.Probe {
	ps := k.c.Probes()
	out := make([]wire.Probe, len(ps))
	for i, p := range ps {
		out[i] = wire.Probe{Name: p.Name, Attached: p.Attached, Required: p.Required, Error: p.Error}
	}
	return out
}

func (k kernelCapture) Coverage() wire.Coverage {
	attached := map[string]bool{}
	for _, p := range k.c.Probes() {
		attached[p.Name] = p.Attached
	}
	covered, uncovered := k.c.Coverage()
	var cov wire.Coverage
	for _, c := range covered {
		cov.Covered = append(cov.Covered, wire.CoveredClass{Class: string(c.Class), Hook: c.Hook, Attached: attached[c.Hook], Source: c.Source})
	}
	for _, u := range uncovered {
		cov.NotCovered = append(cov.NotCovered, wire.UncoveredClass{Class: u.Class, Why: u.Why})
	}
	return cov
}

func (k kernelCapture) Finish(ctx context.Context) (*CaptureResult, error) {
	r, err := k.c.Finish(ctx)
	if err != nil {
		return nil, err
	}
	detail := r.DrainDetail
	if detail == "" && r.DrainProven {
		detail = "ring buffer empty and every emitted record read"
	}
	return &CaptureResult{
		Emitted:         r.Emitted,
		Drops:           r.Drops,
		RingFull:        r.RingFull,
		SlotsBusy:       r.SlotsBusy,
		AfterClose:      r.Late,
		Compat:          r.Compat,
		Untracked:       r.Untracked,
		IOUringUntraced: r.IOUringUntraced,
		DecodeErrors:    r.DecodeErrors,
		DecodeDetail:    r.DecodeDetail,
		DrainProven:     r.DrainProven,
		DrainDetail:     detail,
		ProgramMisses:   r.ProgramMisses,
		Programs:        programs(k.c.Programs()),
	}, nil
}

func programs(p capture.ProgramSource) *wire.CapturePrograms {
	out := &wire.CapturePrograms{Source: "loaded", Fallback: p.Fallback, StaleRecordsDiscarded: p.StaleRecords}
	if p.Resident {
		out.Source = "resident"
	}
	if p.Resident || p.Fallback != "" {
		out.ResidentSet = p.Set
	}
	return out
}

func (k kernelCapture) Close() error { return k.c.Close() }
