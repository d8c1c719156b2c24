package diff

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Schema is the schema id of vigil diff --json output.
const Schema = "vigil.diff/v1"

// Result is the comparison of run A with run B.
type Result struct {
	Schema string `json:"schema"` // Schema
	A      Side   `json:"a"`
	B      Side   `json:"b"`
	// Incomplete: at least one record is not complete (its kernel layer
	// is partial or absent, its cgroup correlation is not clean, or an
	// io_uring operation acted on an object it does not name), so a
	// difference may be an event that record missed, and equality proves
	// less.
	Incomplete bool `json:"incomplete"`
	// Health lists the differences in observation health and outcome,
	// shown first.
	Health []Change `json:"health"`
	// Rules are the normalization rules applied, in order.
	Rules []string `json:"rules"`
	// IgnoreCounts: objects standing for a different number of names
	// were not counted as differences.
	IgnoreCounts bool `json:"ignore_counts"`
	// Sections are the capability-surface differences of the whole run.
	Sections []Section `json:"sections"`
	// ToolCalls compares tool calls matched by name and ordinal
	// ("write_file#1"); nil unless both runs have an SDK layer.
	ToolCalls []CallDiff `json:"tool_calls"`
	// ToolCallsCompared is false when at least one run has no SDK layer
	// (the reason is in ToolCallsNote).
	ToolCallsCompared bool   `json:"tool_calls_compared"`
	ToolCallsNote     string `json:"tool_calls_note,omitempty"`
	// Differences counts every reported difference; Equal is its zero.
	Differences int  `json:"differences"`
	Equal       bool `json:"equal"`
}

// Side identifies one compared run.
type Side struct {
	Archive           string                 `json:"archive"`
	RunID             string                 `json:"run_id"`
	ExitCode          int                    `json:"exit_code"`
	Signal            int                    `json:"signal"`
	KernelLayer       wire.LayerStatus       `json:"kernel_layer"`
	CgroupCorrelation wire.CorrelationStatus `json:"cgroup_correlation"`
	SDKLayer          wire.SDKStatus         `json:"sdk_layer"`
	Events            int                    `json:"events"`
	// Unrecorded counts the events that acted on an object the record
	// does not name (evidence.Unrecorded): what they did cannot show as
	// a difference.
	Unrecorded int `json:"unrecorded"`
}

// Change is one field that differs between the runs.
type Change struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// Section is one list of the capability surface (named as in
// capability-surface.json) after normalization.
type Section struct {
	Name    string `json:"name"`
	Added   []Item `json:"added"`   // in B only
	Removed []Item `json:"removed"` // in A only
	// Changed: in both after normalization, but standing for a different
	// number of distinct names (e.g. 5 numbered worker files, then 10).
	Changed []Item `json:"changed"`
}

// Item is one normalized object and how many distinct names it stands for
// in each run.
type Item struct {
	Object string `json:"object"`
	A      int    `json:"a"`
	B      int    `json:"b"`
}

// CallDiff compares one tool call of each run.
type CallDiff struct {
	Key string `json:"key"` // tool name, "#", ordinal among calls of that name
	// Presence is "both", "a" (only in A) or "b" (only in B).
	Presence string    `json:"presence"`
	Status   *Change   `json:"status,omitempty"`
	Sections []Section `json:"sections"`
}

// Input is one run to compare.
type Input struct {
	Archive string
	Bundle  *evidence.Bundle
}

// Options tune a comparison.
type Options struct {
	// Rules are applied in order after the run-id rule, which always
	// applies (each run's own id).
	Rules []Rule
	// IgnoreCounts: a normalized object in both runs is equal whatever
	// number of names it stands for.
	IgnoreCounts bool
}

