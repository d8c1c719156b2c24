package diff

import (
	"fmt"
	"strings"

	"vigil/internal/wire"
)

// Text renders r for a terminal: health and outcome first, then the
// surface differences ("+" only in B, "-" only in A, "~" in both for a
// different number of names), then per tool call.
func (r Result) Text() string {
	var b strings.Builder
	sideLine := func(tag string, s Side) {
		fmt.Fprintf(&b, "%s  %s  run %s: %s; kernel layer %s, cgroup correlation %s, sdk layer %s, %d events",
			tag, s.Archive, s.RunID, outcomeText(s), s.KernelLayer, s.CgroupCorrelation, s.SDKLayer, s.Events)
		if s.Unrecorded > 0 {
			fmt.Fprintf(&b, " (%d events on objects not recorded)", s.Unrecorded)
		}
		b.WriteString("\n")
	}
	sideLine("A", r.A)
	sideLine("B", r.B)
	if r.Incomplete {
		var why []string
		for _, s := range []struct {
			tag  string
			side Side
		}{{"A", r.A}, {"B", r.B}} {
			if s.side.KernelLayer != wire.LayerComplete {
				why = append(why, fmt.Sprintf("%s's kernel layer is %s", s.tag, s.side.KernelLayer))
			}
			if s.side.CgroupCorrelation != wire.CorrelationClean {
				why = append(why, fmt.Sprintf("%s's cgroup correlation is %s", s.tag, s.side.CgroupCorrelation))
			}
			if s.side.Unrecorded > 0 {
				why = append(why, fmt.Sprintf("%s has %d events on objects it does not name", s.tag, s.side.Unrecorded))
			}
		}
		fmt.Fprintf(&b, "warning: a record is incomplete (%s): a difference (or its absence) may be an event that record missed\n", strings.Join(why, "; "))
	}
	if len(r.Health) > 0 {
		b.WriteString("\nhealth and outcome\n")
		for _, c := range r.Health {
			fmt.Fprintf(&b, "  ~ %-20s %s -> %s\n", c.Field, c.A, c.B)
		}
	}
	writeSections(&b, r.Sections, "")
	if !r.ToolCallsCompared {
		fmt.Fprintf(&b, "\ntool calls not compared: %s\n", r.ToolCallsNote)
	}
	for _, c := range r.ToolCalls {
		switch c.Presence {
		case "a":
			fmt.Fprintf(&b, "\ntool call %s: only in A\n", c.Key)
		case "b":
			fmt.Fprintf(&b, "\ntool call %s: only in B\n", c.Key)
		default:
			fmt.Fprintf(&b, "\ntool call %s\n", c.Key)
		}
		if c.Status != nil {
			fmt.Fprintf(&b, "  ~ status %s -> %s\n", c.Status.A, c.Status.B)
		}
		writeSections(&b, c.Sections, "  ")
	}
	if r.Equal {
		b.WriteString("\nno differences\n")
	} else {
		fmt.Fprintf(&b, "\n%d difference(s)\n", r.Differences)
	}
	return b.String()
}

func outcomeText(s Side) string {
	if s.Signal != 0 {
		return fmt.Sprintf("killed by signal %d", s.Signal)
	}
	return fmt.Sprintf("exit %d", s.ExitCode)
}

func writeSections(b *strings.Builder, ss []Section, indent string) {
	for _, s := range ss {
		if indent == "" {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%s%s\n", indent, s.Name)
		for _, it := range s.Removed {
			fmt.Fprintf(b, "%s  - %s%s\n", indent, it.Object, names(it.A))
		}
		for _, it := range s.Added {
			fmt.Fprintf(b, "%s  + %s%s\n", indent, it.Object, names(it.B))
		}
		for _, it := range s.Changed {
			fmt.Fprintf(b, "%s  ~ %s  (%d -> %d names)\n", indent, it.Object, it.A, it.B)
		}
	}
}

// names notes how many distinct names a normalized object stands for,
// when more than one.
func names(n int) string {
	if n > 1 {
		return fmt.Sprintf("  (%d names)", n)
	}
	return ""
}
