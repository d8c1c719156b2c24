package evidence

import (
	"cmp"
	"slices"
	"strings"

	"vigil/internal/event"
)

// CapabilitySurface is capability-surface.json: what the run touched, as
// sorted sets. Paths are as the program gave them (possibly relative).
type CapabilitySurface struct {
	Schema string `json:"schema"` // SurfaceSchema
	RunID  string `json:"run_id"`
	// FilesRead are paths successfully opened for reading (read or
	// read_write access).
	FilesRead []string `json:"files_read"`
	// FilesWritten are paths successfully opened for writing (write or
	// read_write access, or with create/truncate/append).
	FilesWritten []string `json:"files_written"`
	// FilesCreated are paths successfully opened with O_CREAT (a subset of
	// FilesWritten; the open may have found the file already there).
	FilesCreated []string `json:"files_created"`
	// OpenFailures are paths whose open returned an error; they are kept
	// apart so the surface does not claim access that was refused.
	OpenFailures []string `json:"open_failures"`
	// Execs are the programs executed (the kernel's resolved filename).
	Execs []string `json:"execs"`
	// Network are the endpoints connect(2) was called on, whatever the
	// result (non-blocking connects report -EINPROGRESS).
	Network []Endpoint `json:"network"`
}

// Endpoint is one connect target.
type Endpoint struct {
	Family string `json:"family"`
	Addr   string `json:"addr"`
	Port   uint16 `json:"port"`
}

// Open classes: an open can put its path in several lists at once.
const (
	openRead uint8 = 1 << iota
	openWritten
	openCreated
	openFailed
)

// openClasses says which lists of the surface an open event's path
// belongs to.
func openClasses(o *event.Open) uint8 {
	if o.Ret < 0 {
		return openFailed
	}
	var c uint8
	if o.Access == event.AccessRead || o.Access == event.AccessReadWrite {
		c |= openRead
	}
	if o.Access == event.AccessWrite || o.Access == event.AccessReadWrite || o.Create || o.Truncate || o.Append {
		c |= openWritten
	}
	if o.Create {
		c |= openCreated
	}
	return c
}

// BuildSurface derives the capability surface from kernel events. RunID is
// left for the caller (Assemble sets it). The paths are gathered in one
// map and sorted once, since most paths appear in several lists.
func BuildSurface(kernel []event.Kernel) CapabilitySurface {
	paths := map[string]uint8{}
	execs := map[string]bool{}
	net := map[Endpoint]bool{}
	for i := range kernel {
		e := &kernel[i]
		switch {
		case e.Kind == event.KindOpen && e.Open != nil:
			paths[e.Open.Path] |= openClasses(e.Open)
		case e.Kind == event.KindExec && e.Exec != nil:
			execs[e.Exec.Filename] = true
		case e.Kind == event.KindConnect && e.Connect != nil:
			c := e.Connect
			net[Endpoint{Family: c.Family, Addr: c.Addr, Port: c.Port}] = true
		}
	}
	s := CapabilitySurface{
		Schema:       SurfaceSchema,
		FilesRead:    []string{},
		FilesWritten: []string{},
		FilesCreated: []string{},
		OpenFailures: []string{},
		Execs:        sortedKeys(execs),
		Network:      make([]Endpoint, 0, len(net)),
	}
	all := make([]string, 0, len(paths))
	for p := range paths {
		all = append(all, p)
	}
	slices.Sort(all)
	for _, p := range all {
		c := paths[p]
		if c&openRead != 0 {
			s.FilesRead = append(s.FilesRead, p)
		}
		if c&openWritten != 0 {
			s.FilesWritten = append(s.FilesWritten, p)
		}
		if c&openCreated != 0 {
			s.FilesCreated = append(s.FilesCreated, p)
		}
		if c&openFailed != 0 {
			s.OpenFailures = append(s.OpenFailures, p)
		}
	}
	for ep := range net {
		s.Network = append(s.Network, ep)
	}
	slices.SortFunc(s.Network, compareEndpoints)
	return s
}

func compareEndpoints(a, b Endpoint) int {
	if c := strings.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := strings.Compare(a.Addr, b.Addr); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// surfaceDiff names the first field (in document order) in which s differs
// from BuildSurface(kernel), or returns "". It decides exactly what
// comparing with BuildSurface would, without building and sorting the
// sets: a list equals the derived one when it is strictly increasing and
// holds exactly the derived members, so each list is checked for order,
// each event's path is looked up in it, and every entry must have been
// hit. RunID is not compared.
func surfaceDiff(kernel []event.Kernel, s *CapabilitySurface) string {
	type list struct {
		name  string
		items []string
		hit   []bool
		bad   bool
	}
	lists := []*list{
		{name: "files_read", items: s.FilesRead},
		{name: "files_written", items: s.FilesWritten},
		{name: "files_created", items: s.FilesCreated},
		{name: "open_failures", items: s.OpenFailures},
		{name: "execs", items: s.Execs},
	}
	for _, l := range lists {
		l.hit = make([]bool, len(l.items))
		// nil encodes as null, never as the derived [].
		l.bad = l.items == nil || !strictlyIncreasing(l.items)
	}
	netHit := make([]bool, len(s.Network))
	netBad := s.Network == nil || !slices.IsSortedFunc(s.Network, compareEndpoints)
	for i := 1; !netBad && i < len(s.Network); i++ {
		netBad = s.Network[i-1] == s.Network[i]
	}
	find := func(l *list, v string) {
		if l.bad {
			return
		}
		if j, ok := slices.BinarySearch(l.items, v); ok {
			l.hit[j] = true
		} else {
			l.bad = true
		}
	}
	for i := range kernel {
		e := &kernel[i]
		switch {
		case e.Kind == event.KindOpen && e.Open != nil:
			c := openClasses(e.Open)
			for bit, l := range lists[:4] {
				if c&(1<<bit) != 0 {
					find(l, e.Open.Path)
				}
			}
		case e.Kind == event.KindExec && e.Exec != nil:
			find(lists[4], e.Exec.Filename)
		case e.Kind == event.KindConnect && e.Connect != nil && !netBad:
			c := e.Connect
			ep := Endpoint{Family: c.Family, Addr: c.Addr, Port: c.Port}
			if j, ok := slices.BinarySearchFunc(s.Network, ep, compareEndpoints); ok {
				netHit[j] = true
			} else {
				netBad = true
			}
		}
	}
	if s.Schema != SurfaceSchema {
		return "schema"
	}
	for _, l := range lists {
		if l.bad || slices.Contains(l.hit, false) {
			return l.name
		}
	}
	if netBad || slices.Contains(netHit, false) {
		return "network"
	}
	return ""
}

func strictlyIncreasing(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}
