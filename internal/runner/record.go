//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"vigil/internal/affinity"
	"vigil/internal/archive"
	"vigil/internal/cgroup"
	"vigil/internal/limits"
	"vigil/internal/wire"
)

// DrainTimeout bounds the drain of the ring buffer. A drain that does not
// finish in time is not an error: the health document says the drain was
// not proven, and the kernel layer is not complete.
const DrainTimeout = 30 * time.Second

// Result is the outcome of a recorded run.
type Result struct {
	RunID string
	// ExitCode is the child's exit code, or 128+Signal.
	ExitCode int
	Signal   int
	Phases   wire.PhaseLog
	Health   wire.Health
	// Stale reports sessions of dead vigil processes removed at start.
	Stale cgroup.StaleReport
	// StragglersKilled counts processes killed after the grace period.
	StragglersKilled int
	// Events is the number of kernel events in the archive.
	Events int
	// Limits are the caps the tree ran under and how often they bit.
	Limits []wire.Limit
	// SessionCgroup is the session's directory (removed by now).
	SessionCgroup string
}

// run holds what a recording owns, so that any failure can release it.
type run struct {
	o       *Options
	session *cgroup.Session
	limits  *limits.Set
	capture Capture
	// kernel is the kernel layer, written as the capture passes the
	// events on; kernelErr is its first error.
	kernel    *archive.KernelStream
	kernelErr error
	// layer is the kernel layer once the stream is closed: its
	// compressed segments and the paths its digest moved out of memory
	// are in anonymous scratch files beside the archive (gone once
	// released, or when vigil dies), until the archive is written.
	layer      *archive.KernelLayer
	sdkTemp    string   // private SDK log, removed at the end
	sdkLock    *os.File // holds the SDK log's in-use lock for the run
	archiveTmp string
}

// release undoes everything still held: it closes capture, kills whatever
// is left in the session, removes it and removes temporary files. It is a
// no-op for what was already released.
func (r *run) release() error {
	var errs []error
	if r.capture != nil {
		errs = append(errs, r.capture.Close())
		r.capture = nil
	}
	if r.kernel != nil {
		// After Close: the capture no longer passes events on.
		r.kernel.Abort()
		r.kernel = nil
	}
	if r.layer != nil {
		errs = append(errs, r.layer.Release())
		r.layer = nil
	}
	if r.session != nil {
		errs = append(errs, r.session.Remove(context.Background()))
		r.session = nil
	}
	if r.limits != nil {
		// After the session: its removal killed every task in these.
		errs = append(errs, r.limits.Remove())
		r.limits = nil
	}
	if r.sdkTemp != "" {
		os.Remove(r.sdkTemp)
		r.sdkTemp = ""
	}
	if r.sdkLock != nil {
		r.sdkLock.Close()
		r.sdkLock = nil
	}
	if r.archiveTmp != "" {
		os.Remove(r.archiveTmp)
		r.archiveTmp = ""
	}
	return errors.Join(errs...)
}

