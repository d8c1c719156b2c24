package evidence

import (
	"sort"

	"vigil/internal/wire"
)

// SummarySchema is the schema id of vigil inspect --json output.
const SummarySchema = "vigil.inspect/v2"

// Summary is what vigil inspect reports about an archive (and, as JSON,
// the shape of inspect --json; schema "inspect"). Health is the archive's
// observation-health.json unchanged; the rest is condensed from the other
// entries.
type Summary struct {
	Schema       string   `json:"schema"` // SummarySchema
	RunID        string   `json:"run_id"`
	VigilVersion string   `json:"vigil_version"`
	Argv         []string `json:"argv"`
	ExitCode     int      `json:"exit_code"`
	Signal       int      `json:"signal"`
	StartTime    string   `json:"start_time"`
	EndTime      string   `json:"end_time"`
	HostClass    string   `json:"host_class"`
	// Programs is run.json's capture_programs: where the kernel
	// capture's programs came from (absent without kernel capture).
	Programs *wire.CapturePrograms `json:"capture_programs,omitempty"`
	Health   wire.Health           `json:"health"`
	// TotalEvents is the number of lines in layers/kernel.ndjson.
	TotalEvents uint64 `json:"total_events"`
	// TopPaths are the most-opened paths (failed opens included), most
	// opens first, ties by path; at most the requested number.
	TopPaths []PathCount `json:"top_paths"`
	// DistinctPaths is how many different paths were opened, so a
	// clipped TopPaths says how much it left out.
	DistinctPaths int          `json:"distinct_paths"`
	FilesRead     int          `json:"files_read"`
	FilesWritten  int          `json:"files_written"`
	FilesCreated  int          `json:"files_created"`
	OpenFailures  int          `json:"open_failures"`
	FilesDeleted  int          `json:"files_deleted"`
	Execs         []wire.Bytes `json:"execs"`
	Network       []Endpoint   `json:"network"`
	NetworkSent   []Endpoint   `json:"network_sent"`
	NetworkLocal  []Endpoint   `json:"network_local"`
	ToolCalls     []CallBrief  `json:"tool_calls"`
	// Unattributed counts kernel events inside no tool call's window; zero
	// when there is no SDK layer.
	Unattributed uint64 `json:"unattributed_events"`
	// Incomplete are the first events that lack a part (their
	// "incomplete"), at most the requested number; health counts them all.
	Incomplete []IncompleteEvent `json:"incomplete_events,omitempty"`
	// Unrecorded counts, by operation ("io_uring unlinkat"), the events
	// that acted on an object the record does not name (Unrecorded),
	// failed ones included.
	Unrecorded map[string]uint64 `json:"unrecorded,omitempty"`
	// Changes are what the run changed in the file system, from the
	// capability surface: each non-empty list with its length and its
	// first paths (at most the requested number).
	Changes []ChangeList `json:"changes,omitempty"`
}

// ChangeList is the start of one capability-surface list of changes.
type ChangeList struct {
	List  string       `json:"list"` // the surface's name: files_created, ...
	Total int          `json:"total"`
	Paths []wire.Bytes `json:"paths"` // a rename is "FROM -> TO"
}

// IncompleteEvent names one event that lacks a part, and which.
type IncompleteEvent struct {
	Seq   uint64     `json:"seq"`
	Kind  wire.Kind  `json:"kind"`
	PID   uint32     `json:"pid"`
	Comm  wire.Bytes `json:"comm"`
	Parts []string   `json:"parts"`
}

// PathCount is a path and how often it was opened.
type PathCount struct {
	Path  wire.Bytes `json:"path"`
	Opens uint64     `json:"opens"`
}

// CallBrief condenses one correlation-report tool call.
type CallBrief struct {
	ToolCallID string      `json:"tool_call_id"`
	ToolName   string      `json:"tool_name"`
	Status     wire.Status `json:"status"`
	Completed  bool        `json:"completed"`
	// DurationNS is completed minus started monotonic time; 0 when the
	// call never completed.
	DurationNS uint64               `json:"duration_ns"`
	Events     uint64               `json:"kernel_events"`
	ByKind     map[wire.Kind]uint64 `json:"by_kind"`
}

