//go:build linux

package capture

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// embeddedSpec parses the embedded BPF object once per process; each Open
// works on a copy.
var embeddedSpec = sync.OnceValues(loadVigilBPF)

// kernelTypes is the projection of the kernel's BTF onto the types the
// programs use (see projectKernelTypes), built once per process.
var kernelTypes = sync.OnceValues(func() (*btf.Spec, error) {
	spec, err := embeddedSpec()
	if err != nil {
		return nil, err
	}
	return projectKernelTypes(btfPath, spec)
})

// kernelBTF is the general-purpose parse of the kernel's BTF: it finds the
// functions and tracepoints the programs attach to, and resolves CO-RE if
// the projection fails. Shared by every Open in the process, so it is
// parsed at most once.
var kernelBTF = btf.NewCache()

// kernelSpec indexes the kernel's BTF by name once per process.
var kernelSpec = sync.OnceValues(func() (*btf.Spec, error) {
	k, err := kernelBTF.Kernel()
	if err != nil {
		return nil, err
	}
	// The first lookup builds the name index; do it here, in the
	// background, rather than inside Open.
	var td *btf.Typedef
	_ = k.TypeByName("btf_trace_sys_exit", &td)
	return k, nil
})

var warmOnce sync.Once

// warm starts, once per process and in the background, what the first
// Open would otherwise do serially before the kernel sees a single
// program: parsing the embedded object and projecting the kernel's BTF.
// Open then finds them done, or waits for them.
func warm() {
	warmOnce.Do(func() {
		go kernelTypes()
		go kernelSpec()
	})
}

// loadOptions resolves CO-RE against the projected kernel types, or
// against the full kernel BTF if the projection could not be built.
func loadOptions() *ebpf.CollectionOptions {
	kernelSpec() // the attach targets are looked up in it
	if kt, err := kernelTypes(); err == nil {
		return &ebpf.CollectionOptions{Cache: kernelBTF, Programs: ebpf.ProgramOptions{KernelTypes: kt}}
	}
	return &ebpf.CollectionOptions{Cache: kernelBTF}
}

// haveKernelTarget reports whether the kernel has the BTF tracepoint p
// attaches to.
func haveKernelTarget(p probe) error {
	k, err := kernelSpec()
	if err != nil {
		return fmt.Errorf("kernel BTF: %w", err)
	}
	var td *btf.Typedef
	if err := k.TypeByName("btf_trace_"+p.target(), &td); err != nil {
		return fmt.Errorf("this kernel has no tracepoint %s", p.target())
	}
	return nil
}
