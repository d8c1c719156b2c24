//go:build linux

package runner

import (
	"time"

	"vigil/internal/evidence"
	"vigil/internal/hostinfo"
	"vigil/internal/wire"
)

// runFacts is what a finished run contributes to its archive.
type runFacts struct {
	env        []string
	start, end time.Time
	phases     map[string]float64
	res        *Result
	absent     string // why kernel capture is absent, or ""
	probes     []wire.Probe
	coverage   wire.Coverage
	cwd        string
	capture    *CaptureResult   // nil when absent
	kernel     *evidence.Digest // of the kernel layer written
	ids        map[uint64]bool
	sdkPath    string
	trace      wire.TraceContext
	clock      wire.ClockAnchor
}

// assemble ingests the SDK log and builds the archive's documents.
func assemble(o *Options, f runFacts) (*evidence.Bundle, error) {
	in := healthInput(f.absent, f.probes, f.coverage, f.capture, f.kernel, f.ids, f.res.StragglersKilled)
	sdk, problems, err := readSDKLog(f.sdkPath, o.RunID)
	if err != nil {
		return nil, fail("%v", err)
	}
	in.SDKProblems = problems
	child, err := childCredentials(o.cred)
	if err != nil {
		return nil, fail("reading vigil's own groups: %v", err)
	}
	run := wire.Run{
		Child:         child,
		RunID:         o.RunID,
		VigilVersion:  o.VigilVersion,
		Argv:          o.Argv,
		EnvNames:      envNames(f.env),
		Cwd:           wire.Bytes(f.cwd),
		StartTime:     f.start.UTC().Format(time.RFC3339Nano),
		EndTime:       f.end.UTC().Format(time.RFC3339Nano),
		ExitCode:      f.res.ExitCode,
		Signal:        f.res.Signal,
		Host:          hostinfo.Local(),
		PhasesMS:      f.phases,
		SessionCgroup: f.res.SessionCgroup,
		Limits:        f.res.Limits,
		Trace:         &f.trace,
		Clock:         &f.clock,
	}
	if f.capture != nil {
		run.Programs = f.capture.Programs
	}
	b, err := evidence.AssembleStreamed(run, f.kernel, sdk, in)
	if err != nil {
		return nil, fail("%v", err)
	}
	return b, nil
}
