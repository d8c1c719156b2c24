package policy

import (
	"fmt"
	"net/url"
	"strings"
)

// SARIF 2.1.0 (OASIS) output, so that code-scanning UIs can show
// violations. One result per violation; the rule of the result is the
// policy rule that denied it (or "default"); events, processes and tool
// calls are in the result's properties.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	Properties  map[string]any    `json:"properties"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name    string      `json:"name"`
	Version string      `json:"version"`
	Rules   []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	ShortDescription     sarifText     `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties map[string]any  `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// SARIFSchemaURI is the schema location the log names.
const SARIFSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SARIF renders r as a SARIF 2.1.0 log; p supplies the rule texts and
// version is vigil's.
func (r Result) SARIF(p *Policy, version string) any {
	rules := []sarifRule{}
	index := map[string]int{}
	addRule := func(id, text string) {
		if _, ok := index[id]; ok {
			return
		}
		index[id] = len(rules)
		rules = append(rules, sarifRule{ID: id, ShortDescription: sarifText{text}, DefaultConfiguration: sarifRuleConf{"error"}})
	}
	for i := range p.Rules {
		if p.Rules[i].Action == Deny {
			addRule(p.Rules[i].Name, ruleText(&p.Rules[i]))
		}
	}
	if p.Default == Deny {
		addRule(DefaultRule, "the policy's default: deny what no rule allows")
	}
	results := []sarifResult{}
	for _, v := range r.Violations {
		loc := sarifLocation{}
		if strings.HasPrefix(v.Object, "/") {
			u := url.URL{Scheme: "file", Path: v.Object}
			loc.PhysicalLocation = &sarifPhysical{sarifArtifact{u.String()}}
		} else {
			loc.LogicalLocations = []sarifLogical{{Name: v.Object, FullyQualifiedName: v.Object, Kind: "endpoint"}}
		}
		pids := map[uint32]bool{}
		var calls []string
		for _, e := range v.Events {
			pids[e.PID] = true
			for _, c := range e.ToolCalls {
				calls = append(calls, c.ID+" ("+c.Name+")")
			}
		}
		msg := fmt.Sprintf("%s %s denied by rule %s: %d event(s), first seq %d (pid %d, %s)", v.Op, v.Object, v.Rule,
			len(v.Events), v.Events[0].Seq, v.Events[0].PID, v.Events[0].Comm)
		if len(calls) > 0 {
			msg += "; in tool call " + calls[0]
		}
		results = append(results, sarifResult{
			RuleID: v.Rule, RuleIndex: index[v.Rule], Level: "error", Message: sarifText{msg},
			Locations:  []sarifLocation{loc},
			Properties: map[string]any{"op": v.Op, "object": v.Object, "events": v.Events, "run_id": r.RunID},
		})
	}
	inv := sarifInvocation{ExecutionSuccessful: true}
	if !r.Complete {
		inv.Notifications = append(inv.Notifications, sarifNotification{Level: "warning",
			Message: sarifText{r.Summary + ": " + strings.Join(r.IncompleteReasons, "; ")}})
	}
	return sarifLog{
		Schema:  SARIFSchemaURI,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:        sarifTool{sarifDriver{Name: "vigil", Version: version, Rules: rules}},
			Invocations: []sarifInvocation{inv},
			Results:     results,
			Properties:  map[string]any{"run_id": r.RunID, "policy": r.Policy, "status": r.Status, "complete": r.Complete},
		}},
	}
}

func ruleText(r *Rule) string {
	if r.Description != "" {
		return r.Description
	}
	var objs []string
	objs = append(objs, r.Paths...)
	objs = append(objs, r.Endpoints...)
	s := "deny"
	if len(r.Ops) > 0 {
		ops := make([]string, len(r.Ops))
		for i, o := range r.Ops {
			ops[i] = string(o)
		}
		s += " " + strings.Join(ops, ",")
	}
	if len(objs) > 0 {
		s += " on " + strings.Join(objs, ", ")
	}
	if r.Tool != "" {
		s += " in tool " + r.Tool
	}
	return s
}
