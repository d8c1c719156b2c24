//go:build linux

package runner

import (
	"context"

	"vigil/internal/archive"
	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Backend is the kernel capture as the runner sees it. The production
// backend wraps package capture; tests substitute their own.
type Backend interface {
	// Preflight reports why capture cannot work on this host (no BPF,
	// no BTF, ...), or nil.
	Preflight() error
	// Open attaches capture to the session cgroup directory cgroupDir.
	// The capture gives sink the events in seq order, a block at a
	// time, from one goroutine, until Finish returns (or Close); a block
	// is the capture's again once sink returns.
	Open(cgroupDir string, ringSize int, sink func([]wire.Kernel)) (Capture, error)
}

// Capture is one attached capture.
type Capture interface {
	Probes() []wire.Probe
	// Coverage is the declared coverage, with each class's attach state.
	Coverage() wire.Coverage
	// Finish drains the capture; it is called once the session is empty.
	Finish(ctx context.Context) (*CaptureResult, error)
	Close() error
}

// CaptureResult is what a finished capture observed; its events went to
// the sink.
type CaptureResult struct {
	Emitted map[wire.Kind]uint64
	Drops   map[wire.Kind]uint64
	// RingFull, SlotsBusy and AfterClose split Drops by cause (nil: not
	// split).
	RingFull, SlotsBusy, AfterClose map[wire.Kind]uint64
	// Compat counts 32-bit syscalls of the run, not decoded.
	Compat map[wire.Kind]uint64
	// Untracked counts new tasks the kernel could not mark as the run's.
	Untracked uint64
	// IOUringUntraced counts io_uring completions the capture never saw.
	IOUringUntraced uint64
	DecodeErrors    uint64
	DecodeDetail    string
	DrainProven     bool
	DrainDetail     string
	// ProgramMisses counts, per probe, runs the kernel skipped because
	// another BPF program was running on the CPU.
	ProgramMisses map[string]uint64
	// Programs says where the capture's programs came from; nil when
	// the backend does not say.
	Programs *wire.CapturePrograms
}

// ArchiveWriter writes a bundle, assembled from the digest of layer, as
// an archive at path.
type ArchiveWriter func(path string, b *evidence.Bundle, layer *archive.KernelLayer) error
