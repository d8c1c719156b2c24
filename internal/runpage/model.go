package runpage

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Limits keep a page for a huge run usable; what they leave out is
// counted on the page.
const (
	maxRows       = 5000 // per table
	maxCallEvents = 50   // events listed per tool call
	densityBins   = 120
)

// Page is everything the template shows, computed from one bundle.
type Page struct {
	Archive     string
	Run         wire.Run
	Health      wire.Health
	Duration    string
	Events      int
	Complete    bool
	BannerClass string // "ok" or "warn"
	Banner      string

	Timeline  Timeline
	Processes []Process
	Files     Table[FileRow]
	Execs     Table[ExecRow]
	Endpoints Table[EndpointRow]
	ToolCalls []CallRow
	// Unattributed counts kernel events inside no tool call's window.
	Unattributed uint64
	HasSDK       bool
}

// Table is a list of rows with how many were left out.
type Table[T any] struct {
	Rows    []T
	Total   int
	Omitted int
}

func newTable[T any](rows []T) Table[T] {
	t := Table[T]{Total: len(rows)}
	if len(rows) > maxRows {
		t.Omitted = len(rows) - maxRows
		rows = rows[:maxRows]
	}
	t.Rows = rows
	return t
}

// FileRow is one path and what the run did to it.
type FileRow struct {
	Path string
	Ops  string // what succeeded, e.g. "read write create"
	// FailedOps are the operations attempted that failed, e.g. "read",
	// so a name the run only tried to open does not look read.
	FailedOps string
	Events    int
	Failed    int // actions on it that failed
}

// ExecRow is one program run.
type ExecRow struct {
	Path string
	Argv string
	PIDs string
	Runs int
}

// EndpointRow is one socket address and what the run did with it.
type EndpointRow struct {
	Endpoint  string
	Ops       string
	FailedOps string
	Events    int
	Failed    int
}

// Process is one process (thread group) of the run.
type Process struct {
	PID     uint32
	Program string
	Argv    string
	StartNS uint64 // relative to the run's first event
	EndNS   uint64
	Ended   bool
	Outcome string
	Events  int
}

// CallRow is one tool call and the kernel events in its window.
type CallRow struct {
	ID        string
	Name      string
	Status    string
	Duration  string
	StartNS   uint64 // relative to the run's first event
	EndNS     uint64
	Total     uint64
	ByKind    string
	Events    []EventRow
	Omitted   int
	Completed bool
}

// EventRow is one kernel event, briefly.
type EventRow struct {
	Seq    uint64
	Kind   string
	PID    uint32
	Comm   string
	Object string
}

// Timeline is the SVG geometry of the time view.
type Timeline struct {
	SpanNS  uint64
	Density []Bar // events per bin
	Lanes   []Lane
	Width   int
	Height  int
	Ticks   []Tick
	// LanesOmitted counts processes and tool calls past the lane limit.
	LanesOmitted int
}

// Bar is one rectangle.
type Bar struct {
	X, Y, W, H float64
	Title      string
}

// Lane is one row of the timeline: a process or a tool call.
type Lane struct {
	Label string
	Y     float64
	Bar   Bar
	Class string // "proc" or "call"
}

// Tick is one x-axis label.
type Tick struct {
	X      float64
	Label  string
	Anchor string // SVG text-anchor: the last label ends at the axis end
}

// Build computes the page for one bundle.
func Build(archive string, b *evidence.Bundle) Page {
	p := Page{Archive: archive, Run: b.Run, Health: b.Health, Events: len(b.Kernel), HasSDK: b.Correlation != nil}
	p.Duration = runDuration(b.Run)
	p.Complete = b.Health.KernelLayer.Status == wire.LayerComplete && b.Health.CgroupCorrelation.Status == wire.CorrelationClean
	p.BannerClass, p.Banner = "ok", "complete record: kernel layer complete, cgroup correlation clean"
	if !p.Complete {
		p.BannerClass = "warn"
		p.Banner = fmt.Sprintf("incomplete record: kernel layer %s, cgroup correlation %s; actions may be missing",
			b.Health.KernelLayer.Status, b.Health.CgroupCorrelation.Status)
	} else if n := b.Unrecorded(); n > 0 {
		p.Complete = false
		p.BannerClass = "warn"
		p.Banner = fmt.Sprintf("kernel layer complete, cgroup correlation clean, but %d event(s) acted on files or addresses the record does not name (vigil inspect lists them)", n)
	}
	var t0, t1 uint64
	if len(b.Kernel) > 0 {
		t0, t1 = b.Kernel[0].TimeNS, b.Kernel[0].TimeNS
		for i := range b.Kernel {
			t0, t1 = min(t0, b.Kernel[i].TimeNS), max(t1, b.Kernel[i].TimeNS)
		}
	}
	p.Processes = processes(b.Kernel, t0)
	p.Files, p.Endpoints = objects(b.Kernel)
	p.Execs = execs(b.Kernel)
	if b.Correlation != nil {
		p.ToolCalls = toolCalls(b, t0)
		p.Unattributed = b.Correlation.Unattributed.Total
		for _, c := range p.ToolCalls {
			t1 = max(t1, t0+c.EndNS)
		}
	}
	p.Timeline = timeline(b.Kernel, p.Processes, p.ToolCalls, t0, t1)
	return p
}

