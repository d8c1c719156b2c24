//go:build linux

package capture

// Regenerate the BPF objects and their Go bindings (see README.md). The
// -type list makes bpf2go emit Go types for the record layout in
// bpf/capture.h, so decode.go reads records through generated structs.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target amd64,arm64 -tags linux -cflags "-O2 -g -Wall -Werror -mcpu=v3" -no-global-types -type vigil_hdr -type vigil_fork -type vigil_exit -type vigil_exec -type vigil_sys -type vigil_net -type vigil_migrate -type vigil_iouring -type vigil_sysdesc -type vigil_sysentry -type vigil_kind -type vigil_hook -type vigil_flag -type vigil_op -type vigil_counter_class -type vigil_stage -type vigil_session vigilBPF bpf/capture.bpf.c -- -I./bpf
