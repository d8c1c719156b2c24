package evidence

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"vigil/internal/wire"
)

// Bundle is everything one archive holds, decoded.
type Bundle struct {
	Run         wire.Run
	Kernel      []wire.Kernel // sorted by Seq
	SDK         []wire.SDK    // nil when the workload reported nothing
	Surface     CapabilitySurface
	Correlation *CorrelationReport // nil when no SDK layer
	Health      wire.Health
	// Streamed, when set, stands for the kernel layer of a recording
	// that was written as it arrived (package archive's KernelStream), or
	// of an archive folded as it was read: Kernel is then empty, and
	// Check takes what the layer derives from the digest of the events.
	Streamed *Digest `json:"-"`
	// pathsStreamed says Surface's lists (paths, renames, endpoints)
	// are nil because Streamed gives them (AssembleStreamed,
	// SetSurfacePathSource): see SurfacePathSource.
	pathsStreamed bool
}

// SetSurfacePathSource makes d, the digest of b's kernel layer, the
// source of b's surface lists (SurfacePathSource) and b.Streamed, and
// drops the lists b holds: for a reader that has established that the
// archive's surface is exactly what d derives, so that it need not hold
// the paths, renames and endpoints.
func (b *Bundle) SetSurfacePathSource(d *Digest) {
	for _, l := range b.Surface.pathFields() {
		*l = nil
	}
	for _, l := range b.Surface.endpointFields() {
		*l = nil
	}
	b.Surface.FilesRenamed = nil
	b.Streamed, b.pathsStreamed = d, true
}

// SurfacePathSource is the digest that gives the surface's lists
// (EachSurfacePath, EachSurfaceRename, EachSurfaceEndpoint) when Surface
// leaves them out, as AssembleStreamed does so that a recording never
// holds them all; nil when Surface has them.
func (b *Bundle) SurfacePathSource() *Digest {
	if b.pathsStreamed {
		return b.Streamed
	}
	return nil
}

// Assemble builds a complete, self-consistent Bundle from what the runner
// observed. It sorts the kernel events by Seq and derives from them what
// must agree with them: Counts, SeqGaps, SessionTasks and SDKEvents in the
// health input (the caller's values for those are replaced), the capability surface and,
// when there are SDK events, the correlation report. Every document gets
// run.RunID. The bundle may share kernel's array: the caller must not
// change kernel afterwards.
func Assemble(run wire.Run, kernel []wire.Kernel, sdk []wire.SDK, in HealthInput) *Bundle {
	if run.Schema == "" {
		run.Schema = wire.RunSchema
	}
	run.EnvNames = envNames(run.EnvNames)
	// Capture delivers events in Seq order, so the bundle keeps the
	// caller's slice (the kernel layer is the largest thing a run holds
	// in memory); only out of order is it copied and sorted.
	k := kernel
	bySeq := func(a, b wire.Kernel) int { return cmp.Compare(a.Seq, b.Seq) }
	if !slices.IsSortedFunc(k, bySeq) {
		k = append([]wire.Kernel(nil), kernel...)
		slices.SortStableFunc(k, bySeq)
	}
	b, _ := assemble(run, DigestOf(k), sdk, in, false) // no store to read
	b.Kernel = k
	return b
}

// AssembleStreamed is Assemble for a kernel layer already written as it
// arrived: d is the digest of exactly the events written, in order. The
// bundle's Kernel is empty, its surface's lists nil, and Streamed
// is d. The error is a failure to read back what d's scratch store
// holds.
func AssembleStreamed(run wire.Run, d *Digest, sdk []wire.SDK, in HealthInput) (*Bundle, error) {
	if run.Schema == "" {
		run.Schema = wire.RunSchema
	}
	run.EnvNames = envNames(run.EnvNames)
	b, err := assemble(run, d, sdk, in, true)
	if err != nil {
		return nil, err
	}
	b.Streamed, b.pathsStreamed = d, true
	return b, nil
}

