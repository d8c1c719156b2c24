package capture

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
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
	// Tracefs is always zero: no probe needs tracefs.
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

// probe describes one program; every program attaches to a raw
// tracepoint, whose link detaches without waiting for an RCU grace period
// per probe, unlike a perf-event syscall tracepoint. Raw tracepoints are
// attached by name, so loading needs no lookup in the kernel's BTF beyond
// the CO-RE types.
type probe struct {
	name     string
	prog     func(*vigilBPFObjects) *ebpf.Program
	required bool
}

var probeTable = []probe{
	{name: "sched_process_exec", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleExec }, required: true},
	{name: "sched_process_fork", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleFork }, required: true},
	{name: "sched_process_exit", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleExit }, required: true},
	// openat, openat2 and connect events are built at syscall exit, where
	// the saved registers still hold the arguments; the program dispatches
	// on the syscall number before anything else.
	{name: "sys_exit", prog: func(o *vigilBPFObjects) *ebpf.Program { return o.HandleSysExit }, required: true},
}

// syscallNumbers are the watched syscalls' numbers on the architecture this
// binary is built for (x86_64 and arm64 number them differently).
var syscallNumbers = map[string]int64{
	vigilBPFVarNrOpenat:  unix.SYS_OPENAT,
	vigilBPFVarNrOpenat2: unix.SYS_OPENAT2,
	vigilBPFVarNrConnect: unix.SYS_CONNECT,
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
	for name, nr := range syscallNumbers {
		if err := spec.Variables[name].Set(nr); err != nil {
			return c, fmt.Errorf("capture: set syscall number %s: %w", name, err)
		}
	}
	if err := spec.LoadAndAssign(&c.objs, loadOptions()); err != nil {
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
		l, aerr := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.name, Program: p.prog(&c.objs)})
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

// Probes reports every probe, attached or not, in attach order.
func (c *Capture) Probes() []ProbeStatus {
	return append([]ProbeStatus(nil), c.probes...)
}

// Timings reports how long Open took, by phase.
func (c *Capture) Timings() Timings { return c.timings }

// SessionCgroupID is the cgroup id of Config.CgroupPath.
func (c *Capture) SessionCgroupID() uint64 { return c.cgroupID }

// MountedTracefs reports whether Open mounted tracefs itself. No probe
// needs tracefs (raw tracepoints attach by name), so it is always false.
func (c *Capture) MountedTracefs() bool { return false }

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
