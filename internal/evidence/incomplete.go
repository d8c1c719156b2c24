package evidence

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"vigil/internal/wire"
)

// shownIncomplete says which parts an event's own fields show were cut
// (a truncated path or name, argv_truncated): its Incomplete must name
// each of them. What no field can show (a failed read, a cut exec
// filename, symlink target or cgroup path) only Incomplete says. hidden
// names a field that is cut without saying so: a resolved path that is
// relative but neither detached nor truncated, or fewer arguments than
// argc with neither argv_truncated nor a failed read.
func shownIncomplete(e *wire.Kernel) (path, name, argv bool, hidden string) {
	resolved := func(p *wire.ResolvedPath) {
		if p == nil {
			return
		}
		path = path || p.Truncated
		if !p.Detached && !p.Truncated && !strings.HasPrefix(string(p.Path), "/") && hidden == "" {
			hidden = fmt.Sprintf("resolved path %q is neither absolute, detached nor marked truncated", p.Path.Text())
		}
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
		if uint32(len(e.Exec.Argv)) != e.Exec.Argc && !argv && !slices.Contains(e.Incomplete, wire.IncompleteReadFailed) && hidden == "" {
			hidden = fmt.Sprintf("exec has %d arguments of argc %d, yet neither argv_truncated nor a failed read", len(e.Exec.Argv), e.Exec.Argc)
		}
	case e.ExecFailed != nil:
		named(&e.ExecFailed.Name)
	case e.Open != nil:
		resolved(e.Open.File)
		named(&e.Open.Name)
		if c := e.Open.Created; c != nil && hidden == "" {
			switch {
			case e.Open.Ret < 0 || e.Open.File == nil:
				hidden = "a failed open says whether it created its file"
			case *c && !e.Open.Create:
				hidden = "an open without O_CREAT or O_TMPFILE says it created its file"
			}
		}
	case e.FileOp != nil:
		resolved(e.FileOp.File)
		named(e.FileOp.Name)
		named(e.FileOp.NewName)
	case e.IOUring != nil:
		u := e.IOUring
		resolved(u.File)
		named(u.Name)
		named(u.NewName)
		// What the event did is read from its opcode (Unrecorded); op must
		// be that opcode's name, as the capture wrote it (or op_<n>, from
		// a vigil that did not know the name yet).
		name := wire.IOUringOp(u.Opcode)
		open := name == "openat" || name == "openat2"
		switch {
		case hidden != "":
		case u.Op != name && u.Op != "op_"+strconv.FormatUint(uint64(u.Opcode), 10):
			hidden = fmt.Sprintf("io_uring op %q is not the name of opcode %d (%s)", u.Op, u.Opcode, name)
		case u.Direct && (!open || u.Res < 0 || u.File != nil || u.Created != nil || u.Access != "" || u.Ino != 0 || u.Dev != 0):
			hidden = "only a completed io_uring open without a resolved file can be direct"
		case u.File != nil && !open:
			hidden = "an io_uring " + u.Op + " names an opened file"
		case u.Created != nil && !open:
			hidden = "an io_uring " + u.Op + " says whether it created a file"
		case u.Created != nil && (u.File == nil || u.Res < 0):
			hidden = "an io_uring completion without an opened file says whether it created one"
		case (u.Name != nil || u.NewName != nil || u.Target != nil) && !ringNamed(name, u):
			hidden = "io_uring " + u.Op + " has names it cannot have"
		}
	}
	return path, name, argv, hidden
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
	path, name, argv, hidden := shownIncomplete(e)
	if hidden != "" {
		return hidden
	}
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

// ringNamed says whether u's names are the ones its operation has.
func ringNamed(op string, u *wire.IOUring) bool {
	switch op {
	case "unlinkat", "mkdirat":
		return u.Name != nil && u.NewName == nil && u.Target == nil
	case "renameat", "linkat":
		return u.Target == nil
	case "symlinkat":
		return u.Name == nil
	}
	return false
}