// Compare compares run a with run b.
func Compare(a, b Input, opt Options) Result {
	rules := opt.Rules
	na := Normalizer{RunID: a.Bundle.Run.RunID, Rules: rules}
	nb := Normalizer{RunID: b.Bundle.Run.RunID, Rules: rules}
	r := Result{Schema: Schema, A: side(a), B: side(b), Health: []Change{}, Rules: []string{"run-id: each archive's own run id => " + RunIDToken}}
	for _, rule := range rules {
		r.Rules = append(r.Rules, rule.String())
	}
	r.Incomplete = incomplete(r.A) || incomplete(r.B)
	r.Health = healthChanges(a.Bundle, b.Bundle)
	r.IgnoreCounts = opt.IgnoreCounts
	r.Sections = compareSurfaces(a.Bundle.Surface, b.Bundle.Surface, na, nb, opt.IgnoreCounts)
	r.ToolCalls = []CallDiff{}
	switch {
	case a.Bundle.Correlation == nil && b.Bundle.Correlation == nil:
		r.ToolCallsNote = "neither run has an SDK layer"
	case a.Bundle.Correlation == nil:
		r.ToolCallsNote = "run A has no SDK layer"
	case b.Bundle.Correlation == nil:
		r.ToolCallsNote = "run B has no SDK layer"
	default:
		r.ToolCallsCompared = true
		r.ToolCalls = compareCalls(a.Bundle, b.Bundle, na, nb, opt.IgnoreCounts)
	}
	r.Differences = len(r.Health) + countSections(r.Sections)
	for _, c := range r.ToolCalls {
		if c.Presence != "both" {
			r.Differences++
		}
		if c.Status != nil {
			r.Differences++
		}
		r.Differences += countSections(c.Sections)
	}
	r.Equal = r.Differences == 0
	return r
}

func side(in Input) Side {
	b := in.Bundle
	return Side{
		Archive:           in.Archive,
		RunID:             b.Run.RunID,
		ExitCode:          b.Run.ExitCode,
		Signal:            b.Run.Signal,
		KernelLayer:       b.Health.KernelLayer.Status,
		CgroupCorrelation: b.Health.CgroupCorrelation.Status,
		SDKLayer:          b.Health.SDKLayer.Status,
		Events:            len(b.Kernel),
		Unrecorded:        int(b.Unrecorded()),
	}
}

func incomplete(s Side) bool {
	return s.KernelLayer != wire.LayerComplete || s.CgroupCorrelation != wire.CorrelationClean || s.Unrecorded > 0
}

func healthChanges(a, b *evidence.Bundle) []Change {
	out := []Change{}
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Change{Field: field, A: x, B: y})
		}
	}
	add("kernel_layer", string(a.Health.KernelLayer.Status), string(b.Health.KernelLayer.Status))
	add("cgroup_correlation", string(a.Health.CgroupCorrelation.Status), string(b.Health.CgroupCorrelation.Status))
	add("sdk_layer", string(a.Health.SDKLayer.Status), string(b.Health.SDKLayer.Status))
	add("ringbuf_drops", strconv.FormatUint(a.Health.RingbufDrops.Total, 10), strconv.FormatUint(b.Health.RingbufDrops.Total, 10))
	add("exit", outcome(a.Run), outcome(b.Run))
	add("coverage", coverageText(a.Health.Coverage), coverageText(b.Health.Coverage))
	return out
}

func outcome(r wire.Run) string {
	if r.Signal != 0 {
		return fmt.Sprintf("signal %d", r.Signal)
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// coverageText lists the classes covered by an attached hook.
func coverageText(c wire.Coverage) string {
	var on []string
	for _, cl := range c.Covered {
		if cl.Attached {
			on = append(on, cl.Class)
		}
	}
	sort.Strings(on)
	return fmt.Sprint(on)
}

// namedList is one list of the surface, its objects rendered as strings.
type namedList struct {
	name string
	objs []string
}

// surfaceLists names the surface's lists as in capability-surface.json.
func surfaceLists(s evidence.CapabilitySurface) []namedList {
	paths := func(ps []wire.Bytes) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = string(p)
		}
		return out
	}
	eps := func(es []evidence.Endpoint) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.String()
		}
		return out
	}
	renames := make([]string, len(s.FilesRenamed))
	for i, r := range s.FilesRenamed {
		renames[i] = string(r.From) + renameArrow + string(r.To)
	}
	return []namedList{
		{"files_read", paths(s.FilesRead)},
		{"files_written", paths(s.FilesWritten)},
		{"files_created", paths(s.FilesCreated)},
		{"files_deleted", paths(s.FilesDeleted)},
		{"dirs_created", paths(s.DirsCreated)},
		{"files_renamed", renames},
		{"links_created", paths(s.LinksCreated)},
		{"mode_changed", paths(s.ModeChanged)},
		{"files_truncated", paths(s.FilesTruncated)},
		{"open_failures", paths(s.OpenFailures)},
		{"execs", paths(s.Execs)},
		{"exec_failures", paths(s.ExecFailures)},
		{"network", eps(s.Network)},
		{"network_sent", eps(s.NetworkSent)},
		{"network_local", eps(s.NetworkLocal)},
	}
}