func runDuration(r wire.Run) string {
	a, err1 := time.Parse(time.RFC3339Nano, r.StartTime)
	z, err2 := time.Parse(time.RFC3339Nano, r.EndTime)
	if err1 != nil || err2 != nil {
		return "unknown"
	}
	return z.Sub(a).Round(time.Microsecond).String()
}

func processes(kernel []wire.Kernel, t0 uint64) []Process {
	byPID := map[uint32]*Process{}
	var order []uint32
	get := func(pid uint32, ts uint64) *Process {
		p, ok := byPID[pid]
		if !ok {
			p = &Process{PID: pid, StartNS: ts - t0, EndNS: ts - t0}
			byPID[pid] = p
			order = append(order, pid)
		}
		return p
	}
	for i := range kernel {
		e := &kernel[i]
		if e.Fork != nil && !e.Fork.Thread {
			c := get(e.Fork.ChildPID, e.TimeNS)
			c.Program = string(e.Comm)
			if e.Fork.Entered {
				// The parent is vigil placing the run's first task in
				// the session, not a process of the run.
				c.Events++
				continue
			}
		}
		p := get(e.PID, e.TimeNS)
		p.Events++
		p.EndNS = max(p.EndNS, e.TimeNS-t0)
		switch {
		case e.Exec != nil:
			p.Program = string(e.Exec.File.Path)
			p.Argv = joinArgv(e.Exec.Argv, e.Exec.ArgvTruncated)
		case e.Exit != nil && e.Exit.GroupDead:
			p.Ended = true
			p.Outcome = fmt.Sprintf("exit %d", e.Exit.Code)
			if e.Exit.Signal != 0 {
				p.Outcome = fmt.Sprintf("signal %d", e.Exit.Signal)
			}
		}
		if p.Program == "" {
			p.Program = string(e.Comm)
		}
	}
	out := make([]Process, 0, len(order))
	for _, pid := range order {
		out = append(out, *byPID[pid])
	}
	return out
}

func joinArgv(argv []wire.Bytes, truncated bool) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = string(a)
	}
	s := strings.Join(parts, " ")
	if truncated {
		s += " …"
	}
	return s
}

// objects groups the run's actions by file path and by endpoint.
func objects(kernel []wire.Kernel) (Table[FileRow], Table[EndpointRow]) {
	type agg struct {
		ops    map[evidence.Op]bool
		failOp map[evidence.Op]bool
		events int
		failed int
		last   uint64
	}
	files, eps := map[string]*agg{}, map[string]*agg{}
	var acts []evidence.Action
	for i := range kernel {
		e := &kernel[i]
		acts = evidence.Actions(e, acts[:0])
		for _, a := range acts {
			if a.Op == evidence.OpExec {
				continue // in the exec table
			}
			m := files
			if a.Op.IsNetwork() {
				m = eps
			}
			for _, o := range a.Objects() {
				g, ok := m[o]
				if !ok {
					g = &agg{ops: map[evidence.Op]bool{}, failOp: map[evidence.Op]bool{}, last: ^uint64(0)}
					m[o] = g
				}
				if a.Failed {
					g.failOp[a.Op] = true
				} else {
					g.ops[a.Op] = true
				}
				if g.last != e.Seq {
					g.events++
					g.last = e.Seq
				}
				if a.Failed {
					g.failed++
				}
			}
		}
	}
	opsText := func(ops map[evidence.Op]bool) string {
		var s []string
		for _, op := range evidence.Ops {
			if ops[op] {
				s = append(s, string(op))
			}
		}
		return strings.Join(s, " ")
	}
	var fr []FileRow
	for k, g := range files {
		fr = append(fr, FileRow{Path: k, Ops: opsText(g.ops), FailedOps: opsText(g.failOp), Events: g.events, Failed: g.failed})
	}
	slices.SortFunc(fr, func(a, b FileRow) int { return cmp.Compare(a.Path, b.Path) })
	var er []EndpointRow
	for k, g := range eps {
		er = append(er, EndpointRow{Endpoint: k, Ops: opsText(g.ops), FailedOps: opsText(g.failOp), Events: g.events, Failed: g.failed})
	}
	slices.SortFunc(er, func(a, b EndpointRow) int { return cmp.Compare(a.Endpoint, b.Endpoint) })
	return newTable(fr), newTable(er)
}

func execs(kernel []wire.Kernel) Table[ExecRow] {
	byPath := map[string]*ExecRow{}
	for i := range kernel {
		x := kernel[i].Exec
		if x == nil {
			continue
		}
		p := string(x.File.Path)
		r, ok := byPath[p]
		if !ok {
			r = &ExecRow{Path: p, Argv: joinArgv(x.Argv, x.ArgvTruncated)}
			byPath[p] = r
		}
		r.Runs++
		if r.Runs <= 5 {
			if r.PIDs != "" {
				r.PIDs += " "
			}
			r.PIDs += fmt.Sprint(kernel[i].PID)
		} else if r.Runs == 6 {
			r.PIDs += " …"
		}
	}
	rows := make([]ExecRow, 0, len(byPath))
	for _, r := range byPath {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b ExecRow) int { return cmp.Compare(a.Path, b.Path) })
	return newTable(rows)
}

