package policy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// ResultSchema is the schema id of vigil check --format json output.
const ResultSchema = "vigil.policy-check/v1"

// Statuses of a check.
const (
	StatusPass = "pass" // no violation, and the record is complete for the policy
	StatusFail = "fail" // at least one violation
	// StatusIncomplete: no violation seen, but the record is not complete
	// for what the policy asks, so it cannot pass.
	StatusIncomplete = "incomplete"
)

// Result is the outcome of checking one run against one policy.
type Result struct {
	Schema string `json:"schema"` // ResultSchema
	Policy string `json:"policy"`
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	// Complete: the record shows every action the policy could deny
	// (kernel layer complete, cgroup correlation clean, every needed
	// operation class covered, no event it could deny on an object the
	// record does not name (evidence.Unrecorded); an SDK layer for
	// tool-scoped rules).
	Complete bool `json:"complete"`
	// IncompleteReasons say why Complete is false.
	IncompleteReasons []string `json:"incomplete_reasons"`
	// Summary is one line for humans.
	Summary string `json:"summary"`
	// ActionsChecked counts the actions judged; Allowed those a rule or
	// the default allowed; FailedSkipped the failed calls not judged
	// (the policy's attempts is false).
	ActionsChecked int `json:"actions_checked"`
	Allowed        int `json:"allowed"`
	// Denied counts the judged actions no rule allowed; Violations group
	// them by (rule, op, object).
	Denied        int         `json:"denied"`
	FailedSkipped int         `json:"failed_skipped"`
	Violations    []Violation `json:"violations"`
}

// Violation is one denied (op, object) with every event that did it.
type Violation struct {
	// Rule is the name of the deny rule that matched, or "default" when
	// no rule matched and the policy's default is deny.
	Rule   string     `json:"rule"`
	Op     string     `json:"op"`
	Object string     `json:"object"`
	Events []EventRef `json:"events"`
}

// EventRef is one kernel event behind a violation.
type EventRef struct {
	Seq    uint64     `json:"seq"`
	PID    uint32     `json:"pid"`
	TID    uint32     `json:"tid"`
	Comm   wire.Bytes `json:"comm"`
	Failed bool       `json:"failed"`
	// ToolCalls are the tool calls whose window holds the event (empty
	// outside every call, or without an SDK layer).
	ToolCalls []CallRef `json:"tool_calls"`
}

// CallRef names one tool call.
type CallRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// DefaultRule names the policy default in a violation.
const DefaultRule = "default"

// Check judges every action of b against p.
func Check(b *evidence.Bundle, p *Policy) Result {
	r := Result{Schema: ResultSchema, Policy: p.Source, RunID: b.Run.RunID, Violations: []Violation{}}
	r.IncompleteReasons = incompleteness(b, p)
	calls := callsBySeq(b)
	type key struct{ rule, op, object string }
	index := map[key]int{}
	var acts []evidence.Action
	unseen := unrecorded{deniable: p.deniable(), attempts: p.Attempts}
	for i := range b.Kernel {
		e := &b.Kernel[i]
		unseen.add(e)
		acts = evidence.Actions(e, acts[:0])
		for _, a := range acts {
			if a.Failed && !p.Attempts {
				r.FailedSkipped++
				continue
			}
			for _, obj := range a.Objects() {
				r.ActionsChecked++
				rule, decision := p.decide(a, obj, calls[e.Seq])
				if decision == Allow {
					r.Allowed++
					continue
				}
				r.Denied++
				k := key{rule, string(a.Op), obj}
				j, ok := index[k]
				if !ok {
					j = len(r.Violations)
					index[k] = j
					r.Violations = append(r.Violations, Violation{Rule: rule, Op: string(a.Op), Object: obj})
				}
				v := &r.Violations[j]
				if n := len(v.Events); n > 0 && v.Events[n-1].Seq == e.Seq {
					continue // one event, one object: counted once
				}
				v.Events = append(v.Events, EventRef{Seq: e.Seq, PID: e.PID, TID: e.TID, Comm: e.Comm, Failed: a.Failed,
					ToolCalls: append([]CallRef{}, calls[e.Seq]...)})
			}
		}
	}
	r.IncompleteReasons = append(r.IncompleteReasons, unseen.reasons()...)
	r.Complete = len(r.IncompleteReasons) == 0
	slices.SortStableFunc(r.Violations, func(x, y Violation) int { return cmp.Compare(x.Events[0].Seq, y.Events[0].Seq) })
	switch {
	case len(r.Violations) > 0:
		r.Status = StatusFail
		r.Summary = fmt.Sprintf("%d denied of %d judged actions, on %d (operation, object) pairs", r.Denied, r.ActionsChecked, len(r.Violations))
		if !r.Complete {
			r.Summary += "; the record is incomplete, so there may be more"
		}
	case !r.Complete:
		r.Status = StatusIncomplete
		r.Summary = "no violation seen in an incomplete record"
	default:
		r.Status = StatusPass
		r.Summary = fmt.Sprintf("no violation in %d judged actions", r.ActionsChecked)
	}
	return r
}

// decide returns the rule that decided (a, obj) and its decision.
func (p *Policy) decide(a evidence.Action, obj string, calls []CallRef) (string, string) {
	for i := range p.Rules {
		if p.Rules[i].matches(a, obj, calls) {
			return p.Rules[i].Name, p.Rules[i].Action
		}
	}
	return DefaultRule, p.Default
}

