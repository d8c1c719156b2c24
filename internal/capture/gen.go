package capture

// Regenerate the BPF objects and their Go bindings (see README.md).
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cflags "-O2 -g -Wall -Werror -mcpu=v3" -no-global-types vigilBPF bpf/capture.bpf.c -- -I./bpf
