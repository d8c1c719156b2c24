/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Minimal kernel type definitions for capture.bpf.c.
 *
 * Only the fields the programs read are declared. Every struct carries
 * preserve_access_index, so clang emits CO-RE relocations and the loader
 * resolves the real offsets against the running kernel's BTF
 * (/sys/kernel/btf/vmlinux). Field names must match the kernel's; layout
 * and size need not. This keeps the build reproducible and architecture
 * neutral (amd64 and arm64) without committing a multi-megabyte vmlinux.h.
 */
#ifndef VIGIL_VMLINUX_MIN_H
#define VIGIL_VMLINUX_MIN_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef int pid_t;
typedef _Bool bool;
#define true 1
#define false 0

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};

enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};

enum {
	BPF_RB_AVAIL_DATA = 0,
};

struct bpf_dynptr {
	__u64 __opaque[2];
} __attribute__((aligned(8)));

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;
};

struct mm_struct {
	unsigned long arg_start;
};

struct kernfs_node {
	__u64 id;
};

struct cgroup_subsys_state {
	struct cgroup_subsys_state *parent;
};

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct task_struct {
	pid_t pid;
	pid_t tgid;
	int exit_code;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct css_set *cgroups;
};

struct linux_binprm {
	const char *filename;
};

struct pt_regs;

/* x86_64 layout (arch/x86/include/asm/ptrace.h). */
struct pt_regs___x86 {
	unsigned long r10;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
};

struct thread_info___x86 {
	__u32 status;
};

struct task_struct___x86 {
	struct thread_info___x86 thread_info;
};

/* arm64 layout: struct user_pt_regs starts struct pt_regs
 * (arch/arm64/include/asm/ptrace.h). */
struct user_pt_regs___arm64 {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};

struct pt_regs___arm64 {
	__u64 orig_x0;
	int syscallno;
};

#pragma clang attribute pop

/* User-space ABI structs: fixed layout, read with bpf_probe_read_user. */
struct open_how {
	__u64 flags;
	__u64 mode;
	__u64 resolve;
};

#endif /* VIGIL_VMLINUX_MIN_H */