// Record runs o.Argv under observation and writes the archive. The error
// is an *Error whenever vigil itself failed; otherwise Result.ExitCode is
// the exit code vigil should return. Cancelling ctx while the command runs
// abandons the run: every process of the session is killed and no archive
// is written.
func Record(ctx context.Context, o Options) (res *Result, err error) {
	o.defaults()
	clock := newPhaseClock()
	sigc, stopSignals := signals()
	defer stopSignals()
	r := &run{o: &o}
	defer func() {
		rerr := r.release()
		if rerr == nil {
			return
		}
		// A teardown failure is reported even when the run failed
		// before it: it may mean a process or a cgroup is left behind.
		var re *Error
		if err != nil && errors.As(err, &re) {
			re.Err = fmt.Errorf("%w; teardown: %s", re.Err, flatten(rerr))
			return
		}
		res, err = nil, fail("teardown: %s", flatten(rerr))
	}()

	// JSON Schemas compile on first use; SDK log ingestion needs the
	// sdk-event one inside archive_write. It compiles beside preflight and
	// attach (mostly kernel work) instead, and is done before the command
	// starts, so it never competes with it. So are the compressors the
	// kernel layer and the archive's other entries are written with.
	schemasReady := make(chan struct{})
	go func() {
		defer close(schemasReady)
		_ = wire.Warm("sdk-event")
		archive.WarmCompressors()
	}()

	// preflight
	end := clock.begin("preflight")
	path, err := o.validate()
	if err != nil {
		return nil, err
	}
	if o.RunnerCPUs != nil {
		if o.ChildCPUs == nil {
			if o.ChildCPUs, err = affinity.Current(); err != nil {
				return nil, fail("%v", err)
			}
		}
		if err := affinity.PinProcess(o.RunnerCPUs); err != nil {
			return nil, fail("--runner-cpus: %v", err)
		}
	}
	backend := o.Backend
	if backend == nil {
		backend = kernelBackend{ringSize: o.RingSize, resident: o.Programs, residentDir: o.ResidentDir}
	}
	absent := ""
	if perr := backend.Preflight(); perr != nil {
		if !o.AllowAbsentKernel {
			return nil, fail("%v", perr)
		}
		absent = perr.Error()
	}
	parent, err := sessionParent()
	if err != nil {
		return nil, fail("%v", err)
	}
	// The child inherits vigil's working directory.
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fail("working directory: %v", err)
	}
	end()

	// cgroup: stale sessions of dead vigils go first, then ours.
	end = clock.begin("cgroup")
	res = &Result{RunID: o.RunID}
	if res.Stale, err = cgroup.CleanStale(ctx, parent); err != nil {
		return nil, fail("removing stale sessions: %v", err)
	}
	if res.Stale.Sessions > 0 {
		o.logf("removed %d stale session cgroup(s) %v, killing %d process(es)",
			res.Stale.Sessions, res.Stale.Names, res.Stale.Killed)
	}
	if groups, err := limits.CleanStale(); err != nil {
		return nil, fail("removing stale limit groups: %v", err)
	} else if len(groups) > 0 {
		o.logf("removed %d cgroup v1 limit group(s) of killed vigil runs: %v", len(groups), groups)
	}
	if temps := removeStaleTemps(o.ArchivePath); len(temps) > 0 {
		o.logf("removed %d temporary file(s) of killed vigil runs beside %s: %v", len(temps), o.ArchivePath, temps)
	}
	if logs := removeStaleSDKLogs(os.TempDir()); len(logs) > 0 {
		o.logf("removed %d SDK event log(s) of killed vigil runs in %s: %v", len(logs), os.TempDir(), logs)
	}
	if r.session, err = cgroup.Create(parent, o.RunID); err != nil {
		return nil, fail("%v", err)
	}
	res.SessionCgroup = r.session.Dir()
	if r.limits, err = limits.Apply(r.session.Dir(), filepath.Base(r.session.Dir()), o.Limits); err != nil {
		return nil, fail("%v", err)
	}
	end()

	// attach
	end = clock.begin("attach")
	if r.kernel, err = archive.NewKernelStreamSpilling(filepath.Dir(o.ArchivePath)); err != nil {
		return nil, fail("%v", err)
	}
	if absent == "" {
		r.capture, err = backend.Open(r.session.Dir(), o.RingSize, r.writeKernel)
		if err != nil {
			if !o.AllowAbsentKernel {
				return nil, fail("attaching kernel capture: %v", err)
			}
			absent = "attaching kernel capture: " + err.Error()
			r.capture = nil
		}
	}
	if absent != "" {
		o.logf("kernel capture unavailable, recording with kernel_layer absent: %s", absent)
	}
	<-schemasReady
	end()

	// spawn
	end = clock.begin("spawn")
	sdkPath, err := r.prepareSDKLog()
	if err != nil {
		return nil, err
	}
	runTC, runSC := runTrace()
	env := traceEnv(childEnv(o.RunID, sdkPath), runSC)
	cmd := newChild(path, &o, env, r.session.FD())
	select {
	case s := <-sigc:
		return nil, fail("interrupted by %v before the command started", s)
	default:
	}
	startWall := time.Now()
	anchor := wire.ClockAnchor{MonoNS: monoNow(), UnixNS: startWall.UnixNano()}
	done, err := startChild(cmd, r.limits, o.ChildCPUs)
	if err != nil {
		return nil, startError(o.Argv[0], err)
	}
	end()

	// child_runtime: the child, then everything it left in the session.
	end = clock.begin("child_runtime")
	if err := waitChild(ctx, cmd, done, sigc); err != nil {
		return nil, err
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	ids, killed, err := r.settle(ctx, sigc)
	if err != nil {
		return nil, err
	}
	res.StragglersKilled = killed
	endWall := time.Now()
	end()

	end = clock.begin("drain")
	var cr *CaptureResult
	if r.capture != nil {
		dctx, cancel := context.WithTimeout(ctx, DrainTimeout)
		cr, err = r.capture.Finish(dctx)
		cancel()
		if err != nil {
			return nil, fail("draining kernel capture (the command exited %d): %v", res.ExitCode, err)
		}
		if p := cr.Programs; p != nil && p.Fallback != "" {
			o.logf("programs loaded for this run, resident set not used: %s", p.Fallback)
		}
		if p := cr.Programs; p != nil && p.StaleRecordsDiscarded > 0 {
			o.logf("the resident set's ring held %d record(s) of an earlier capture that ended without reading them; discarded", p.StaleRecordsDiscarded)
		}
	}
	if r.kernelErr != nil {
		return nil, fail("kernel layer: %v", r.kernelErr)
	}
	layer, err := r.kernel.Close()
	r.kernel = nil
	if err != nil {
		return nil, fail("kernel layer: %v", err)
	}
	r.layer = layer
	end()

	// teardown, first part: nothing runs in the session any more; remove
	// it before writing, so that a failed write cannot leave it behind.
	// Capture is closed after the write: Finish has started detaching the
	// probes in the background, and the write overlaps that.
	end = clock.begin("teardown")
	probes := []wire.Probe{}
	var coverage wire.Coverage
	if r.capture != nil {
		probes = r.capture.Probes()
		coverage = r.capture.Coverage()
	}
	res.Limits = r.limits.Report()
	for _, l := range res.Limits {
		if l.Hits > 0 || l.OOMKills > 0 {
			o.logf("the %s cap (%d) bit: %d refusal(s), %d OOM kill(s), peak %d", l.Controller, l.Max, l.Hits, max(l.OOMKills, 0), l.Peak)
		}
	}
	if err := r.session.Remove(ctx); err != nil {
		return nil, fail("removing the session cgroup: %v", err)
	}
	r.session = nil
	if err := r.limits.Remove(); err != nil {
		return nil, fail("%v", err)
	}
	r.limits = nil
	end()
	// run.json is written by the next phase, so it holds the phases that
	// are over by then; --phase-log has every phase.
	phases := clock.snapshot()
	delete(phases, "archive_write")
	delete(phases, "teardown")

	// archive_write
	end = clock.begin("archive_write")
	b, err := assemble(&o, runFacts{
		env: env, start: startWall, end: endWall, phases: phases, res: res,
		absent: absent, probes: probes, coverage: coverage, capture: cr, kernel: layer.Digest(), ids: ids, sdkPath: sdkPath, cwd: cwd,
		trace: runTC, clock: anchor,
	})
	if err != nil {
		return nil, err
	}
	if err := r.writeArchive(b, layer); err != nil {
		return nil, err
	}
	// Every path and segment is in the archive either way; only the
	// memory bound was lost.
	if st := layer.Digest().Spilled(); st.Err != nil {
		o.logf("warning: a scratch file refused a write, and what it was for stayed in memory: %v", st.Err)
	}
	if n, err := layer.Unspooled(); n > 0 {
		o.logf("warning: %d compressed segment(s) of the kernel layer stayed in memory: %v", n, err)
	}
	res.Health = b.Health
	res.Events = int(b.Events())
	end()

	// teardown, second part: wait for the probes to be detached.
	end = clock.begin("teardown")
	if err := r.release(); err != nil {
		// The archive is complete; a probe that failed to detach does
		// not change what was observed, so it is reported, not fatal.
		o.logf("warning: teardown: %v", err)
	}
	end()

	res.Phases = wire.PhaseLog{
		Schema:            wire.PhaseLogSchema,
		RunID:             o.RunID,
		PhasesMS:          clock.snapshot(),
		ExitCode:          res.ExitCode,
		KernelLayer:       b.Health.KernelLayer.Status,
		CgroupCorrelation: b.Health.CgroupCorrelation.Status,
		RingbufDrops:      b.Health.RingbufDrops.Total,
	}
	res.Phases.TotalMS = clock.total()
	res.Phases.MaxRSSKiB = ownPeakRSSKiB()
	if o.PhaseLogPath != "" {
		if err := writeJSONAtomic(o.PhaseLogPath, res.Phases); err != nil {
			// The archive is complete and stays; the harness sees 125.
			return nil, fail("--phase-log %s: %v", o.PhaseLogPath, err)
		}
	}
	if b.Health.KernelLayer.Status == wire.LayerPartial {
		for _, why := range b.Health.KernelLayer.Reasons {
			o.logf("kernel_layer partial: %s", why)
		}
	}
	if n := b.Unrecorded(); n > 0 {
		o.logf("%d event(s) acted on files or addresses the record does not name, such as io_uring operations whose arguments the capture does not decode (vigil inspect lists them; vigil check counts them as unseen)", n)
	}
	o.logf("run %s: exit %d; kernel_layer %s, cgroup_correlation %s, %d events, %d drops, %d straggler(s) killed; archive %s",
		o.RunID, res.ExitCode, res.Phases.KernelLayer, res.Phases.CgroupCorrelation,
		res.Events, res.Phases.RingbufDrops, killed, o.ArchivePath)
	return res, nil
}

