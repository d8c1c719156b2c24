//go:build linux

package capture

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"vigil/internal/wire"
)

// DefaultRingSize is the ring buffer size used when Config.RingSize is 0:
// room for roughly 50,000 open events with short paths.
const DefaultRingSize = 8 << 20

// wakeupFraction: the kernel wakes the reader once 1/wakeupFraction of the
// ring is filled; the reader's readPoll timer collects anything smaller.
const wakeupFraction = 8

// Config selects what one capture observes.
type Config struct {
	// CgroupPath is the absolute path of the session cgroup v2 directory
	// (must exist). Tasks in it or in any descendant cgroup are captured.
	CgroupPath string
	// RingSize is the ring buffer size in bytes; 0 means DefaultRingSize.
	// It must be a power of two and at least the page size.
	RingSize int
	// Sink, when set, is given the events in seq order, a block at a
	// time, while the capture runs (from one goroutine; the block is
	// reused once Sink returns), and Finish returns no events. Finish
	// returns once Sink has every event.
	Sink func([]wire.Kernel)

	// Resident says whether a resident set (see LoadResident) may serve
	// this capture instead of programs loaded for it; ResidentDir is
	// where sets are (DefaultResidentDir when empty). Benchmarks that stop
	// short of the ring (stopStage) always load their own.
	Resident    ResidentMode
	ResidentDir string

	// stopStage makes every recorded syscall stop at a stage short of
	// the ring (BenchmarkRecordStages); the zero value records.
	stopStage vigilBPFVigilStage
}

// ProbeStatus says whether one BPF program is attached.
type ProbeStatus struct {
	Name     string
	Attached bool
	Required bool
	Error    string
}

// Timings are how long Open spent loading (verifier, CO-RE against kernel
// BTF) and attaching the programs.
type Timings struct {
	Load   time.Duration
	Attach time.Duration
	Total  time.Duration
}

// Capture is one loaded and attached set of programs with its own session
// cgroup, ring buffer, counters and sequence.
type Capture struct {
	objs     objects
	source   ProgramSource
	links    []link.Link
	probes   []ProbeStatus
	cgroup   *os.File
	cgroupID uint64
	timings  Timings

	rd     *ringbuf.Reader
	waiter *ringWaiter // nil: the reader blocks in rd
	st     *readerState

	detachOnce sync.Once
	detached   chan struct{} // closed when every link is detached
	detachErr  error
	closeOnce  sync.Once
	closeErr   error
	finishMu   sync.Mutex
	finished   bool
	sink       func([]wire.Kernel)
	// gen is the session's generation (struct vigil_session).
	gen uint32
	// missBase is each program's recursion misses when the capture took
	// it: a resident program's count goes on from session to session.
	missBase map[string]uint64
}

// objects are the programs and maps a capture uses, loaded for it or taken
// from a resident set.
type objects struct {
	events   *ebpf.Map
	counters *ebpf.Map
	programs map[string]*ebpf.Program
	session  sessionState
	close    func()
	// release, for a resident set, lets the next capture take it once
	// this one has read its last counter; close releases it too.
	release func()
}

// probe is one program and the BTF tracepoint (tp_btf) it attaches to.
// Tracepoints are on every kernel with BTF; kprobes, fentry/fexit and the
// BPF LSM are not (this project's CI host refuses all three), and a
// tracepoint link detaches without waiting for an RCU grace period.
type probe struct {
	id vigilBPFVigilHook
	// hook is the name recorded in events and health, e.g.
	// "kretprobe/do_filp_open".
	hook string
	prog string // program name in the object
	// required probes are the floor of a capture: without them the run's
	// tasks or files cannot be followed, and Open fails.
	required bool
	// args, where the tracepoint's arguments differ between kernels,
	// checks that this kernel's are the ones the program reads.
	args argsCheck
}

