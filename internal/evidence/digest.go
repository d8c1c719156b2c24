package evidence

import (
	"fmt"
	"maps"

	"vigil/internal/wire"
)

// Digest folds kernel events, in the order of the kernel layer, into
// everything the archive's other documents derive from that layer: the
// count per kind, the sequence gaps and order, the session task balance,
// the capability surface, the command's exit as the kernel saw it, the
// events per cgroup, and the time index correlation needs. A recording
// feeds it the events a block at a time while they arrive, so it never
// holds the layer; Check folds the layer of a bundle it is given. Both
// go through this one fold, so what a recording writes is what
// verification derives.
//
// It keeps nothing of an event but what those documents need: each
// distinct path, rename and endpoint once (copied, so the event's memory
// may be reused), the tasks still open, and 9 bytes per event for
// correlation (17 where the seqs are not the events' indexes). Given a
// scratch store (SpillTo), it moves the paths, renames, endpoints and the
// correlation index there, and holds a bounded part of them.
type Digest struct {
	events   uint64
	counts   map[wire.Kind]uint64
	distinct uint64 // distinct seqs, adjacent duplicates counted once
	lastSeq  uint64
	disorder string // the first seq that does not follow its predecessor
	tasks    taskBalance
	surface  surfaceBuilder
	exit     exitWatch
	times    timeIndex
	cgroups  map[uint64]uint64
	// incomplete counts events that lack a part; lacking, per part
	// (wire.IncompleteOrder), the events that lack it.
	incomplete uint64
	lacking    map[string]uint64
	// checkEvents makes add look for firstDefect, the first event whose
	// Incomplete is not what its fields allow (incompleteDefect): work
	// for a digest of events read from an archive (CheckingEvents), not
	// of events this process decoded.
	checkEvents bool
	unrecorded  uint64 // events acting on objects not named (Unrecorded)
	firstDefect string
	sealed      bool
	built       *CapabilitySurface
	// noSurface leaves the surface out, for a caller that derived it
	// already (CheckDerivedSurface); noTimes the time index, for a
	// bundle without correlation.
	noSurface, noTimes bool
}

// NewDigest returns an empty digest that copies what it keeps, so the
// events given to Add may be reused.
func NewDigest() *Digest { return newDigest(true) }

// CheckingEvents makes d also look, event by event, for what Check
// refuses in an archive's kernel layer: an event hiding a cut its fields
// show (see incompleteDefect). A digest of events the capture decoded
// itself need not pay for it. It must be called before Add.
func (d *Digest) CheckingEvents() *Digest {
	if d.events > 0 {
		panic("evidence: CheckingEvents after Add")
	}
	d.checkEvents = true
	return d
}

// WithoutCorrelation leaves correlation's time index out of d, for a
// layer known to have no correlation (an archive without the entry): 9
// bytes per event less. It must be called before Add; Correlate then
// panics.
func (d *Digest) WithoutCorrelation() *Digest {
	if d.events > 0 {
		panic("evidence: WithoutCorrelation after Add")
	}
	d.noTimes = true
	return d
}

// SpillLimits bound the paths (renames and endpoints count as paths) a
// digest holds before it moves them to its scratch store; a zero field
// takes the default.
type SpillLimits struct {
	Paths int // paths held (default 65536)
	Bytes int // bytes of those paths (default 4 MiB)
	// Runs is how many runs the store may hold before they are merged
	// into one, which bounds the buffers reading them back (default 256).
	Runs int
}

// SpillTo lets d move the paths it holds to a scratch store once it holds
// many (a run that touches a million files would otherwise hold them
// all), so that what it keeps in memory is bounded. It must be called
// before Add. The store must outlive d's use: EachSurfacePath reads it.
// Only a digest that copies its paths (NewDigest) can spill.
func (d *Digest) SpillTo(to Scratch, l SpillLimits) *Digest {
	if d.events > 0 {
		panic("evidence: SpillTo after Add")
	}
	if !d.surface.paths.copyPaths {
		panic("evidence: SpillTo on a digest that does not copy its paths")
	}
	sp := newPathSpill(to)
	for _, f := range []struct{ v, to *int }{{&l.Paths, &sp.entries}, {&l.Bytes, &sp.bytes}, {&l.Runs, &sp.maxRuns}} {
		if *f.v > 0 {
			*f.to = *f.v
		}
	}
	sp.maxRuns = max(sp.maxRuns, 2)
	d.surface.paths.spill = sp
	d.times.store = to
	return d
}