// writeKernel is the capture's sink: the events go into the kernel layer
// as they arrive. Once the layer refuses more (it outgrew the archive's
// entry limit), later events are not written and the run fails at the
// drain: no archive rather than one that is missing events.
func (r *run) writeKernel(events []wire.Kernel) {
	if r.kernelErr == nil {
		r.kernelErr = r.kernel.Write(events)
	}
}

// waitChild waits for the main child, forwarding signals to it meanwhile.
// When ctx ends first, the run is abandoned: the caller's cleanup kills
// everything in the session, and no archive is written.
func waitChild(ctx context.Context, cmd *exec.Cmd, done <-chan error, sigc chan os.Signal) error {
	for {
		select {
		case <-ctx.Done():
			return fail("run abandoned while the command was running: %v", context.Cause(ctx))
		case s := <-sigc:
			// The child may have exited already; then there is nothing to
			// forward to and the error is irrelevant.
			_ = cmd.Process.Signal(s)
		case err := <-done:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				return fail("waiting for the command: %v", err)
			}
			return nil
		}
	}
}

// settle waits for the session to empty after the main child exited:
// up to the grace period (cut short by a forwarded signal), then kills what
// is left. It returns the cgroup ids of the session tree and how many
// processes were killed.
func (r *run) settle(ctx context.Context, sigc chan os.Signal) (map[uint64]bool, int, error) {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-sigc:
			cancel()
		case <-stop:
		}
	}()
	err := r.session.WaitEmpty(gctx, time.Now().Add(r.o.Grace))
	if err != nil && !errors.Is(err, cgroup.ErrTimeout) && !(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return nil, 0, fail("waiting for the session cgroup to empty: %v", err)
	}
	// Sub-cgroups the workload made are still there (empty or not):
	// record their ids before anything is removed.
	ids, idErr := r.session.IDs()
	if idErr != nil {
		return nil, 0, fail("listing session cgroups: %v", idErr)
	}
	if err == nil {
		return ids, 0, nil
	}
	killed, kerr := r.session.Kill(ctx)
	if kerr != nil {
		return nil, killed, fail("killing stragglers: %v", kerr)
	}
	r.o.logf("killed %d process(es) still in the session %v after the command exited", killed, r.o.Grace)
	return ids, killed, nil
}