func toolCalls(b *evidence.Bundle, t0 uint64) []CallRow {
	var out []CallRow
	for _, tc := range b.Correlation.ToolCalls {
		c := CallRow{ID: tc.ToolCallID, Name: tc.ToolName, Status: string(tc.Status), Total: tc.Kernel.Total, Completed: tc.Completed}
		if tc.StartedMonoNS >= t0 {
			c.StartNS = tc.StartedMonoNS - t0
		}
		c.EndNS = c.StartNS
		if tc.Completed {
			c.Duration = time.Duration(tc.CompletedMonoNS - tc.StartedMonoNS).String()
			if tc.CompletedMonoNS >= t0 {
				c.EndNS = tc.CompletedMonoNS - t0
			}
		} else {
			c.Status, c.Duration = "not completed", "open to the end of the run"
			if n := len(b.Kernel); n > 0 {
				c.EndNS = b.Kernel[n-1].TimeNS - t0
			}
		}
		var kinds []string
		for _, k := range wire.Kinds {
			if n := tc.Kernel.ByKind[k]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
		}
		c.ByKind = strings.Join(kinds, ", ")
		var acts []evidence.Action
		events := tc.Kernel.Events(b.Kernel)
		c.Omitted = max(0, len(events)-maxCallEvents)
		for i := range events[:min(len(events), maxCallEvents)] {
			e := &events[i]
			row := EventRow{Seq: e.Seq, Kind: string(e.Kind), PID: e.PID, Comm: string(e.Comm)}
			acts = evidence.Actions(e, acts[:0])
			if len(acts) > 0 {
				var ops []string
				for _, a := range acts {
					ops = append(ops, string(a.Op))
				}
				row.Object = strings.Join(ops, "+") + " " + acts[0].Object()
				if acts[0].Failed {
					row.Object += " (failed)"
				}
			}
			c.Events = append(c.Events, row)
		}
		out = append(out, c)
	}
	return out
}

// Timeline geometry, in SVG user units.
const (
	tlLeft   = 220.0
	tlWidth  = 900.0
	tlDensH  = 60.0
	tlLaneH  = 16.0
	tlTop    = 10.0
	maxLanes = 200
)

func timeline(kernel []wire.Kernel, procs []Process, calls []CallRow, t0, t1 uint64) Timeline {
	span := max(t1-t0, 1)
	x := func(ns uint64) float64 { return tlLeft + tlWidth*float64(ns)/float64(span) }
	t := Timeline{SpanNS: span, Width: int(tlLeft + tlWidth + 20)}
	counts := make([]int, densityBins)
	for i := range kernel {
		bin := int(float64(kernel[i].TimeNS-t0) / float64(span) * densityBins)
		counts[min(bin, densityBins-1)]++
	}
	peak := max(slices.Max(append(counts, 1)), 1)
	bw := tlWidth / densityBins
	for i, n := range counts {
		if n == 0 {
			continue
		}
		h := tlDensH * float64(n) / float64(peak)
		t.Density = append(t.Density, Bar{X: tlLeft + float64(i)*bw, Y: tlTop + tlDensH - h, W: bw, H: h,
			Title: fmt.Sprintf("%d events", n)})
	}
	y := tlTop + tlDensH + 12
	add := func(label, class, title string, a, z uint64) {
		w := max(x(z)-x(a), 2)
		t.Lanes = append(t.Lanes, Lane{Label: label, Y: y, Class: class,
			Bar: Bar{X: x(a), Y: y, W: w, H: tlLaneH - 4, Title: title}})
		y += tlLaneH
	}
	for i, c := range calls {
		if i == maxLanes {
			break
		}
		add(c.Name+" "+c.ID, "call", fmt.Sprintf("%s %s: %s, %s, %d kernel events", c.Name, c.ID, c.Status, c.Duration, c.Total), c.StartNS, c.EndNS)
	}
	for i, p := range procs {
		if i == maxLanes {
			break
		}
		end := "still running at the end of the record"
		if p.Ended {
			end = p.Outcome
		}
		add(fmt.Sprintf("%d %s", p.PID, path.Base(p.Program)), "proc",
			fmt.Sprintf("pid %d %s: %s, %d events", p.PID, p.Argv, end, p.Events), p.StartNS, p.EndNS)
	}
	t.LanesOmitted = max(0, len(calls)-maxLanes) + max(0, len(procs)-maxLanes)
	for i := 0; i <= 4; i++ {
		ns := span * uint64(i) / 4
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		t.Ticks = append(t.Ticks, Tick{X: x(ns), Label: time.Duration(ns).Round(time.Microsecond).String(), Anchor: anchor})
	}
	t.Height = int(y + 24)
	return t
}
