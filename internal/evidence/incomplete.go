package evidence

import (
	"fmt"
	"slices"

	"vigil/internal/wire"
)

// shownIncomplete lists, in wire.IncompleteOrder, the parts an event's
// own fields say were cut (a truncated path or name, argv_truncated):
// its Incomplete must name each of them. What no field can show (a failed
// read, a cut exec filename, symlink target or cgroup path) only
// Incomplete says.
func shownIncomplete(e *wire.Kernel) (path, name, argv bool) {
	resolved := func(p *wire.ResolvedPath) {
		path = path || p != nil && p.Truncated
	}
	named := func(n *wire.Name) {
		if n != nil {
			resolved(n.Dir)
			name = name || n.Truncated
		}
	}
	switch {
	case e.Exec != nil:
		resolved(&e.Exec.File)
		argv = e.Exec.ArgvTruncated
	case e.ExecFailed != nil:
		named(&e.ExecFailed.Name)
	case e.Open != nil:
		resolved(e.Open.File)
		named(&e.Open.Name)
	case e.FileOp != nil:
		resolved(e.FileOp.File)
		named(e.FileOp.Name)
		named(e.FileOp.NewName)
	case e.IOUring != nil:
		resolved(e.IOUring.File)
	}
	return path, name, argv
}

// incompleteDefect says what is wrong with e's Incomplete, or "": every
// part known, each once, in wire.IncompleteOrder, and every part the
// event's fields show cut named.
func incompleteDefect(e *wire.Kernel) string {
	last := -1
	for _, part := range e.Incomplete {
		i := slices.Index(wire.IncompleteOrder, part)
		if i < 0 {
			return fmt.Sprintf("incomplete names %q, not a part an event can lack", part)
		}
		if i <= last {
			return fmt.Sprintf("incomplete names %q twice or out of order", part)
		}
		last = i
	}
	path, name, argv := shownIncomplete(e)
	for _, shown := range []struct {
		cut  bool
		part string
	}{{path, wire.IncompletePath}, {name, wire.IncompleteName}, {argv, wire.IncompleteArgv}} {
		if shown.cut && !slices.Contains(e.Incomplete, shown.part) {
			return fmt.Sprintf("its fields show %s but incomplete does not name it", shown.part)
		}
	}
	return ""
}
