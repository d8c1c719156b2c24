package evidence

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"vigil/internal/wire"
)

// CapabilitySurface is capability-surface.json: what the run did, as sorted
// sets. A path is the kernel's resolved absolute path where the kernel
// resolved one (an opened file, an executable); otherwise it is the name
// the caller passed joined to the directory the kernel resolved it
// against (see wire.Name.Path), with "." and ".." removed lexically so
// that one file has one spelling (a symlinked directory before ".." could
// make that spelling differ from where the kernel went; the events keep
// the name as given). Only calls that succeeded count, except in the two
// *_failures lists.
type CapabilitySurface struct {
	Schema string `json:"schema"` // SurfaceSchema
	RunID  string `json:"run_id"`
	// FilesRead are files opened for reading (read or read_write access).
	FilesRead []wire.Bytes `json:"files_read"`
	// FilesWritten are files opened for writing (write or read_write
	// access, or with create/truncate/append).
	FilesWritten []wire.Bytes `json:"files_written"`
	// FilesCreated are files opened with O_CREAT (the open may have found
	// the file there) and nodes made by mknod.
	FilesCreated []wire.Bytes `json:"files_created"`
	// OpenFailures are names whose open returned an error; they are kept
	// apart so the surface does not claim access that was refused.
	OpenFailures []wire.Bytes `json:"open_failures"`
	// FilesDeleted are names unlinked or removed (rmdir).
	FilesDeleted []wire.Bytes `json:"files_deleted"`
	// DirsCreated are directories made by mkdir.
	DirsCreated []wire.Bytes `json:"dirs_created"`
	// FilesRenamed are rename pairs.
	FilesRenamed []Rename `json:"files_renamed"`
	// LinksCreated are the new names of hard and symbolic links.
	LinksCreated []wire.Bytes `json:"links_created"`
	// ModeChanged are files whose mode or owner was changed.
	ModeChanged []wire.Bytes `json:"mode_changed"`
	// FilesTruncated are files truncated by truncate/ftruncate.
	FilesTruncated []wire.Bytes `json:"files_truncated"`
	// Execs are the programs executed (the kernel's resolved executable).
	Execs []wire.Bytes `json:"execs"`
	// ExecFailures are names whose execve failed.
	ExecFailures []wire.Bytes `json:"exec_failures"`
	// Network are the endpoints connect(2) was called on, whatever the
	// result (non-blocking connects report -EINPROGRESS).
	Network []Endpoint `json:"network"`
	// NetworkSent are destinations named by sendto/sendmsg.
	NetworkSent []Endpoint `json:"network_sent"`
	// NetworkLocal are local addresses bound or listened on.
	NetworkLocal []Endpoint `json:"network_local"`
}

// Endpoint is one socket address.
type Endpoint struct {
	Family string     `json:"family"`
	Addr   wire.Bytes `json:"addr"`
	Port   uint16     `json:"port"`
}

// Rename is one rename: From became To.
type Rename struct {
	From wire.Bytes `json:"from"`
	To   wire.Bytes `json:"to"`
}

type set map[wire.Bytes]bool

func (s set) sorted() []wire.Bytes {
	out := make([]wire.Bytes, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type endpoints map[Endpoint]bool

func (s endpoints) sorted() []Endpoint {
	out := make([]Endpoint, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.SortFunc(out, compareEndpoints)
	return out
}

// BuildSurface derives the capability surface from kernel events. RunID is
// left for the caller (Assemble sets it).
func BuildSurface(kernel []wire.Kernel) CapabilitySurface {
	read, written, created, openFailed := set{}, set{}, set{}, set{}
	deleted, dirs, links, modes, truncated := set{}, set{}, set{}, set{}, set{}
	execs, execFailed := set{}, set{}
	renames := map[Rename]bool{}
	connects, sent, local := endpoints{}, endpoints{}, endpoints{}
	var acts []Action
	for i := range kernel {
		e := &kernel[i]
		if o := e.Open; o != nil && (o.Ret < 0 || o.File == nil) {
			// Every failed open, whatever its access (O_PATH too).
			openFailed[namePath(o.Name)] = true
			continue
		}
		acts = Actions(e, acts[:0])
		for _, a := range acts {
			if a.Failed {
				if a.Op == OpExec {
					execFailed[a.Path] = true
				}
				if a.Op != OpConnect {
					continue
				}
			}
			switch a.Op {
			case OpRead:
				read[a.Path] = true
			case OpWrite:
				written[a.Path] = true
			case OpCreate:
				created[a.Path] = true
			case OpDelete:
				deleted[a.Path] = true
			case OpMkdir:
				dirs[a.Path] = true
			case OpRename:
				renames[Rename{From: a.Path, To: a.To}] = true
			case OpLink:
				links[a.Path] = true
			case OpChmod, OpChown:
				modes[a.Path] = true
			case OpTruncate:
				truncated[a.Path] = true
			case OpExec:
				execs[a.Path] = true
			case OpConnect:
				connects[a.Endpoint] = true
			case OpSend:
				sent[a.Endpoint] = true
			case OpBind, OpListen:
				local[a.Endpoint] = true
			}
		}
	}
	rs := make([]Rename, 0, len(renames))
	for r := range renames {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b Rename) int {
		if c := strings.Compare(string(a.From), string(b.From)); c != 0 {
			return c
		}
		return strings.Compare(string(a.To), string(b.To))
	})
	return CapabilitySurface{
		Schema:         SurfaceSchema,
		FilesRead:      read.sorted(),
		FilesWritten:   written.sorted(),
		FilesCreated:   created.sorted(),
		OpenFailures:   openFailed.sorted(),
		FilesDeleted:   deleted.sorted(),
		DirsCreated:    dirs.sorted(),
		FilesRenamed:   rs,
		LinksCreated:   links.sorted(),
		ModeChanged:    modes.sorted(),
		FilesTruncated: truncated.sorted(),
		Execs:          execs.sorted(),
		ExecFailures:   execFailed.sorted(),
		Network:        connects.sorted(),
		NetworkSent:    sent.sorted(),
		NetworkLocal:   local.sorted(),
	}
}

// cleanPath removes "." and ".." lexically (a resolved path is already
// clean; a name joined to its directory may not be).
func cleanPath(p wire.Bytes) wire.Bytes {
	if p == "" {
		return p
	}
	return wire.Bytes(path.Clean(string(p)))
}

func namePath(n wire.Name) wire.Bytes { return cleanPath(n.Path()) }

func objectPath(f *wire.FileOp) wire.Bytes { return cleanPath(f.ObjectPath()) }

func compareEndpoints(a, b Endpoint) int {
	if c := strings.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Addr), string(b.Addr)); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}
