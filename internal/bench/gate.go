//go:build linux

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"vigil/internal/interference"
	"vigil/internal/wire"
)

// sampleRun is everything a finished sample left behind, gathered before
// its directory is removed.
type sampleRun struct {
	m        Measurement
	kind     wire.ArmKind
	cell     wire.Cell
	userMode bool
	paths    samplePaths
	// maxForeign is the interference gate (plan max_foreign_cpus).
	maxForeign float64
	// collector: the agent sent its spans to a collector, not a file.
	collector bool
}

// assess fills the measured, observed and gated fields of s. Every reason
// the sample fails the gate is listed; the sample is valid only with none.
func assess(s *wire.Sample, ev sampleRun) {
	m := ev.m
	s.StartUnixNS = m.Start.UnixNano()
	s.WallNS = int64(m.Wall)
	s.UserNS = int64(m.User)
	s.SysNS = int64(m.Sys)
	s.MaxRSSBytes = m.MaxRSS
	s.TreePeakBytes = m.TreePeak
	s.TreePeakSource = m.PeakSource
	s.ExitCode = m.ExitCode
	s.StragglersKilled = m.Stragglers
	s.Artifacts.TraceBytes = fileSize(ev.paths.Trace)
	s.Artifacts.ArchiveBytes = fileSize(ev.paths.Archive)
	s.Calibration = wire.Calibration{
		KernelExpectedOpens: 2 * ev.cell.KernelEvents,
		SpanRequested:       ev.cell.SpanEvents,
		SpanLimit:           -1,
		RetainedFirstIndex:  -1,
		RetainedLastIndex:   -1,
	}

	in := m.Interference
	s.Interference = &in

	var reasons []string
	fail := func(format string, args ...any) { reasons = append(reasons, fmt.Sprintf(format, args...)) }
	if interference.Contended(&in, ev.maxForeign) {
		s.Contended = true
		fail("%s", interference.Reason(ev.maxForeign))
	}
	switch {
	case m.TimedOut:
		fail("timed out after %s", m.Wall.Round(time.Millisecond))
	case m.ExitCode != 0:
		fail("exit code %d%s", m.ExitCode, stderrTail(ev.paths.Stderr))
	}

	var res *wire.AgentResult
	if !ev.userMode {
		r, err := readResult(ev.paths.Result)
		if err != nil {
			fail("agent result: %v", err)
		} else {
			res = r
			checkResult(r, ev, s, fail)
		}
	}
	if usesRunner(ev.kind) {
		checkRunner(s, ev, res, fail)
	}
	s.Valid = len(reasons) == 0
	s.InvalidReason = strings.Join(reasons, "; ")
}

// checkResult compares the agent's own account with what the cell asked
// for, and takes the span numbers from it.
func checkResult(r *wire.AgentResult, ev sampleRun, s *wire.Sample, fail func(string, ...any)) {
	if r.Status != wire.StatusOK {
		fail("agent status %q: %s", r.Status, r.Error)
	}
	want := usesOTel(ev.kind)
	if r.OTel != want {
		fail("agent tracing is %v, arm %s needs %v", r.OTel, ev.kind, want)
	}
	if r.KernelEvents != ev.cell.KernelEvents || r.WorkerOpens != 2*ev.cell.KernelEvents {
		fail("agent did %d worker files / %d opens, cell %s asks %d / %d", r.KernelEvents, r.WorkerOpens, ev.cell.Name, ev.cell.KernelEvents, 2*ev.cell.KernelEvents)
	}
	c := &s.Calibration
	c.SpanRetained = r.SpanEventsRetained
	c.SpanDropped = r.SpanEventsDropped
	c.SpanLimit = r.SpanEventLimit
	c.RetainedFirstIndex = r.RetainedFirstIndex
	c.RetainedLastIndex = r.RetainedLastIndex
	if r.SpanEventsRequested != ev.cell.SpanEvents {
		fail("agent requested %d span events, cell %s asks %d", r.SpanEventsRequested, ev.cell.Name, ev.cell.SpanEvents)
	}
	if !want {
		return
	}
	// A failed run may stop before its span events: its numbers describe
	// the failure (already a reason), not what the SDK kept.
	if r.Status == wire.StatusOK {
		ok := r.SpanEventsRetained+r.SpanEventsDropped == r.SpanEventsRequested
		c.SpanMatch = &ok
		if !ok {
			fail("span events: %d retained + %d dropped != %d requested", r.SpanEventsRetained, r.SpanEventsDropped, r.SpanEventsRequested)
		}
	}
	if ev.collector {
		s.OTLPExport = &wire.OTLPExport{SpansExported: r.OTLPSpansExported, SpansFailed: r.OTLPSpansFailed}
		switch {
		case r.OTLPSpansFailed > 0:
			fail("OTLP export to the collector failed for %d of %d spans", r.OTLPSpansFailed, r.OTLPSpansFailed+r.OTLPSpansExported)
		case r.OTLPSpansExported != r.SpansEnded:
			fail("OTLP export: %d spans sent, the SDK ended %d", r.OTLPSpansExported, r.SpansEnded)
		}
		return
	}
	if s.Artifacts.TraceBytes <= 0 {
		fail("trace file %s missing or empty", ev.paths.Trace)
	}
}