var probeTable = []probe{
	// task_newtask first: tracking must be in place before anything else
	// sees a task of the run.
	{id: vigilBPFVigilHookVIGIL_HOOK_TASK_NEWTASK, hook: "tp_btf/task_newtask", prog: vigilBPFProgHandleNewtask, required: true},
	{id: vigilBPFVigilHookVIGIL_HOOK_SCHED_PROCESS_FORK, hook: "tp_btf/sched_process_fork", prog: vigilBPFProgHandleFork, required: true},
	{id: vigilBPFVigilHookVIGIL_HOOK_SCHED_PROCESS_EXEC, hook: "tp_btf/sched_process_exec", prog: vigilBPFProgHandleExec, required: true},
	{id: vigilBPFVigilHookVIGIL_HOOK_SCHED_PROCESS_EXIT, hook: "tp_btf/sched_process_exit", prog: vigilBPFProgHandleExit, required: true},
	{id: vigilBPFVigilHookVIGIL_HOOK_CGROUP_ATTACH_TASK, hook: "tp_btf/cgroup_attach_task", prog: vigilBPFProgHandleMigrate, required: true},
	{id: vigilBPFVigilHookVIGIL_HOOK_SYS_EXIT, hook: "tp_btf/sys_exit", prog: vigilBPFProgHandleSysExit, required: true},
	// Not every kernel has io_uring (or its tracepoints); without them
	// the io_uring class is reported as not covered.
	{id: vigilBPFVigilHookVIGIL_HOOK_IO_URING_COMPLETE, hook: "tp_btf/io_uring_complete", prog: vigilBPFProgHandleIoUringComplete, args: checkCompleteArgs},
	// The completions io_uring_complete never sees are counted from
	// these; without them, coverage says so (io_uring_untraced).
	{id: vigilBPFVigilHookVIGIL_HOOK_IO_URING_SUBMIT_REQ, hook: "tp_btf/io_uring_submit_req", prog: vigilBPFProgHandleIoUringSubmit, args: checkSubmitArgs},
	{id: vigilBPFVigilHookVIGIL_HOOK_IO_URING_CQE_OVERFLOW, hook: "tp_btf/io_uring_cqe_overflow", prog: vigilBPFProgHandleIoUringOverflow},
	// A request that fails before submission clears what an earlier
	// request at its address left; without it, completions still take
	// only an entry whose opcode and user_data match.
	{id: vigilBPFVigilHookVIGIL_HOOK_IO_URING_REQ_FAILED, hook: "tp_btf/io_uring_req_failed", prog: vigilBPFProgHandleIoUringReqFailed, args: checkReqFailedArgs},
}

// target is the tracepoint's name.
func (p probe) target() string { _, t, _ := strings.Cut(p.hook, "/"); return t }

// attach attaches p's program.
func (p probe) attach(o objects) (link.Link, error) {
	prog := o.programs[p.prog]
	if prog == nil {
		return nil, fmt.Errorf("program %s not loaded", p.prog)
	}
	return link.AttachTracing(link.TracingOptions{Program: prog})
}

// CheckRingSize reports whether n is a valid Config.RingSize, without
// touching the kernel, so that callers can refuse bad input up front.
func CheckRingSize(n int) error {
	_, err := ringSize(n)
	return err
}

func ringSize(n int) (uint32, error) {
	if n == 0 {
		return DefaultRingSize, nil
	}
	page := os.Getpagesize()
	if n < page || n&(n-1) != 0 || n > 1<<30 {
		return 0, fmt.Errorf("capture: %w: ring size %d bytes must be a power of two between the page size (%d) and 1 GiB", ErrBadConfig, n, page)
	}
	return uint32(n), nil
}

