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
/* Kernel (not UAPI) register names for bpf_tracing.h. */
#define __VMLINUX_H__

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
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
};

enum {
	BPF_F_NO_PREALLOC = 1,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
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
	unsigned long arg_end;
};

struct kernfs_node {
	__u64 id;
};

struct cgroup_subsys_state {
	struct cgroup_subsys_state *parent;
};

struct cgroup_root;

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
	struct cgroup_root *root;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct path;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct fs_struct;

struct task_struct {
	unsigned int flags;
	pid_t pid;
	pid_t tgid;
	int exit_code;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct css_set *cgroups;
	struct files_struct *files;
	struct fs_struct *fs;
	char comm[16];
};

/* Path resolution: dentry and mount walk (fs/d_path.c does the same under
 * rename_lock; see walk_path in capture.bpf.c). */
struct qstr {
	const unsigned char *name;
};

struct hlist_bl_node {
	struct hlist_bl_node *next;
	struct hlist_bl_node **pprev;
};

struct super_block {
	__u32 s_dev;
};

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
};

struct dentry {
	struct hlist_bl_node d_hash;
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
};

struct vfsmount {
	struct dentry *mnt_root;
};

struct mnt_namespace;

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct mnt_namespace *mnt_ns;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct fs_struct {
	struct path pwd;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	void *private_data;
	unsigned int f_mode;
	unsigned int f_flags;
};

struct linux_binprm {
	struct file *file;
	int argc;
	const char *filename;
};

/* Sockets: local addresses for bind/listen. */
struct in6_addr {
	__u8 in6_u[16];
};

struct sock_common {
	__u32 skc_daddr;
	__u32 skc_rcv_saddr;
	__u16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
};

struct sock {
	struct sock_common __sk_common;
};

struct socket {
	short type;
	struct sock *sk;
};

struct io_cqe {
	__u64 user_data;
	int res;
};

struct io_kiocb {
	__u8 opcode;
	/* io_req_flags_t: 32 or 64 bits by kernel; the low 32 hold the
	 * IOSQE-mapped bits (little-endian read). */
	__u32 flags;
	struct io_cqe cqe;
};

/* An open request's arguments, at the start of its io_kiocb (the request's
 * command area, io_kiocb_to_cmd): file_slot is non-zero for an open into
 * the ring's fixed-file table. */
struct io_open {
	__u32 file_slot;
};

/* The ring: its IORING_SETUP_* flags. */
struct io_ring_ctx {
	unsigned int flags;
};

/* The kernel's own copy of a name passed to a syscall (getname). */
struct filename {
	const char *name;
};

/* The file-tree requests' arguments, at the start of their io_kiocb: the
 * names as the kernel copied them when it prepared the request. (Linux 6.0
 * on; before, link and symlink had other structs and are not read.) */
struct io_unlink {
	struct filename *filename;
};

struct io_mkdir {
	struct filename *filename;
};

struct io_rename {
	struct filename *oldpath;
	struct filename *newpath;
};

struct io_link {
	struct filename *oldpath;
	struct filename *newpath;
};

struct io_uring_cqe {
	__u64 user_data;
	int res;
};

/* The registers at kernel entry, as the kprobe macros of bpf_tracing.h
 * read them (PT_REGS_PARMn, PT_REGS_RC). */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long sp;
};
struct thread_info___x86 {
	__u32 status;
};

struct task_struct___x86 {
	struct thread_info___x86 thread_info;
};
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};

struct pt_regs {
	struct user_pt_regs user_regs;
	__u64 orig_x0;
	int syscallno;
};
#endif

#pragma clang attribute pop

#endif /* VIGIL_VMLINUX_MIN_H */
