//go:build linux

package capture

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// parsed is a value built once and kept for later Opens in the process,
// until ReleaseCaches forgets it (sync.OnceValues cannot forget).
type parsed[T any] struct {
	build func() (T, error)
	mu    sync.Mutex
	done  bool
	v     T
	err   error
}

func (p *parsed[T]) get() (T, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.v, p.err = p.build()
		p.done = true
	}
	return p.v, p.err
}

func (p *parsed[T]) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var zero T
	p.v, p.err, p.done = zero, nil, false
}

// embeddedSpec parses the embedded BPF object; each Open works on a copy.
var embeddedSpec = &parsed[*ebpf.CollectionSpec]{build: loadVigilBPF}

// kernelTypes is the projection of the kernel's BTF onto the types the
// programs use (see projectKernelTypes).
var kernelTypes = &parsed[*btf.Spec]{build: func() (*btf.Spec, error) {
	spec, err := embeddedSpec.get()
	if err != nil {
		return nil, err
	}
	return projectKernelTypes(btfPath, spec)
}}

// kernelBTF is the general-purpose parse of the kernel's BTF: it finds the
// functions and tracepoints the programs attach to, and resolves CO-RE if
// the projection fails. Shared by every Open until ReleaseCaches, so it is
// parsed at most once meanwhile.
var kernelBTF = &parsed[*btf.Cache]{build: func() (*btf.Cache, error) { return btf.NewCache(), nil }}

// kernelSpec indexes the kernel's BTF by name.
var kernelSpec = &parsed[*btf.Spec]{build: func() (*btf.Spec, error) {
	cache, _ := kernelBTF.get()
	k, err := cache.Kernel()
	if err != nil {
		return nil, err
	}
	// The first lookup builds the name index; do it here, in the
	// background, rather than inside Open.
	var td *btf.Typedef
	_ = k.TypeByName("btf_trace_sys_exit", &td)
	return k, nil
}}

// ReleaseCaches frees what loading programs parsed and keeps for later
// Opens in the process: the embedded object and the kernel's BTF, several
// MiB of heap that a process opening one capture (vigil record) would
// otherwise carry through the run. A later Open parses them again.
func ReleaseCaches() {
	// Each before what it is built from, so that a build still running
	// cannot leave what it used behind.
	kernelTypes.forget()
	embeddedSpec.forget()
	kernelSpec.forget()
	kernelBTF.forget()
}

var warmOnce sync.Once

// warm starts, once per process and in the background, what the first
// Open would otherwise do serially before the kernel sees a single
// program: parsing the embedded object and projecting the kernel's BTF.
// Open then finds them done, or waits for them.
func warm() {
	warmOnce.Do(func() {
		go kernelTypes.get()
		go kernelSpec.get()
	})
}

// loadOptions resolves CO-RE against the projected kernel types, or
// against the full kernel BTF if the projection could not be built.
func loadOptions() *ebpf.CollectionOptions {
	kernelSpec.get() // the attach targets are looked up in it
	cache, _ := kernelBTF.get()
	if kt, err := kernelTypes.get(); err == nil {
		return &ebpf.CollectionOptions{Cache: cache, Programs: ebpf.ProgramOptions{KernelTypes: kt}}
	}
	return &ebpf.CollectionOptions{Cache: cache}
}

// kernelTarget finds the prototype of the BTF tracepoint p attaches to:
// the tracepoint's arguments, after the first (void *__data).
func kernelTarget(p probe) (*btf.FuncProto, error) {
	k, err := kernelSpec.get()
	if err != nil {
		return nil, fmt.Errorf("kernel BTF: %w", err)
	}
	var td *btf.Typedef
	if err := k.TypeByName("btf_trace_"+p.target(), &td); err != nil {
		return nil, fmt.Errorf("this kernel has no tracepoint %s", p.target())
	}
	ptr, ok := btf.UnderlyingType(td.Type).(*btf.Pointer)
	if !ok {
		return nil, fmt.Errorf("tracepoint %s: btf_trace_%[1]s is not a function pointer", p.target())
	}
	fp, ok := btf.UnderlyingType(ptr.Target).(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("tracepoint %s: btf_trace_%[1]s is not a function pointer", p.target())
	}
	return fp, nil
}
