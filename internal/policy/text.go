package policy

import (
	"fmt"
	"strings"
)

// maxTextEvents is how many events per violation the text lists; the JSON
// and SARIF forms list them all.
const maxTextEvents = 5

// Text renders r for a terminal.
func (r Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: run %s against %s: %s\n", strings.ToUpper(r.Status), r.RunID, r.Policy, r.Summary)
	for _, why := range r.IncompleteReasons {
		fmt.Fprintf(&b, "  incomplete: %s\n", why)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\n%s %s  (rule %s, %d event(s))\n", v.Op, v.Object, v.Rule, len(v.Events))
		for i, e := range v.Events {
			if i == maxTextEvents {
				fmt.Fprintf(&b, "    ... %d more (--format json lists every event)\n", len(v.Events)-i)
				break
			}
			fmt.Fprintf(&b, "    seq %d  pid %d tid %d comm %s", e.Seq, e.PID, e.TID, e.Comm)
			if e.Failed {
				b.WriteString("  (the call failed)")
			}
			for _, c := range e.ToolCalls {
				fmt.Fprintf(&b, "  tool call %s (%s)", c.ID, c.Name)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\n%d actions judged: %d allowed, %d denied; %d failed calls not judged\n", r.ActionsChecked, r.Allowed, r.Denied, r.FailedSkipped)
	return b.String()
}