// Open loads the programs with their own maps (or takes a resident set,
// see Config.Resident), restricts them to the run started in
// cfg.CgroupPath, attaches every probe and starts reading. A probe whose
// hook this kernel lacks, or that fails to attach, is reported by Probes;
// Open fails when a required probe is missing or the configuration is
// invalid.
func Open(cfg Config) (c *Capture, err error) {
	size, err := ringSize(cfg.RingSize)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	c = &Capture{}
	defer func() {
		if err != nil {
			c.Close()
			c = nil
		}
	}()
	if c.cgroup, c.cgroupID, err = openSessionCgroup(cfg.CgroupPath); err != nil {
		return c, err
	}
	t := time.Now()
	missing := map[string]string{}
	if cfg.Resident != ResidentOff && cfg.stopStage == 0 {
		r, rerr := takeResident(cfg.ResidentDir, size)
		if rerr == nil || !errors.Is(rerr, errResidentAbsent) || errors.As(rerr, new(*thereError)) {
			c.source.Set = setName(size)
		}
		switch {
		case rerr == nil:
			c.objs = r.objects()
			c.source.Resident = true
			for _, p := range probeTable {
				if r.programs[p.prog] == nil {
					missing[p.prog] = fmt.Sprintf("not in resident set %s (its loader could not load it on this kernel)", c.source.Set)
				}
			}
		case cfg.Resident == ResidentRequire:
			return c, fmt.Errorf("capture: %w: %v", ErrNoResident, rerr)
		case !errors.Is(rerr, errResidentAbsent) || errors.As(rerr, new(*thereError)):
			// Absent is no fallback; absent with other sets there is.
			c.source.Fallback = rerr.Error()
		}
	}
	if !c.source.Resident {
		coll, miss, err := load(size, cfg.stopStage)
		if err != nil {
			return c, err
		}
		missing = miss
		if c.objs, err = collectionObjects(coll); err != nil {
			coll.Close()
			return c, fmt.Errorf("capture: %w", err)
		}
	}
	if err := c.startSession(); err != nil {
		return c, fmt.Errorf("capture: %w", err)
	}
	c.timings.Load = time.Since(t)

	// The reader exists before any probe is attached, so nothing is
	// emitted that the reader cannot see.
	if c.rd, err = ringbuf.NewReader(c.objs.events); err != nil {
		return c, fmt.Errorf("capture: open ring buffer reader: %w", err)
	}
	if c.source.Resident {
		if c.source.StaleRecords, err = discardStale(c.rd); err != nil {
			return c, fmt.Errorf("capture: empty the resident ring: %w", err)
		}
	}
	c.sink = cfg.Sink
	c.st = newReaderState(int(size), cfg.Sink, c.gen)
	// Without a waiter the reader blocks in the ring reader's own poll,
	// which costs CPU, not correctness.
	c.waiter, _ = newRingWaiter(c.objs.events.FD())
	go c.st.run(c.rd, c.waiter)

	// The fork probe goes first and the others follow in table order, so
	// by the time the caller starts the run every probe is attached.
	t = time.Now()
	for _, p := range probeTable {
		st := ProbeStatus{Name: p.hook, Required: p.required}
		if why, ok := missing[p.prog]; ok {
			st.Error = why
		} else if l, aerr := p.attach(c.objs); aerr != nil {
			st.Error = aerr.Error()
		} else {
			st.Attached = true
			c.links = append(c.links, l)
		}
		c.probes = append(c.probes, st)
		if p.required && !st.Attached {
			return c, fmt.Errorf("capture: %w: %s: %s", ErrNotAttached, p.hook, st.Error)
		}
	}
	c.timings.Attach = time.Since(t)
	c.timings.Total = time.Since(start)
	return c, nil
}

// load loads the programs for a ring of size bytes. missing names the
// optional programs this kernel has no hook for, and why.
func load(size uint32, stage vigilBPFVigilStage) (coll *ebpf.Collection, missing map[string]string, err error) {
	warm()
	parsed, err := embeddedSpec.get()
	if err != nil {
		return nil, nil, fmt.Errorf("capture: parse embedded BPF object: %w", err)
	}
	spec := parsed.Copy()
	spec.Maps[vigilBPFMapEvents].MaxEntries = size
	if err := spec.Variables[vigilBPFVarWakeupBytes].Set(uint64(size / wakeupFraction)); err != nil {
		return nil, nil, fmt.Errorf("capture: set wakeup threshold: %w", err)
	}
	if err := spec.Variables[vigilBPFVarStopStage].Set(uint32(stage)); err != nil {
		return nil, nil, fmt.Errorf("capture: set stop stage: %w", err)
	}
	// A tracepoint this kernel does not have, or whose arguments a
	// program cannot read, would fail the whole load or be misread: a
	// required one fails Open, an optional one is left out and reported
	// by Probes.
	missing = map[string]string{}
	for _, p := range probeTable {
		fp, err := kernelTarget(p)
		if err == nil && p.args != nil {
			err = p.args(fp)
		}
		if err != nil {
			if p.required {
				return nil, nil, fmt.Errorf("capture: %w: hook %s: %v", ErrNoBPF, p.hook, err)
			}
			missing[p.prog] = err.Error()
			delete(spec.Programs, p.prog)
		}
	}
	coll, err = ebpf.NewCollectionWithOptions(spec, *loadOptions())
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, nil, fmt.Errorf("capture: %w: kernel rejected the capture programs: %v", ErrNoBPF, ve)
		}
		return nil, nil, fmt.Errorf("capture: %w: load programs: %v", ErrNoBPF, err)
	}
	if err := fillSyscalls(coll.Maps[vigilBPFMapSyscalls], syscallTable, compatCalls()); err != nil {
		coll.Close()
		return nil, nil, fmt.Errorf("capture: %w", err)
	}
	return coll, missing, nil
}

