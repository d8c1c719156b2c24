package diff

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule rewrites the run-specific parts of an object's name. Every match
// of Pattern is replaced by Replace (regexp.ReplaceAllString syntax: $1 or
// ${1} for groups).
type Rule struct {
	Name    string         `json:"name"`
	Pattern *regexp.Regexp `json:"-"`
	Replace string         `json:"replace"`
	// PathsOnly: the rule applies to file paths and unix socket paths,
	// not to IP endpoints (whose ports it would otherwise rewrite).
	PathsOnly bool `json:"paths_only"`
}

// String describes the rule in one line.
func (r Rule) String() string {
	scope := "every object"
	if r.PathsOnly {
		scope = "paths"
	}
	return fmt.Sprintf("%s: %s => %s (%s)", r.Name, r.Pattern, r.Replace, scope)
}

// RunIDToken replaces each archive's own run id wherever it appears.
const RunIDToken = "{run}"

// DefaultRules are applied after the run-id rule unless turned off. They
// make names that differ only by what the run happened to be given equal:
//   - proc-pid: /proc/PID and /proc/PID/task/TID become /proc/{pid}(/task/{tid});
//   - mktemp: mktemp's tmp.XXXXXXXXXX becomes tmp.{rand};
//   - vigil-sdk: the pid in vigil's own private SDK event log
//     (/tmp/vigil-sdk-PID-RUN-N.ndjson) becomes {pid}, however short;
//   - hex: runs of 16 or more lowercase hex digits (ids, hashes) become {hex};
//   - number: runs of 4 or more decimal digits (temporary directory
//     suffixes, pids in names, numbered worker files) become {n}, except
//     after a "." (libacl.so.1.1.2301 keeps its version).
//
// They apply to paths only: an IP endpoint's port is compared as is.
func DefaultRules() []Rule {
	return []Rule{
		{Name: "proc-pid", Pattern: regexp.MustCompile(`^/proc/[0-9]+/task/[0-9]+(/|$)`), Replace: "/proc/{pid}/task/{tid}$1", PathsOnly: true},
		{Name: "proc-pid", Pattern: regexp.MustCompile(`^/proc/[0-9]+(/|$)`), Replace: "/proc/{pid}$1", PathsOnly: true},
		{Name: "mktemp", Pattern: regexp.MustCompile(`(^|/)tmp\.[A-Za-z0-9]{6,}(/|$)`), Replace: "${1}tmp.{rand}$2", PathsOnly: true},
		{Name: "vigil-sdk", Pattern: regexp.MustCompile(`(^|/)vigil-sdk-[0-9]+-`), Replace: "${1}vigil-sdk-{pid}-", PathsOnly: true},
		{Name: "hex", Pattern: regexp.MustCompile(`[0-9a-f]{16,}`), Replace: "{hex}", PathsOnly: true},
		{Name: "number", Pattern: regexp.MustCompile(`(^|[^.0-9])[0-9]{4,}`), Replace: "${1}{n}", PathsOnly: true},
	}
}

// ParseRule reads a user rule written REGEX=REPLACEMENT (split at the last
// "="; REPLACEMENT may be empty). User rules apply to every object, paths
// and endpoints ("inet:127.0.0.1:8080", "inet6:[::1]:53", "unix:/run/x"),
// before the default rules, so they see the names as recorded (after the
// run-id rule).
func ParseRule(s string) (Rule, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 {
		return Rule{}, fmt.Errorf("normalize rule %q: want REGEX=REPLACEMENT", s)
	}
	re, err := regexp.Compile(s[:i])
	if err != nil {
		return Rule{}, fmt.Errorf("normalize rule %q: %v", s, err)
	}
	return Rule{Name: "user", Pattern: re, Replace: s[i+1:]}, nil
}

// Normalizer rewrites one run's object names.
type Normalizer struct {
	RunID string
	Rules []Rule
}

// Object normalizes one object name (a path, "unix:PATH", or an IP
// endpoint rendered by evidence.Endpoint.String). Path rules see the path
// without its "unix:" prefix; user rules see the whole name.
func (n Normalizer) Object(s string) string {
	if n.RunID != "" {
		s = strings.ReplaceAll(s, n.RunID, RunIDToken)
	}
	for _, r := range n.Rules {
		if !r.PathsOnly {
			s = r.Pattern.ReplaceAllString(s, r.Replace)
			continue
		}
		prefix, p := "", s
		if strings.HasPrefix(p, "unix:") {
			prefix, p = "unix:", p[len("unix:"):]
		}
		if strings.HasPrefix(p, "/") {
			s = prefix + r.Pattern.ReplaceAllString(p, r.Replace)
		}
	}
	return s
}
