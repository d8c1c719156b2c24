/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Record layout shared by capture.bpf.c and the Go decoder (decode.go).
 * All fields are little- or host-endian as written by the kernel; the Go
 * side decodes with the host byte order. Changing anything here requires
 * updating decode.go and regenerating.
 */
#ifndef VIGIL_CAPTURE_H
#define VIGIL_CAPTURE_H

/* Event kinds (index into counters; order matches event.Kinds). */
#define VIGIL_KIND_EXEC 0
#define VIGIL_KIND_FORK 1
#define VIGIL_KIND_EXIT 2
#define VIGIL_KIND_OPEN 3
#define VIGIL_KIND_CONNECT 4
#define VIGIL_NKINDS 5

/* Counter classes. */
#define VIGIL_C_EMIT 0          /* record reserved, numbered and submitted */
#define VIGIL_C_DROP 1          /* ring buffer reservation failed */
#define VIGIL_C_INFLIGHT_FULL 2 /* syscall arguments could not be stashed; kept for
                                 * the counter layout: syscall events are
                                 * built at exit from the saved registers,
                                 * so nothing is stashed any more */
#define VIGIL_NCLASSES 3
#define VIGIL_NCOUNTERS (VIGIL_NCLASSES * VIGIL_NKINDS)

/* Header flags. */
#define VIGIL_F_TRUNC1 0x01 /* first string filled its buffer */
#define VIGIL_F_TRUNC2 0x02 /* second string filled its buffer */
#define VIGIL_F_FAULT 0x04  /* a user/kernel memory read failed */

/* Open syscalls. */
#define VIGIL_SYS_OPENAT 0
#define VIGIL_SYS_OPENAT2 1

#define VIGIL_STR_MAX 4096 /* PATH_MAX, including the NUL */
#define VIGIL_SOCKADDR_MAX 128
#define VIGIL_UNIX_PATH_MAX 108

struct vigil_hdr {
	__u64 seq;
	__u64 ts_ns;
	__u64 cgroup_id;
	__u32 pid; /* tgid */
	__u32 tid;
	__u8 kind;
	__u8 flags;
	__u16 len1; /* bytes of the first string (no NUL) */
	__u16 len2; /* bytes of the second string (no NUL) */
	__u16 _pad;
	char comm[16];
}; /* 56 bytes */

struct vigil_fork {
	__u32 parent_pid;
	__u32 parent_tid;
	__u32 child_pid;
	__u32 child_tid;
	__u32 thread;
};

struct vigil_exit {
	__s32 exit_code; /* task->exit_code: status << 8 | signal */
	__u32 group_dead;
};

struct vigil_open {
	__s32 dirfd;
	__u32 syscall;
	__u64 flags;
	__u64 mode;
	__s64 ret;
};

struct vigil_connect {
	__s32 fd;
	__u16 family;
	__u16 port; /* host order */
	__u8 addr[16];
	__s64 ret;
	__u32 addrlen;
	__u32 _pad;
};

union vigil_body {
	struct vigil_fork fork;
	struct vigil_exit exit;
	struct vigil_open open;
	struct vigil_connect connect;
}; /* 40 bytes */

/* Record = hdr + body (VIGIL_FIXED_SIZE bytes) + str1[len1] + str2[len2]. */
#define VIGIL_FIXED_SIZE 96

struct vigil_scratch {
	struct vigil_hdr hdr;
	union vigil_body body;
	char str1[VIGIL_STR_MAX];
	char str2[VIGIL_STR_MAX];
};

_Static_assert(sizeof(struct vigil_hdr) == 56, "vigil_hdr layout");
_Static_assert(sizeof(union vigil_body) == 40, "vigil_body layout");
_Static_assert(sizeof(struct vigil_hdr) + sizeof(union vigil_body) == VIGIL_FIXED_SIZE, "fixed size");

#endif /* VIGIL_CAPTURE_H */