// normalizeObject normalizes an object of the named section; both sides
// of a rename ("from -> to").
func normalizeObject(n Normalizer, section, obj string) string {
	if from, to, ok := strings.Cut(obj, renameArrow); ok && section == "files_renamed" {
		return n.Object(from) + renameArrow + n.Object(to)
	}
	return n.Object(obj)
}

const renameArrow = " -> "

// compareSurfaces returns only the sections with a difference, in
// capability-surface.json order.
func compareSurfaces(a, b evidence.CapabilitySurface, na, nb Normalizer, ignoreCounts bool) []Section {
	la, lb := surfaceLists(a), surfaceLists(b)
	out := []Section{}
	for i := range la {
		name := la[i].name
		ca := counted(na, name, la[i].objs)
		cb := counted(nb, name, lb[i].objs)
		s := Section{Name: name, Added: []Item{}, Removed: []Item{}, Changed: []Item{}}
		for k, x := range ca {
			y, ok := cb[k]
			switch {
			case !ok:
				s.Removed = append(s.Removed, Item{Object: k, A: x})
			case x != y && !ignoreCounts:
				s.Changed = append(s.Changed, Item{Object: k, A: x, B: y})
			}
		}
		for k, y := range cb {
			if _, ok := ca[k]; !ok {
				s.Added = append(s.Added, Item{Object: k, B: y})
			}
		}
		byObject := func(p, q Item) int { return cmp.Compare(p.Object, q.Object) }
		slices.SortFunc(s.Added, byObject)
		slices.SortFunc(s.Removed, byObject)
		slices.SortFunc(s.Changed, byObject)
		if len(s.Added)+len(s.Removed)+len(s.Changed) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// counted maps each normalized object to how many distinct names it
// stands for.
func counted(n Normalizer, section string, objs []string) map[string]int {
	m := make(map[string]int, len(objs))
	for _, o := range objs {
		m[normalizeObject(n, section, o)]++
	}
	return m
}

func countSections(ss []Section) int {
	n := 0
	for _, s := range ss {
		n += len(s.Added) + len(s.Removed) + len(s.Changed)
	}
	return n
}

// keyedCall is a tool call with its match key and its own surface.
type keyedCall struct {
	key     string
	status  string
	surface evidence.CapabilitySurface
}

// calls keys b's tool calls by name and ordinal (in start order) and
// builds each one's surface from the kernel events in its window.
func calls(b *evidence.Bundle) map[string]keyedCall {
	tcs := slices.Clone(b.Correlation.ToolCalls)
	slices.SortStableFunc(tcs, func(x, y evidence.ToolCall) int { return cmp.Compare(x.StartedSeq, y.StartedSeq) })
	ordinal := map[string]int{}
	out := make(map[string]keyedCall, len(tcs))
	for _, tc := range tcs {
		ordinal[tc.ToolName]++
		key := tc.ToolName + "#" + strconv.Itoa(ordinal[tc.ToolName])
		status := string(tc.Status)
		if !tc.Completed {
			status = "not completed"
		}
		out[key] = keyedCall{key: key, status: status, surface: evidence.BuildSurface(tc.Kernel.Events(b.Kernel))}
	}
	return out
}

func compareCalls(a, b *evidence.Bundle, na, nb Normalizer, ignoreCounts bool) []CallDiff {
	ca, cb := calls(a), calls(b)
	keys := map[string]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	out := []CallDiff{}
	empty := evidence.BuildSurface(nil)
	for _, k := range sorted {
		x, inA := ca[k]
		y, inB := cb[k]
		d := CallDiff{Key: k, Presence: "both"}
		switch {
		case !inA:
			d.Presence, x.surface = "b", empty
		case !inB:
			d.Presence, y.surface = "a", empty
		case x.status != y.status:
			d.Status = &Change{Field: "status", A: x.status, B: y.status}
		}
		d.Sections = compareSurfaces(x.surface, y.surface, na, nb, ignoreCounts)
		if d.Presence != "both" || d.Status != nil || len(d.Sections) > 0 {
			out = append(out, d)
		}
	}
	return out
}