func (r *Rule) matches(a evidence.Action, obj string, calls []CallRef) bool {
	if len(r.Ops) > 0 && !slices.Contains(r.Ops, a.Op) {
		return false
	}
	if r.Tool != "" && !slices.ContainsFunc(calls, func(c CallRef) bool { return c.Name == r.Tool }) {
		return false
	}
	if a.Op.IsNetwork() {
		if len(r.Paths) > 0 && len(r.Endpoints) == 0 {
			return false
		}
		return len(r.Endpoints) == 0 || matchEndpoint(r.endpoints, a.Endpoint)
	}
	if len(r.Endpoints) > 0 && len(r.Paths) == 0 {
		return false
	}
	return len(r.Paths) == 0 || matchPath(r.Paths, obj)
}

// deniable lists the operations whose actions the policy could deny: all
// of them under a deny default, otherwise those of its deny rules.
func (p *Policy) deniable() []evidence.Op {
	if p.Default == Deny {
		return evidence.Ops
	}
	var out []evidence.Op
	for i := range p.Rules {
		if p.Rules[i].Action != Deny {
			continue
		}
		for _, op := range p.Rules[i].ops() {
			if !slices.Contains(out, op) {
				out = append(out, op)
			}
		}
	}
	return out
}

// incompleteness lists why b cannot show every action p could deny.
func incompleteness(b *evidence.Bundle, p *Policy) []string {
	out := []string{}
	h := b.Health
	if h.KernelLayer.Status != wire.LayerComplete {
		out = append(out, string("kernel layer "+h.KernelLayer.Status))
	}
	if h.CgroupCorrelation.Status != wire.CorrelationClean {
		out = append(out, string("cgroup correlation "+h.CgroupCorrelation.Status))
	}
	covered := map[string]bool{}
	for _, c := range h.Coverage.Covered {
		if c.Attached {
			covered[c.Class] = true
		}
	}
	untraced := slices.ContainsFunc(h.Coverage.NotCovered, func(u wire.UncoveredClass) bool { return u.Class == wire.UncoveredIOUringUntraced })
	for _, op := range p.deniable() {
		for _, k := range evidence.OpKinds[op] {
			if !covered[string(k)] {
				out = append(out, fmt.Sprintf("%s: event kind %s is not covered by this record", op, k))
			}
		}
		if untraced && covered[string(wire.KindIOUring)] && evidence.IOUringMay(op) {
			out = append(out, fmt.Sprintf("%s: io_uring requests that skip the completion hook are neither recorded nor counted on this host (%s)", op, wire.UncoveredIOUringUntraced))
		}
	}
	scoped := slices.ContainsFunc(p.Rules, func(r Rule) bool { return r.Tool != "" })
	if scoped && h.SDKLayer.Status != wire.SDKComplete {
		out = append(out, string("rules scoped to a tool need the SDK layer, which is "+h.SDKLayer.Status))
	}
	return out
}

// callsBySeq maps each kernel event's seq to the tool calls holding it.
func callsBySeq(b *evidence.Bundle) map[uint64][]CallRef {
	out := map[uint64][]CallRef{}
	if b.Correlation == nil {
		return out
	}
	for _, tc := range b.Correlation.ToolCalls {
		for _, q := range tc.Kernel.Seqs() {
			out[q] = append(out[q], CallRef{ID: tc.ToolCallID, Name: tc.ToolName})
		}
	}
	return out
}

// unrecorded counts the events that did something the policy could deny
// on an object the record does not name (evidence.Unrecorded): io_uring
// operations whose arguments the capture does not decode, opens by handle
// without a file.
type unrecorded struct {
	deniable []evidence.Op
	attempts bool
	// byOp counts, per deniable Op, the events by operation.
	byOp    map[evidence.Op]map[string]int
	unknown map[string]int
}

func (u *unrecorded) add(e *wire.Kernel) {
	what, ops, failed, unknown := evidence.Unrecorded(e)
	if what == "" || failed && !u.attempts {
		return // nothing unseen, or an attempt and the policy judges none
	}
	if unknown {
		if u.unknown == nil {
			u.unknown = map[string]int{}
		}
		u.unknown[what]++
		return
	}
	for _, op := range ops {
		if !slices.Contains(u.deniable, op) {
			continue
		}
		if u.byOp == nil {
			u.byOp = map[evidence.Op]map[string]int{}
		}
		if u.byOp[op] == nil {
			u.byOp[op] = map[string]int{}
		}
		u.byOp[op][what]++
	}
}

// reasons says, per Op in evidence.Ops order, how many such events there
// were; then the operations vigil cannot name.
func (u *unrecorded) reasons() []string {
	var out []string
	for _, op := range evidence.Ops {
		for _, name := range slices.Sorted(maps.Keys(u.byOp[op])) {
			out = append(out, fmt.Sprintf("%s: %d %s event(s) whose object is not recorded", op, u.byOp[op][name], name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(u.unknown)) {
		out = append(out, fmt.Sprintf("%d %s event(s) of an operation vigil cannot name: what they did is not recorded", u.unknown[name], name))
	}
	return out
}