// SpillStats says what a digest moved to its scratch store.
type SpillStats struct {
	// PathRuns is how many times the paths held were written out,
	// Merges how often the runs were merged into one, TimeChunks how
	// many chunks of the time index went out; Bytes is how much was
	// written in all.
	PathRuns, Merges, TimeChunks int
	Bytes                        int64
	// Err names the writes that failed (the paths', the time index's):
	// from each on, what it was for stayed in memory. Nothing is lost;
	// memory is no longer bounded.
	Err error
}

// Spilled reports what d moved to its scratch store (zero without one).
func (d *Digest) Spilled() SpillStats {
	sp := d.surface.paths.spill
	if sp == nil {
		return SpillStats{}
	}
	st := SpillStats{PathRuns: sp.spills, Merges: sp.merges, Bytes: sp.written, Err: sp.err, TimeChunks: len(d.times.stored)}
	for _, c := range d.times.stored {
		st.Bytes += c.size
	}
	switch {
	case sp.err != nil && d.times.err != nil:
		st.Err = fmt.Errorf("paths: %w; time index: %w", sp.err, d.times.err)
	case sp.err != nil:
		st.Err = fmt.Errorf("paths: %w", sp.err)
	case d.times.err != nil:
		st.Err = fmt.Errorf("time index: %w", d.times.err)
	}
	return st
}

// SurfaceWithoutPaths is the capability surface without its lists (nil):
// what a caller that writes them with EachSurfacePath,
// EachSurfaceRename and EachSurfaceEndpoint needs.
// Taking it ends the fold, as Surface does.
func (d *Digest) SurfaceWithoutPaths() CapabilitySurface {
	if d.noSurface {
		panic("evidence: the surface of a digest made without it")
	}
	d.seal()
	return d.surface.buildRest()
}

// seal ends the fold. Once sealed, the digest is only read: a check and
// a write of one archive may use it side by side.
func (d *Digest) seal() {
	if !d.sealed {
		d.sealed = true
	}
}

// EachSurfacePath calls emit with every path of the surface's list l, in
// byte order, as Surface would list them, reading back what a scratch
// store holds; the path is valid only during the call. It ends the fold,
// and stops at the first error emit or the store returns.
func (d *Digest) EachSurfacePath(l PathList, emit func(p wire.Bytes) error) error {
	if d.noSurface {
		panic("evidence: the surface of a digest made without it")
	}
	if l < 0 || l >= NumPathLists {
		panic(fmt.Sprintf("evidence: no path list %d", l))
	}
	d.seal()
	d.surface.paths.seal()
	return d.surface.paths.each(int(l), emit)
}

func newDigest(copyPaths bool) *Digest {
	return &Digest{counts: zeroKinds(), surface: newSurfaceBuilder(copyPaths), cgroups: map[uint64]uint64{}}
}

// DigestOf folds kernel, which must not change while the digest is used:
// its paths are kept, not copied.
func DigestOf(kernel []wire.Kernel) *Digest {
	d := newDigest(false)
	d.Add(kernel)
	return d
}

// Add folds the next events of the layer. The events may be reused once
// Add returns. It panics once a result that ends the fold (Surface) has
// been taken.
func (d *Digest) Add(kernel []wire.Kernel) {
	if d.sealed {
		panic("evidence: Digest.Add after its surface was taken")
	}
	for i := range kernel {
		d.add(&kernel[i])
	}
}