func collectionObjects(coll *ebpf.Collection) (objects, error) {
	ss, err := newSessionState(coll.Maps[bssSection])
	if err != nil {
		return objects{}, err
	}
	return objects{
		events:   coll.Maps[vigilBPFMapEvents],
		counters: coll.Maps[vigilBPFMapCounters],
		programs: coll.Programs,
		session:  ss,
		close:    coll.Close,
	}, nil
}

func (r *residentObjects) objects() objects {
	return objects{events: r.events, counters: r.counters, programs: r.programs, session: r.state, close: r.close, release: r.release}
}

// startSession resets what the programs keep for a session, before any is
// attached: the session state (with a new generation, so that tasks an
// earlier session tracked are not this one's), the counters, and the
// baseline of each program's recursion misses.
func (c *Capture) startSession() error {
	g, err := c.objs.session.gen()
	if err != nil {
		return fmt.Errorf("read session state: %w", err)
	}
	c.gen = nextGen(g)
	if err := c.objs.session.start(c.cgroupID, c.gen); err != nil {
		return fmt.Errorf("reset session state: %w", err)
	}
	if c.source.Resident {
		if err := zeroCounters(c.objs.counters); err != nil {
			return err
		}
	}
	c.missBase = c.recursionMisses()
	return nil
}

// discardStale reads and discards what an earlier holder of a resident set
// left in its ring. No program is attached, so nothing is added meanwhile.
func discardStale(rd *ringbuf.Reader) (uint64, error) {
	var n uint64
	var rec ringbuf.Record
	rd.SetDeadline(time.Now())
	defer rd.SetDeadline(time.Time{})
	for {
		err := rd.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// Programs says where the capture's programs came from.
func (c *Capture) Programs() ProgramSource { return c.source }

// Probes reports every probe, attached or not, in attach order.
func (c *Capture) Probes() []ProbeStatus {
	return append([]ProbeStatus(nil), c.probes...)
}

// Timings reports how long Open took, by phase.
func (c *Capture) Timings() Timings { return c.timings }

// SessionCgroupID is the cgroup id of Config.CgroupPath.
func (c *Capture) SessionCgroupID() uint64 { return c.cgroupID }

// Close detaches the probes, stops the reader and frees every kernel
// object. It is idempotent and safe after a failed Open.
func (c *Capture) Close() error {
	if c == nil {
		return nil
	}
	c.closeOnce.Do(func() {
		c.startDetach()
		<-c.detached
		errs := []error{c.detachErr}
		if c.rd != nil {
			// The waiter first: its ready check reads the reader's
			// mapping, which rd.Close unmaps.
			c.interruptWait()
			errs = append(errs, c.rd.Close())
			if c.st != nil { // nil when Open failed before the reader started
				c.st.wait()
			}
		}
		if c.objs.close != nil {
			c.objs.close()
		}
		if c.cgroup != nil {
			errs = append(errs, c.cgroup.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// interruptWait wakes the reader if it is parked between reads, so that it
// sees a flush or a close now rather than at its poll deadline.
func (c *Capture) interruptWait() {
	if c.waiter != nil {
		c.waiter.interrupt()
	}
}

// startDetach begins detaching every probe in the background. Finish calls
// it once the drain is over, so the detach overlaps whatever the caller
// does before Close.
func (c *Capture) startDetach() {
	c.detachOnce.Do(func() {
		c.detached = make(chan struct{})
		links := c.links
		c.links = nil
		go func() {
			defer close(c.detached)
			c.detachErr = errors.Join(closeLinks(links)...)
		}()
	})
}

// closeLinks detaches every link concurrently, so that any wait the kernel
// imposes on one detach overlaps the others.
func closeLinks(links []link.Link) []error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	for i, l := range links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Close()
		}()
	}
	wg.Wait()
	return errs
}