func assemble(run wire.Run, d *Digest, sdk []wire.SDK, in HealthInput, streamed bool) (*Bundle, error) {
	if len(sdk) == 0 {
		sdk = nil
	}
	in.Counts = d.Counts()
	in.SeqGaps = d.SeqGaps()
	in.ReadFaults, in.IncompleteParts = d.Incomplete()
	in.SessionTasks = d.SessionTasks()
	in.SDKEvents = len(sdk)
	if len(sdk) > 0 || len(in.SDKProblems) > 0 {
		in.SDKPresent = true
	}
	b := &Bundle{Run: run, SDK: sdk}
	if streamed {
		b.Surface = d.SurfaceWithoutPaths()
	} else {
		b.Surface = d.Surface()
	}
	b.Surface.RunID = run.RunID
	if sdk != nil {
		var err error
		if b.Correlation, err = d.Correlate(sdk); err != nil {
			return nil, err
		}
		b.Correlation.RunID = run.RunID
	}
	b.Health = BuildHealth(run.RunID, in)
	return b, nil
}

// WholeSurface is b's surface with its lists, read from the digest that
// gives them (SurfacePathSource) when b leaves them out: every path,
// rename and endpoint is then held, which is what leaving them out
// avoids. The error is a failure to read them back from the digest's
// scratch store.
func (b *Bundle) WholeSurface() (CapabilitySurface, error) {
	s := b.Surface
	d := b.SurfacePathSource()
	if d == nil {
		return s, nil
	}
	for l, list := range s.pathFields() {
		*list = []wire.Bytes{}
		err := d.EachSurfacePath(PathList(l), func(p wire.Bytes) error {
			*list = append(*list, cloneBytes(p))
			return nil
		})
		if err != nil {
			return CapabilitySurface{}, err
		}
	}
	s.FilesRenamed = []Rename{}
	err := d.EachSurfaceRename(func(r Rename) error {
		s.FilesRenamed = append(s.FilesRenamed, Rename{From: cloneBytes(r.From), To: cloneBytes(r.To)})
		return nil
	})
	if err != nil {
		return CapabilitySurface{}, err
	}
	for l, list := range s.endpointFields() {
		*list = []Endpoint{}
		err := d.EachSurfaceEndpoint(EndpointList(l), func(e Endpoint) error {
			*list = append(*list, Endpoint{Family: strings.Clone(e.Family), Addr: cloneBytes(e.Addr), Port: e.Port})
			return nil
		})
		if err != nil {
			return CapabilitySurface{}, err
		}
	}
	return s, nil
}

// Events is how many kernel events the bundle's layer holds.
func (b *Bundle) Events() uint64 {
	if b.Streamed != nil {
		return b.Streamed.Events()
	}
	return uint64(len(b.Kernel))
}

// Unrecorded is how many of the kernel layer's events acted on an object
// the record does not name (the function Unrecorded): io_uring operations
// whose path or address the capture does not decode, an open by handle
// that names no file. A record can be complete and still hold such
// events; check, diff, inspect and verify say so.
func (b *Bundle) Unrecorded() uint64 {
	if b.Streamed != nil {
		return b.Streamed.Unrecorded()
	}
	var n uint64
	for i := range b.Kernel {
		if what, _, _, _ := Unrecorded(&b.Kernel[i]); what != "" {
			n++
		}
	}
	return n
}

// CountKinds counts events per kind; every known kind is present, zero or not.
func CountKinds(kernel []wire.Kernel) map[wire.Kind]uint64 {
	m := zeroKinds()
	for i := range kernel {
		m[kernel[i].Kind]++
	}
	return m
}

// envNames returns the sorted, de-duplicated names, cutting anything from
// an "=" on so that a value passed by mistake never reaches the archive.
func envNames(in []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, n := range in {
		n, _, _ = strings.Cut(n, "=")
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func zeroKinds() map[wire.Kind]uint64 {
	m := make(map[wire.Kind]uint64, len(wire.Kinds))
	for _, k := range wire.Kinds {
		m[k] = 0
	}
	return m
}
