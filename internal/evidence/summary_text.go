package evidence

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"vigil/internal/wire"
)

// Text renders the summary for people: health first, then what the run
// touched, then the tool calls.
func (s Summary) Text() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	h := s.Health
	p("run                 %s (vigil %s)\n", s.RunID, s.VigilVersion)
	p("command             %s\n", strings.Join(s.Argv, " "))
	exit := fmt.Sprintf("exit %d", s.ExitCode)
	if s.Signal != 0 {
		exit += fmt.Sprintf(" (signal %d)", s.Signal)
	}
	p("ended               %s, %s%s\n", exit, s.StartTime, wallDuration(s.StartTime, s.EndTime))
	p("host                %s\n", s.HostClass)
	if pr := s.Programs; pr != nil {
		switch {
		case pr.Source == "resident":
			p("capture programs    resident set %s\n", pr.ResidentSet)
		case pr.Fallback != "":
			p("capture programs    loaded for this run; resident set not used: %s\n", pr.Fallback)
		default:
			p("capture programs    loaded for this run\n")
		}
		if pr.StaleRecordsDiscarded > 0 {
			p("                      - %d record(s) an earlier capture left in the set's ring, discarded\n", pr.StaleRecordsDiscarded)
		}
	}
	p("kernel layer        %s\n", h.KernelLayer.Status)
	for _, r := range h.KernelLayer.Reasons {
		p("                      - %s\n", r)
	}
	p("cgroup correlation  %s\n", h.CgroupCorrelation.Status)
	for _, r := range h.CgroupCorrelation.Reasons {
		p("                      - %s\n", r)
	}
	c := h.CgroupCorrelation
	p("session tasks       %d alive at the end, %d moved out of the session cgroup, %d joined it, %d unexplained exits\n",
		c.LeftSessionTasks, c.MovedOutTasks, c.JoinedTasks, c.EnteredSessionTasks)
	for _, l := range []struct {
		name string
		refs []wire.TaskRef
	}{{"alive at end", c.LeftSessionExamples}, {"moved out", c.MovedOutExamples}, {"joined", c.JoinedExamples}, {"unexplained", c.EnteredSessionExamples}} {
		if len(l.refs) > 0 {
			p("  %-17s %s\n", l.name, taskList(l.refs))
		}
	}
	drain := "not proven"
	if h.Drain.Proven {
		drain = "proven empty"
	}
	p("ring buffer         %d dropped, %d decode errors, %d seq gaps, drain %s\n", h.RingbufDrops.Total, h.DecodeErrors, h.SeqGaps, drain)
	if d := h.RingbufDrops; d.Total > 0 {
		p("drops by kind       %s\n", kindList(d.PerKind))
		if c := d.Causes; c != nil {
			p("  ring buffer full  %s\n", kindList(c.RingFull))
			p("  slots busy        %s\n", kindList(c.SlotsBusy))
			p("  after close       %s\n", kindList(c.AfterClose))
		}
	}
	if h.DecodeDetail != "" {
		p("first decode error  %s\n", h.DecodeDetail)
	}
	switch {
	case len(h.IncompleteParts) > 0:
		var parts []string
		for _, part := range wire.IncompleteOrder {
			if n := h.IncompleteParts[part]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", part, n))
			}
		}
		p("incomplete events   %d (%s)\n", h.ReadFaults, strings.Join(parts, ", "))
		for _, e := range s.Incomplete {
			p("  seq %-15d %s by pid %d (%s): %s\n", e.Seq, e.Kind, e.PID, e.Comm.Text(), strings.Join(e.Parts, ", "))
		}
		if shown := uint64(len(s.Incomplete)); shown > 0 && h.ReadFaults > shown {
			p("  and %d more (\"incomplete\" in layers/kernel.ndjson)\n", h.ReadFaults-shown)
		}
	default:
		p("read faults         %d events with a part missing (failed read, or a path or argv past the capture's limit)\n", h.ReadFaults)
	}
	if n := wire.Total(h.CompatSyscalls); n > 0 {
		p("32-bit syscalls     %d counted, not decoded: %s\n", n, kindList(h.CompatSyscalls))
	}
	p("skipped probe runs  %s\n", probeList(h.ProgramMisses))
	attached, required, reqAttached := 0, 0, 0
	for _, pr := range h.Probes {
		if pr.Attached {
			attached++
		}
		if pr.Required {
			required++
			if pr.Attached {
				reqAttached++
			}
		}
	}
	p("probes              %d/%d attached (required %d/%d)\n", attached, len(h.Probes), reqAttached, required)
	p("coverage            %d classes covered, %d not covered\n", len(h.Coverage.Covered), len(h.Coverage.NotCovered))
	for _, c := range h.Coverage.Covered {
		state := "attached"
		if !c.Attached {
			state = "NOT ATTACHED"
		}
		p("  %-16s  %s (%s): %s\n", c.Class, c.Hook, state, c.Source)
	}
	for _, c := range h.Coverage.NotCovered {
		p("  %-16s  not covered: %s\n", c.Class, c.Why)
	}
	p("sdk layer           %s (%d events)\n", h.SDKLayer.Status, h.SDKLayer.Events)
	for _, r := range h.SDKLayer.Problems {
		p("                      - %s\n", r)
	}
	p("events              %d: %s\n", s.TotalEvents, kindList(h.Counts))
	p("files               %d read, %d written, %d created, %d deleted, %d failed opens\n", s.FilesRead, s.FilesWritten, s.FilesCreated, s.FilesDeleted, s.OpenFailures)
	if len(s.Unrecorded) > 0 {
		var ops []string
		for _, op := range slices.Sorted(maps.Keys(s.Unrecorded)) {
			ops = append(ops, fmt.Sprintf("%s %d", op, s.Unrecorded[op]))
		}
		p("not recorded        %s: acted on files or addresses these counts and the lists below do not show\n", strings.Join(ops, ", "))
	}
	if len(s.Changes) > 0 {
		p("\nchanges (each list of the capability surface: how many, then the first paths)\n")
		for _, c := range s.Changes {
			p("  %s (%d)\n", c.List, c.Total)
			for _, path := range c.Paths {
				p("    %s\n", path.Text())
			}
			if more := c.Total - len(c.Paths); more > 0 {
				p("    and %d more (capability-surface.json)\n", more)
			}
		}
	}
	p("\ntop paths (%d of %d distinct, by opens)\n", len(s.TopPaths), s.DistinctPaths)
	for _, pc := range s.TopPaths {
		p("  %6d  %s\n", pc.Opens, pc.Path.Text())
	}
	p("\nexecs (%d)\n", len(s.Execs))
	for _, e := range s.Execs {
		p("  %s\n", e.Text())
	}
	for _, l := range []struct {
		title string
		eps   []Endpoint
	}{{"connect attempts, succeeded or not", s.Network}, {"sent to", s.NetworkSent}, {"bound or listening on", s.NetworkLocal}} {
		p("\nnetwork: %s (%d)\n", l.title, len(l.eps))
		for _, n := range l.eps {
			if n.Family == "unix" {
				p("  unix %s\n", n.Addr.Text())
			} else {
				p("  %s %s port %d\n", n.Family, n.Addr.Text(), n.Port)
			}
		}
	}
	if h.SDKLayer.Status == wire.SDKAbsent {
		p("\ntool calls          none (no SDK layer)\n")
		return b.String()
	}
	p("\ntool calls (%d; %d kernel events outside every tool call)\n", len(s.ToolCalls), s.Unattributed)
	for _, c := range s.ToolCalls {
		d := "never completed"
		if c.Completed {
			d = time.Duration(c.DurationNS).String()
		}
		p("  %-20s %-16s %-6s %12s  %d events: %s\n", c.ToolCallID, c.ToolName, c.Status, d, c.Events, kindList(c.ByKind))
	}
	return b.String()
}

// kindList renders per-kind counts in the fixed kind order, then any
// other kinds, skipping zeros.
func kindList(m map[wire.Kind]uint64) string {
	var parts []string
	for _, k := range sortedKinds(m) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// probeList renders per-probe counts in name order, skipping zeros.
func probeList(m map[string]uint64) string {
	if sumProbes(m) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", sumProbes(m), nonZeroProbes(m))
}

func wallDuration(start, end string) string {
	a, err1 := time.Parse(time.RFC3339Nano, start)
	z, err2 := time.Parse(time.RFC3339Nano, end)
	if err1 != nil || err2 != nil {
		return ""
	}
	return " to " + end + " (" + z.Sub(a).String() + ")"
}

// taskList renders tasks as "comm (tid N, pid M), ...".
func taskList(refs []wire.TaskRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = fmt.Sprintf("%s (tid %d, pid %d)", r.Comm.Text(), r.TID, r.PID)
	}
	return strings.Join(parts, ", ")
}