// checkRunner reads the phase log and the archive of an A/C sample:
// phases, health and kernel calibration.
func checkRunner(s *wire.Sample, ev sampleRun, res *wire.AgentResult, fail func(string, ...any)) {
	pl, err := readPhaseLog(ev.paths.PhaseLog)
	if err != nil {
		fail("phase log: %v", err)
	} else {
		s.PhasesMS = pl.PhasesMS
		sum := 0.0
		for _, v := range pl.PhasesMS {
			sum += v
		}
		s.PhaseResidualMS = float64(s.WallNS)/1e6 - sum
		s.Health = &wire.SampleHealth{KernelLayer: pl.KernelLayer, CgroupCorrelation: pl.CgroupCorrelation, RingbufDrops: pl.RingbufDrops}
	}
	workerDir := ""
	if res != nil {
		workerDir = res.WorkerDir
	}
	facts, err := readArchive(ev.paths.Archive, workerDir)
	if err != nil {
		fail("%v", err)
		return
	}
	s.Artifacts.ArchiveExtractedBytes = facts.ExtractedBytes
	h := facts.Health
	s.Health = &wire.SampleHealth{
		KernelLayer:       h.KernelLayer.Status,
		CgroupCorrelation: h.CgroupCorrelation.Status,
		RingbufDrops:      h.RingbufDrops.Total,
		Reasons:           append(append([]string{}, h.KernelLayer.Reasons...), h.CgroupCorrelation.Reasons...),
	}
	if h.KernelLayer.Status != wire.LayerComplete {
		fail("kernel layer %s (%s)", h.KernelLayer.Status, strings.Join(h.KernelLayer.Reasons, ", "))
	}
	if h.CgroupCorrelation.Status != wire.CorrelationClean {
		fail("cgroup correlation %s (%s)", h.CgroupCorrelation.Status, strings.Join(h.CgroupCorrelation.Reasons, ", "))
	}
	if h.RingbufDrops.Total != 0 || h.DecodeErrors != 0 || !h.Drain.Proven {
		fail("capture lost events: %d ring-buffer drops, %d decode errors, drain proven %v", h.RingbufDrops.Total, h.DecodeErrors, h.Drain.Proven)
	}
	if ev.userMode || res == nil {
		return // no calibration without the agent's account
	}
	c := &s.Calibration
	c.KernelWriteOpens = facts.WriteOpens
	c.KernelReadOpens = facts.ReadOpens
	n := ev.cell.KernelEvents
	ok := facts.WriteOpens == n && facts.ReadOpens == n && facts.ReadWriteOpens == 0 && facts.FailedOpens == 0
	c.KernelMatch = &ok
	if !ok {
		fail("kernel calibration: %d write + %d read + %d read_write + %d failed opens under %s, want %d write + %d read",
			facts.WriteOpens, facts.ReadOpens, facts.ReadWriteOpens, facts.FailedOpens, workerDir, n, n)
	}
}

func readResult(path string) (*wire.AgentResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no result written")
		}
		return nil, err
	}
	if err := wire.Validate("agent-result", data); err != nil {
		return nil, fmt.Errorf("does not match its schema: %v", err)
	}
	var r wire.AgentResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	if r.Schema != wire.AgentResultSchema {
		return nil, fmt.Errorf("schema %q, want %q", r.Schema, wire.AgentResultSchema)
	}
	return &r, nil
}

func readPhaseLog(path string) (*wire.PhaseLog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no phase log written")
		}
		return nil, err
	}
	if err := wire.Validate("phases", data); err != nil {
		return nil, fmt.Errorf("does not match its schema: %v", err)
	}
	var p wire.PhaseLog
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	if p.Schema != wire.PhaseLogSchema {
		return nil, fmt.Errorf("schema %q, want %q", p.Schema, wire.PhaseLogSchema)
	}
	return &p, nil
}

func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// stderrTail is ": <last non-empty stderr line>" (clipped), or "".
func stderrTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if len(last) > 200 {
		last = last[:200] + "..."
	}
	return ": " + last
}
