package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

// Schema is the schema id a policy document names.
const Schema = "vigil.policy/v1"

// Decisions.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Policy is a parsed, compiled policy.
type Policy struct {
	Schema      string `json:"schema"`
	Description string `json:"description,omitempty"`
	Default     string `json:"default"`
	Attempts    bool   `json:"attempts,omitempty"`
	Rules       []Rule `json:"rules"`
	// Source names where the policy came from (its file).
	Source string `json:"-"`
}

// Rule is one allow or deny rule.
type Rule struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Action      string        `json:"action"`
	Ops         []evidence.Op `json:"ops,omitempty"`
	Paths       []string      `json:"paths,omitempty"`
	Endpoints   []string      `json:"endpoints,omitempty"`
	Tool        string        `json:"tool,omitempty"`

	endpoints []endpointPattern
}

// Load reads a policy file (YAML or JSON). Every error is one line naming
// the file and what is wrong.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("policy %s: %v", path, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", path, err)
	}
	p.Source = path
	return p, nil
}

// Parse parses and compiles a policy document (YAML or JSON).
func Parse(data []byte) (*Policy, error) {
	// Strict: a key given twice is an error, not "the last one wins".
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %v", oneLine(err))
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
		return nil, errors.New("the file is empty (a policy needs schema, default and rules)")
	}
	// A misspelt key is named as such before the schema reports what
	// the misspelling left missing.
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil && strings.Contains(err.Error(), "unknown field") {
		// The document may be YAML: the decoder's "json: " says nothing.
		return nil, errors.New(strings.TrimPrefix(oneLine(err), "json: "))
	}
	if err := wire.Validate("policy", js); err != nil {
		if strings.Contains(err.Error(), "got boolean, want string") {
			err = fmt.Errorf("%v (YAML reads y, n, yes, no, on and off as booleans: quote the value)", err)
		}
		return nil, err
	}
	p = Policy{}
	dec = json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, oneLineErr(err)
	}
	if err := p.compile(); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *Policy) compile() error {
	seen := map[string]bool{}
	for i := range p.Rules {
		r := &p.Rules[i]
		if seen[r.Name] {
			return fmt.Errorf("rule %q: the name is used twice", r.Name)
		}
		seen[r.Name] = true
		for _, g := range r.Paths {
			if err := checkGlob(g); err != nil {
				return fmt.Errorf("rule %q: path %q: %v", r.Name, g, err)
			}
		}
		for _, s := range r.Endpoints {
			e, err := parseEndpoint(s)
			if err != nil {
				return fmt.Errorf("rule %q: endpoint %q: %v", r.Name, s, err)
			}
			r.endpoints = append(r.endpoints, e)
		}
		ops := r.Ops
		if len(ops) == 0 {
			ops = evidence.Ops
		}
		if len(r.Paths) > 0 && !slices.ContainsFunc(ops, func(o evidence.Op) bool { return !o.IsNetwork() }) {
			return fmt.Errorf("rule %q: paths apply to file operations and exec, but ops lists only network operations", r.Name)
		}
		if len(r.Endpoints) > 0 && !slices.ContainsFunc(ops, evidence.Op.IsNetwork) {
			return fmt.Errorf("rule %q: endpoints apply to network operations, but ops lists none", r.Name)
		}
	}
	return nil
}

// ops is the rule's operations (all when it names none).
func (r *Rule) ops() []evidence.Op {
	if len(r.Ops) == 0 {
		return evidence.Ops
	}
	return r.Ops
}

func oneLine(err error) string {
	return string(bytes.ReplaceAll([]byte(err.Error()), []byte("\n"), []byte(" ")))
}

func oneLineErr(err error) error { return fmt.Errorf("%s", oneLine(err)) }
