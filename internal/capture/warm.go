package capture

import (
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

// kernelBTF is the general-purpose parse of the kernel's BTF, used only if
// the projection fails; shared by every Open in the process, so it is
// parsed at most once.
var kernelBTF = btf.NewCache()

var warmOnce sync.Once

// warm starts, once per process and in the background, what the first
// Open would otherwise do serially before the kernel sees a single
// program: parsing the embedded object and projecting the kernel's BTF.
// Open then finds them done, or waits for them.
func warm() {
	warmOnce.Do(func() {
		go kernelTypes()
	})
}

// loadOptions resolves CO-RE against the projected kernel types, or
// against the full kernel BTF if the projection could not be built.
func loadOptions() *ebpf.CollectionOptions {
	if kt, err := kernelTypes(); err == nil {
		return &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kt}}
	}
	return &ebpf.CollectionOptions{Cache: kernelBTF}
}
