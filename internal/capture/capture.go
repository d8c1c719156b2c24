package capture

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
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
	Tracefs time.Duration
	Load    time.Duration
	Attach  time.Duration
	Total   time.Duration
}

// Capture is one loaded and attached set of programs with its own session
// cgroup, ring buffer, counters and sequence.
type Capture struct {
	objs     vigilBPFObjects
	loaded   bool
	links    []link.Link
	probes   []ProbeStatus
	cgroup   *os.File
	cgroupID uint64
	timings  Timings
	mounted  bool

	rd *ringbuf.Reader
	st *readerState

	detachOnce sync.Once
	detached   chan struct{} // closed when every link is detached
	detachErr  error
	closeOnce  sync.Once
	closeErr   error
	finishMu   sync.Mutex
	finished   bool
}

// kernelBTF is shared by every Open in the process, so the kernel's BTF is
// parsed at most once.
var kernelBTF = btf.NewCache()

// probe describes how one program attaches.
type probe struct {
	name     string
	prog     func(*vigilBPFObjects) *ebpf.Program
	tpGroup  string // syscall tracepoint group; empty for tp_btf
	required bool
}

var probeTable = []probe{
	{name: "sched_process_exec", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleExec }, required: true},
	{name: "sched_process_fork", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleFork }, required: true},
	{name: "sched_process_exit", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleExit }, required: true},
	// Exit probes attach before enter probes, so no syscall is stashed
	// at entry without a probe ready to emit it at exit.
	{name: "sys_exit_openat", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.ExitOpenat }, required: true},
	{name: "sys_exit_openat2", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.ExitOpenat2 }, required: true},
	{name: "sys_exit_connect", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.ExitConnect }, required: true},
	{name: "sys_enter_openat", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.EnterOpenat }, required: true},
	{name: "sys_enter_openat2", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.EnterOpenat2 }, required: true},
	{name: "sys_enter_connect", tpGroup: "syscalls", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.EnterConnect }, required: true},
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

// Open loads the programs with their own maps, restricts them to
// cfg.CgroupPath, attaches every probe and starts reading. A probe that
// fails to attach is reported by Probes, not by an error; Open fails only
// when nothing could be attached or the configuration is invalid.
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
	if c.mounted, err = ensureTracefs(); err != nil {
		return c, err
	}
	c.timings.Tracefs = time.Since(start)

	t := time.Now()
	spec, err := loadVigilBPF()
	if err != nil {
		return c, fmt.Errorf("capture: parse embedded BPF object: %w", err)
	}
	spec.Maps[vigilBPFMapEvents].MaxEntries = size
	if err := spec.Variables[vigilBPFVarWakeupBytes].Set(uint64(size / wakeupFraction)); err != nil {
		return c, fmt.Errorf("capture: set wakeup threshold: %w", err)
	}
	if err := spec.Variables[vigilBPFVarSessionCgroupId].Set(c.cgroupID); err != nil {
		return c, fmt.Errorf("capture: set session cgroup id: %w", err)
	}
	if err := spec.LoadAndAssign(&c.objs, &ebpf.CollectionOptions{Cache: kernelBTF}); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return c, fmt.Errorf("capture: %w: kernel rejected the capture programs: %v", ErrNoBPF, ve)
		}
		return c, fmt.Errorf("capture: %w: load programs: %v", ErrNoBPF, err)
	}
	c.loaded = true
	if err := c.objs.SessionCgroup.Update(uint32(0), uint32(c.cgroup.Fd()), ebpf.UpdateAny); err != nil {
		return c, fmt.Errorf("capture: set session cgroup %s: %w", cfg.CgroupPath, err)
	}
	c.timings.Load = time.Since(t)

	// The reader exists before any probe is attached, so nothing is
	// emitted that the reader cannot see.
	if c.rd, err = ringbuf.NewReader(c.objs.Events); err != nil {
		return c, fmt.Errorf("capture: open ring buffer reader: %w", err)
	}
	c.st = newReaderState()
	go c.st.run(c.rd)

	t = time.Now()
	attached := 0
	for _, p := range probeTable {
		st := ProbeStatus{Name: p.name, Required: p.required}
		l, aerr := attach(p, p.prog(&c.objs))
		if aerr != nil {
			st.Error = aerr.Error()
		} else {
			st.Attached = true
			c.links = append(c.links, l)
			attached++
		}
		c.probes = append(c.probes, st)
	}
	c.timings.Attach = time.Since(t)
	c.timings.Total = time.Since(start)
	if attached == 0 {
		return c, fmt.Errorf("capture: %w: %s", ErrNotAttached, c.probes[0].Error)
	}
	return c, nil
}

func attach(p probe, prog *ebpf.Program) (link.Link, error) {
	if p.tpGroup != "" {
		return link.Tracepoint(p.tpGroup, p.name, prog, nil)
	}
	return link.AttachTracing(link.TracingOptions{Program: prog})
}

// Probes reports every probe, attached or not, in attach order.
func (c *Capture) Probes() []ProbeStatus {
	return append([]ProbeStatus(nil), c.probes...)
}

// Timings reports how long Open took, by phase.
func (c *Capture) Timings() Timings { return c.timings }

// SessionCgroupID is the cgroup id of Config.CgroupPath.
func (c *Capture) SessionCgroupID() uint64 { return c.cgroupID }

// MountedTracefs reports whether Open mounted tracefs itself.
func (c *Capture) MountedTracefs() bool { return c.mounted }

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
		if c.loaded {
			errs = append(errs, c.objs.Close())
		}
		if c.cgroup != nil {
			errs = append(errs, c.cgroup.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// startDetach begins detaching every probe in the background. Finish calls
// it once the drain is over, so the detach (an RCU grace period per syscall
// tracepoint) overlaps whatever the caller does before Close.
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

// closeLinks detaches every link concurrently: detaching a syscall
// tracepoint waits for an RCU grace period (tens of milliseconds each), and
// concurrent detaches share the wait instead of queueing for one each.
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
