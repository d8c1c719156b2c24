package evidence

import (
	"sort"

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

// BuildSurface derives the capability surface from kernel events. RunID is
// left for the caller (Assemble sets it).
func BuildSurface(kernel []event.Kernel) CapabilitySurface {
	read, written, created, failed, execs := set{}, set{}, set{}, set{}, set{}
	net := map[Endpoint]bool{}
	for i := range kernel {
		e := &kernel[i]
		switch {
		case e.Kind == event.KindOpen && e.Open != nil:
			o := e.Open
			if o.Ret < 0 {
				failed[o.Path] = true
				continue
			}
			if o.Access == event.AccessRead || o.Access == event.AccessReadWrite {
				read[o.Path] = true
			}
			if o.Access == event.AccessWrite || o.Access == event.AccessReadWrite || o.Create || o.Truncate || o.Append {
				written[o.Path] = true
			}
			if o.Create {
				created[o.Path] = true
			}
		case e.Kind == event.KindExec && e.Exec != nil:
			execs[e.Exec.Filename] = true
		case e.Kind == event.KindConnect && e.Connect != nil:
			c := e.Connect
			net[Endpoint{Family: c.Family, Addr: c.Addr, Port: c.Port}] = true
		}
	}
	s := CapabilitySurface{
		Schema:       SurfaceSchema,
		FilesRead:    read.sorted(),
		FilesWritten: written.sorted(),
		FilesCreated: created.sorted(),
		OpenFailures: failed.sorted(),
		Execs:        execs.sorted(),
		Network:      make([]Endpoint, 0, len(net)),
	}
	for ep := range net {
		s.Network = append(s.Network, ep)
	}
	sort.Slice(s.Network, func(i, j int) bool {
		a, b := s.Network[i], s.Network[j]
		if a.Family != b.Family {
			return a.Family < b.Family
		}
		if a.Addr != b.Addr {
			return a.Addr < b.Addr
		}
		return a.Port < b.Port
	})
	return s
}

type set map[string]bool

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
