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
	coll     *ebpf.Collection
	links    []link.Link
	probes   []ProbeStatus
	cgroup   *os.File
	cgroupID uint64
	timings  Timings

	rd *ringbuf.Reader
	st *readerState

	detachOnce sync.Once
	detached   chan struct{} // closed when every link is detached
	detachErr  error
	closeOnce  sync.Once
	closeErr   error
	finishMu   sync.Mutex
	finished   bool
	sink       func([]wire.Kernel)
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
	{id: vigilBPFVigilHookVIGIL_HOOK_IO_URING_COMPLETE, hook: "tp_btf/io_uring_complete", prog: vigilBPFProgHandleIoUringComplete},
}

// target is the tracepoint's name.
func (p probe) target() string { _, t, _ := strings.Cut(p.hook, "/"); return t }

// attach attaches p's program.
func (p probe) attach(coll *ebpf.Collection) (link.Link, error) {
	prog := coll.Programs[p.prog]
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

// Open loads the programs with their own maps, restricts them to the run
// started in cfg.CgroupPath, attaches every probe and starts reading. A
// probe whose hook this kernel lacks, or that fails to attach, is reported
// by Probes; Open fails when a required probe is missing or the
// configuration is invalid.
func Open(cfg Config) (c *Capture, err error) {
	size, err := ringSize(cfg.RingSize)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	warm()
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
	parsed, err := embeddedSpec()
	if err != nil {
		return c, fmt.Errorf("capture: parse embedded BPF object: %w", err)
	}
	spec := parsed.Copy()
	spec.Maps[vigilBPFMapEvents].MaxEntries = size
	if err := spec.Variables[vigilBPFVarWakeupBytes].Set(uint64(size / wakeupFraction)); err != nil {
		return c, fmt.Errorf("capture: set wakeup threshold: %w", err)
	}
	if err := spec.Variables[vigilBPFVarSessionCgroupId].Set(c.cgroupID); err != nil {
		return c, fmt.Errorf("capture: set session cgroup id: %w", err)
	}
	if err := spec.Variables[vigilBPFVarStopStage].Set(uint32(cfg.stopStage)); err != nil {
		return c, fmt.Errorf("capture: set stop stage: %w", err)
	}
	// A tracepoint this kernel does not have would fail the whole load:
	// a required one fails Open, an optional one is left out and
	// reported by Probes.
	missing := map[string]string{}
	for _, p := range probeTable {
		if err := haveKernelTarget(p); err != nil {
			if p.required {
				return c, fmt.Errorf("capture: %w: hook %s: %v", ErrNoBPF, p.hook, err)
			}
			missing[p.prog] = err.Error()
			delete(spec.Programs, p.prog)
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, *loadOptions())
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return c, fmt.Errorf("capture: %w: kernel rejected the capture programs: %v", ErrNoBPF, ve)
		}
		return c, fmt.Errorf("capture: %w: load programs: %v", ErrNoBPF, err)
	}
	c.coll = coll
	if err := fillSyscalls(coll.Maps[vigilBPFMapSyscalls], syscallTable, compatCalls()); err != nil {
		return c, fmt.Errorf("capture: %w", err)
	}
	c.timings.Load = time.Since(t)

	// The reader exists before any probe is attached, so nothing is
	// emitted that the reader cannot see.
	if c.rd, err = ringbuf.NewReader(coll.Maps[vigilBPFMapEvents]); err != nil {
		return c, fmt.Errorf("capture: open ring buffer reader: %w", err)
	}
	c.sink = cfg.Sink
	c.st = newReaderState(int(size), cfg.Sink)
	go c.st.run(c.rd)

	// The fork probe goes first and the others follow in table order, so
	// by the time the caller starts the run every probe is attached.
	t = time.Now()
	for _, p := range probeTable {
		st := ProbeStatus{Name: p.hook, Required: p.required}
		if why, ok := missing[p.prog]; ok {
			st.Error = why
		} else if l, aerr := p.attach(coll); aerr != nil {
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
			errs = append(errs, c.rd.Close())
			c.st.wait()
		}
		if c.coll != nil {
			c.coll.Close()
		}
		if c.cgroup != nil {
			errs = append(errs, c.cgroup.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
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
