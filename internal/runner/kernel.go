package runner

import (
	"context"

	"vigil/internal/capture"
	"vigil/internal/evidence"
)

// kernelBackend is the eBPF capture of package capture.
type kernelBackend struct{}

func (kernelBackend) Preflight() error { return capture.Preflight() }

func (kernelBackend) Open(dir string, ringSize int) (Capture, error) {
	c, err := capture.Open(capture.Config{CgroupPath: dir, RingSize: ringSize})
	if err != nil {
		return nil, err
	}
	return kernelCapture{c}, nil
}

type kernelCapture struct{ c *capture.Capture }

func (k kernelCapture) Probes() []evidence.Probe {
	ps := k.c.Probes()
	out := make([]evidence.Probe, len(ps))
	for i, p := range ps {
		out[i] = evidence.Probe{Name: p.Name, Attached: p.Attached, Required: p.Required, Error: p.Error}
	}
	return out
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
		Events:        r.Events,
		Emitted:       r.Emitted,
		Drops:         r.Drops,
		RingFull:      r.RingFull,
		InflightFull:  r.InflightFull,
		DecodeErrors:  r.DecodeErrors,
		DecodeDetail:  r.DecodeDetail,
		DrainProven:   r.DrainProven,
		DrainDetail:   detail,
		ReadFaults:    r.ReadFaults,
		ProgramMisses: r.ProgramMisses,
	}, nil
}

func (k kernelCapture) Close() error { return k.c.Close() }