// Summarize condenses b, listing at most top paths.
func Summarize(b *Bundle, top int) Summary {
	s := Summary{
		Schema:       SummarySchema,
		RunID:        b.Run.RunID,
		VigilVersion: b.Run.VigilVersion,
		Argv:         b.Run.Argv,
		ExitCode:     b.Run.ExitCode,
		Signal:       b.Run.Signal,
		StartTime:    b.Run.StartTime,
		EndTime:      b.Run.EndTime,
		HostClass:    b.Run.Host.HostClass,
		Programs:     b.Run.Programs,
		Health:       b.Health,
		TotalEvents:  uint64(len(b.Kernel)),
		FilesRead:    len(b.Surface.FilesRead),
		FilesWritten: len(b.Surface.FilesWritten),
		FilesCreated: len(b.Surface.FilesCreated),
		OpenFailures: len(b.Surface.OpenFailures),
		FilesDeleted: len(b.Surface.FilesDeleted),
		Execs:        append([]wire.Bytes{}, b.Surface.Execs...),
		Network:      append([]Endpoint{}, b.Surface.Network...),
		NetworkSent:  append([]Endpoint{}, b.Surface.NetworkSent...),
		NetworkLocal: append([]Endpoint{}, b.Surface.NetworkLocal...),
		ToolCalls:    []CallBrief{},
	}
	renames := make([]wire.Bytes, len(b.Surface.FilesRenamed))
	for i, r := range b.Surface.FilesRenamed {
		renames[i] = r.From + " -> " + r.To
	}
	for _, l := range []struct {
		name  string
		paths []wire.Bytes
	}{
		{"files_created", b.Surface.FilesCreated}, {"files_deleted", b.Surface.FilesDeleted},
		{"files_renamed", renames}, {"dirs_created", b.Surface.DirsCreated},
		{"links_created", b.Surface.LinksCreated}, {"mode_changed", b.Surface.ModeChanged},
		{"files_truncated", b.Surface.FilesTruncated}, {"files_written", b.Surface.FilesWritten},
	} {
		if len(l.paths) > 0 {
			s.Changes = append(s.Changes, ChangeList{List: l.name, Total: len(l.paths), Paths: l.paths[:min(len(l.paths), max(top, 0))]})
		}
	}
	opens := map[wire.Bytes]uint64{}
	for i := range b.Kernel {
		if e := &b.Kernel[i]; len(e.Incomplete) > 0 && len(s.Incomplete) < top {
			s.Incomplete = append(s.Incomplete, IncompleteEvent{Seq: e.Seq, Kind: e.Kind, PID: e.PID, Comm: e.Comm, Parts: e.Incomplete})
		}
		if what, _, _, _ := Unrecorded(&b.Kernel[i]); what != "" {
			if s.Unrecorded == nil {
				s.Unrecorded = map[string]uint64{}
			}
			s.Unrecorded[what]++
		}
		if o := b.Kernel[i].Open; o != nil {
			switch {
			case o.File != nil:
				opens[o.File.Path]++
			case o.Syscall != "open_by_handle_at": // a handle names no path
				opens[o.Name.Path()]++
			}
		}
	}
	s.DistinctPaths = len(opens)
	s.TopPaths = make([]PathCount, 0, len(opens))
	for p, n := range opens {
		s.TopPaths = append(s.TopPaths, PathCount{p, n})
	}
	sort.Slice(s.TopPaths, func(i, j int) bool {
		a, c := s.TopPaths[i], s.TopPaths[j]
		if a.Opens != c.Opens {
			return a.Opens > c.Opens
		}
		return a.Path < c.Path
	})
	if top >= 0 && len(s.TopPaths) > top {
		s.TopPaths = s.TopPaths[:top]
	}
	if c := b.Correlation; c != nil {
		for _, tc := range c.ToolCalls {
			cb := CallBrief{
				ToolCallID: tc.ToolCallID, ToolName: tc.ToolName, Status: tc.Status,
				Completed: tc.Completed, Events: tc.Kernel.Total, ByKind: tc.Kernel.ByKind,
			}
			if tc.Completed {
				cb.DurationNS = tc.CompletedMonoNS - tc.StartedMonoNS
			}
			s.ToolCalls = append(s.ToolCalls, cb)
		}
		s.Unattributed = c.Unattributed.Total
	}
	return s
}