func (d *Digest) add(e *wire.Kernel) {
	if d.events > 0 {
		if e.Seq <= d.lastSeq && d.disorder == "" {
			d.disorder = fmt.Sprintf("line %d: seq %d does not follow seq %d", d.events+1, e.Seq, d.lastSeq)
		}
		if e.Seq != d.lastSeq {
			d.distinct++
		}
	} else {
		d.distinct = 1
	}
	d.events++
	d.lastSeq = e.Seq
	d.counts[e.Kind]++
	d.cgroups[e.CgroupID]++
	if d.checkEvents && d.firstDefect == "" {
		if bad := incompleteDefect(e); bad != "" {
			d.firstDefect = fmt.Sprintf("line %d (seq %d): %s", d.events, e.Seq, bad)
		}
	}
	if e.IOUring != nil || e.Open != nil {
		if what, _, _, _ := Unrecorded(e); what != "" {
			d.unrecorded++
		}
	}
	if len(e.Incomplete) > 0 {
		d.incomplete++
		if d.lacking == nil {
			d.lacking = map[string]uint64{}
		}
		for _, part := range e.Incomplete {
			d.lacking[part]++
		}
	}
	d.tasks.add(e)
	if !d.noSurface {
		d.surface.add(e)
	}
	d.exit.add(e)
	if !d.noTimes {
		d.times.add(e)
	}
}

// Events is how many events were folded.
func (d *Digest) Events() uint64 { return d.events }

// Unrecorded is how many events acted on an object the record does not
// name (the function Unrecorded).
func (d *Digest) Unrecorded() uint64 { return d.unrecorded }

// Incomplete is how many events lack a part (Kernel.Incomplete), and per
// part how many lack it; nil when none does.
func (d *Digest) Incomplete() (uint64, map[string]uint64) {
	if d.incomplete == 0 {
		return 0, nil
	}
	return d.incomplete, maps.Clone(d.lacking)
}

// Counts is the number of events per kind; every known kind is present.
func (d *Digest) Counts() map[wire.Kind]uint64 { return copyKinds(d.counts) }

// SeqGaps is how many sequence numbers between 0 and the last one are
// missing. A repeated seq is not a gap; Disorder reports it.
func (d *Digest) SeqGaps() uint64 {
	if d.events == 0 {
		return 0
	}
	return d.lastSeq + 1 - d.distinct
}

// Disorder names the first event whose seq does not follow the one
// before it ("" when every seq increases).
func (d *Digest) Disorder() string { return d.disorder }

// SessionTasks is the session task balance (see BalanceSessionTasks).
func (d *Digest) SessionTasks() SessionTasks { return d.tasks.result() }

// Surface is the capability surface, without a run id. Taking it ends
// the fold: Add panics afterwards. It is built once. Paths moved to a
// scratch store (SpillTo) are read back and held; an error reading them
// panics, so a caller with a store writes the lists with
// EachSurfacePath instead.
func (d *Digest) Surface() CapabilitySurface {
	if d.noSurface {
		panic("evidence: the surface of a digest made without it")
	}
	if d.built == nil {
		d.sealed = true
		s := d.surface.build()
		d.built = &s
	}
	return *d.built
}

// Correlate is Correlate of the folded events and sdk. The error is a
// failure to read back what the scratch store holds (SpillTo).
func (d *Digest) Correlate(sdk []wire.SDK) (*CorrelationReport, error) {
	if d.noTimes {
		panic("evidence: correlation from a digest made without its time index")
	}
	return correlate(&d.times, sdk)
}

// OutsideOf counts the events whose cgroup is not in ids.
func (d *Digest) OutsideOf(ids map[uint64]bool) uint64 {
	var n uint64
	for id, c := range d.cgroups {
		if !ids[id] {
			n += c
		}
	}
	return n
}

// exitWatch follows the run's first task (the first one cloned into the
// session) to its last group-ending exit. An exit under that PID before
// the fork is another task's (a PID is reused), so it is not taken.
type exitWatch struct {
	seen  bool // the first entering fork went by
	first uint32
	last  *wire.Exit
	kept  wire.Exit
}

func (w *exitWatch) add(e *wire.Kernel) {
	if f := e.Fork; f != nil && f.Entered && !w.seen {
		w.seen, w.first = true, f.ChildPID
	}
	if x := e.Exit; x != nil && x.GroupDead && w.first != 0 && e.PID == w.first {
		w.kept = *x
		w.last = &w.kept
	}
}
