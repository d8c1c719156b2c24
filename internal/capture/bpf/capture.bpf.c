// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Kernel side of vigil's capture: exec, fork, exit, openat/openat2 and
 * connect events for tasks of one session cgroup (v2) and its descendants.
 *
 * Every event is filtered by cgroup before anything is reserved in the ring
 * buffer. Records are variable length (fixed header + body + strings), so a
 * short path costs a short record. The per-run sequence number is taken only
 * after a successful reservation, so emitted records are numbered 0..n-1
 * without gaps; every failed reservation and every in-flight map overflow is
 * counted per event kind.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "capture.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Slot 0 holds the session cgroup (set by user space after load). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} session_cgroup SEC(".maps");

/* Size is replaced by the loader (Config.RingSize). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 23);
} events SEC(".maps");

/* Counter index = counter class * VIGIL_NKINDS + kind. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* One record under construction per CPU and kind: programs of the same
 * kind cannot nest on a CPU, programs of different kinds use different
 * slots. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_NKINDS);
	__type(key, __u32);
	__type(value, struct vigil_scratch);
} scratch SEC(".maps");

/* Syscall arguments from sys_enter, keyed by thread id, until sys_exit. */
struct inflight {
	__u64 ptr; /* filename, open_how or sockaddr (user pointers) */
	__u64 how; /* openat2: struct open_how pointer */
	__u64 flags;
	__u64 mode;
	__s32 fd;
	__u32 sub; /* VIGIL_SYS_* or sockaddr length */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_INFLIGHT_MAX);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight_open SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_INFLIGHT_MAX);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight_connect SEC(".maps");

/* Wake the reader only once this many bytes are waiting (set by the
 * loader; 0 keeps the kernel's wake-when-caught-up default). Between
 * wakeups the reader polls on a short timer, so a trickle of events is
 * still read promptly without one wakeup per event. */
volatile const __u64 wakeup_bytes = 0;

/* Next sequence number; equals the number of emitted records. */
__u64 next_seq = 0;

static __always_inline void count(__u32 class, __u32 kind)
{
	__u32 idx = class * VIGIL_NKINDS + kind;
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		*v += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline bool in_session(void)
{
	return bpf_current_task_under_cgroup(&session_cgroup, 0) == 1;
}

/* Cgroup id of the session (set by the loader); used only where the task
 * of interest is not the current one. */
volatile const __u64 session_cgroup_id = 0;

/* How many levels below the session a task's cgroup may be for
 * task_in_session to recognise it. */
#define VIGIL_WALK_MAX 16

/* Whether t's v2 cgroup is the session cgroup or below it, walking up the
 * cgroup tree (for a task other than current). */
static __always_inline bool task_in_session(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	for (int i = 0; i < VIGIL_WALK_MAX && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == session_cgroup_id)
			return true;
		struct cgroup_subsys_state *css = BPF_CORE_READ(cg, self.parent);
		if (!css)
			return false;
		cg = (struct cgroup *)((char *)css - bpf_core_field_offset(struct cgroup, self));
	}
	return false;
}

static __always_inline struct vigil_scratch *begin(__u32 kind)
{
	struct vigil_scratch *s = bpf_map_lookup_elem(&scratch, &kind);
	if (!s)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	s->hdr.ts_ns = bpf_ktime_get_ns();
	s->hdr.cgroup_id = bpf_get_current_cgroup_id();
	s->hdr.pid = id >> 32;
	s->hdr.tid = (__u32)id;
	s->hdr.kind = kind;
	s->hdr.flags = 0;
	s->hdr.len1 = 0;
	s->hdr.len2 = 0;
	__builtin_memset(&s->body, 0, sizeof(s->body));
	bpf_get_current_comm(&s->hdr.comm, sizeof(s->hdr.comm));
	return s;
}

/* Clamp a string length so the verifier sees it bounded by the slot size. */
static __always_inline __u32 clamp_len(long n)
{
	if (n <= 0)
		return 0;
	__u32 u = (__u32)n;
	if (u > VIGIL_STR_MAX)
		u = VIGIL_STR_MAX;
	return u;
}

/* Reserve exactly the bytes this record needs, number it, fill it, submit. */
static __always_inline void emit(struct vigil_scratch *s, __u32 kind)
{
	__u32 len1 = clamp_len(s->hdr.len1);
	__u32 len2 = clamp_len(s->hdr.len2);
	struct bpf_dynptr dp;

	if (bpf_ringbuf_reserve_dynptr(&events, VIGIL_FIXED_SIZE + len1 + len2, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, 0);
		count(VIGIL_C_DROP, kind);
		return;
	}
	s->hdr.seq = __sync_fetch_and_add(&next_seq, 1);
	bpf_dynptr_write(&dp, 0, s, VIGIL_FIXED_SIZE, 0);
	if (len1)
		bpf_dynptr_write(&dp, VIGIL_FIXED_SIZE, s->str1, len1, 0);
	if (len2)
		bpf_dynptr_write(&dp, VIGIL_FIXED_SIZE + len1, s->str2, len2, 0);
	__u64 wake = 0;
	if (wakeup_bytes)
		wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit_dynptr(&dp, wake);
	count(VIGIL_C_EMIT, kind);
}

/* String helpers: store the length without the NUL; flag a full buffer. */
static __always_inline __u16 str_user(char *dst, const void *src, __u8 *flags, __u8 trunc_bit)
{
	long n = bpf_probe_read_user_str(dst, VIGIL_STR_MAX, src);
	if (n < 0) {
		*flags |= VIGIL_F_FAULT;
		return 0;
	}
	if (n >= VIGIL_STR_MAX)
		*flags |= trunc_bit;
	return n > 0 ? n - 1 : 0;
}

static __always_inline __u16 str_kernel(char *dst, const void *src, __u8 *flags, __u8 trunc_bit)
{
	long n = bpf_probe_read_kernel_str(dst, VIGIL_STR_MAX, src);
	if (n < 0) {
		*flags |= VIGIL_F_FAULT;
		return 0;
	}
	if (n >= VIGIL_STR_MAX)
		*flags |= trunc_bit;
	return n > 0 ? n - 1 : 0;
}

SEC("tp_btf/sched_process_exec")
int handle_exec(unsigned long long *ctx)
{
	if (!in_session())
		return 0;
	struct task_struct *p = (struct task_struct *)ctx[0];
	struct linux_binprm *bprm = (struct linux_binprm *)ctx[2];
	struct vigil_scratch *s = begin(VIGIL_KIND_EXEC);
	if (!s)
		return 0;
	const char *fn = BPF_CORE_READ(bprm, filename);
	s->hdr.len1 = str_kernel(s->str1, fn, &s->hdr.flags, VIGIL_F_TRUNC1);
	unsigned long arg = BPF_CORE_READ(p, mm, arg_start);
	s->hdr.len2 = str_user(s->str2, (const void *)arg, &s->hdr.flags, VIGIL_F_TRUNC2);
	emit(s, VIGIL_KIND_EXEC);
	return 0;
}

/* A fork is the session's when the parent is in the session, or when a
 * parent outside clones straight into it (clone3 CLONE_INTO_CGROUP: how a
 * session's first task is started). The latter is reported with the
 * child's cgroup id, since the event is about the task that entered. */
SEC("tp_btf/sched_process_fork")
int handle_fork(unsigned long long *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx[0];
	struct task_struct *child = (struct task_struct *)ctx[1];
	bool inside = in_session();
	if (!inside && !task_in_session(child))
		return 0;
	struct vigil_scratch *s = begin(VIGIL_KIND_FORK);
	if (!s)
		return 0;
	if (!inside)
		s->hdr.cgroup_id = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);
	s->body.fork.parent_pid = BPF_CORE_READ(parent, tgid);
	s->body.fork.parent_tid = BPF_CORE_READ(parent, pid);
	s->body.fork.child_pid = BPF_CORE_READ(child, tgid);
	s->body.fork.child_tid = BPF_CORE_READ(child, pid);
	s->body.fork.thread = s->body.fork.child_pid == s->body.fork.parent_pid;
	emit(s, VIGIL_KIND_FORK);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int handle_exit(unsigned long long *ctx)
{
	if (!in_session())
		return 0;
	struct task_struct *p = (struct task_struct *)ctx[0];
	struct vigil_scratch *s = begin(VIGIL_KIND_EXIT);
	if (!s)
		return 0;
	s->body.exit.exit_code = BPF_CORE_READ(p, exit_code);
	s->body.exit.group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	emit(s, VIGIL_KIND_EXIT);
	return 0;
}

static __always_inline int open_enter(__u32 sub, long dirfd, __u64 path, __u64 flags, __u64 mode, __u64 how)
{
	if (!in_session())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight in = {
		.ptr = path,
		.how = how,
		.flags = flags,
		.mode = mode,
		.fd = (__s32)dirfd,
		.sub = sub,
	};
	if (bpf_map_update_elem(&inflight_open, &tid, &in, BPF_ANY))
		count(VIGIL_C_INFLIGHT_FULL, VIGIL_KIND_OPEN);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int enter_openat(struct trace_event_raw_sys_enter *ctx)
{
	return open_enter(VIGIL_SYS_OPENAT, ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3], 0);
}

SEC("tracepoint/syscalls/sys_enter_openat2")
int enter_openat2(struct trace_event_raw_sys_enter *ctx)
{
	return open_enter(VIGIL_SYS_OPENAT2, ctx->args[0], ctx->args[1], 0, 0, ctx->args[2]);
}

static __always_inline int open_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *in = bpf_map_lookup_elem(&inflight_open, &tid);
	if (!in)
		return 0;
	struct vigil_scratch *s = begin(VIGIL_KIND_OPEN);
	if (!s) {
		bpf_map_delete_elem(&inflight_open, &tid);
		return 0;
	}
	s->body.open.dirfd = in->fd;
	s->body.open.syscall = in->sub;
	s->body.open.flags = in->flags;
	s->body.open.mode = in->mode;
	s->body.open.ret = ret;
	if (in->sub == VIGIL_SYS_OPENAT2 && in->how) {
		struct open_how how = {};
		if (bpf_probe_read_user(&how, sizeof(how), (const void *)in->how) == 0) {
			s->body.open.flags = how.flags;
			s->body.open.mode = how.mode;
		} else {
			s->hdr.flags |= VIGIL_F_FAULT;
		}
	}
	s->hdr.len1 = str_user(s->str1, (const void *)in->ptr, &s->hdr.flags, VIGIL_F_TRUNC1);
	bpf_map_delete_elem(&inflight_open, &tid);
	emit(s, VIGIL_KIND_OPEN);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int exit_openat(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int exit_openat2(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_enter_connect")
int enter_connect(struct trace_event_raw_sys_enter *ctx)
{
	if (!in_session())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight in = {
		.ptr = ctx->args[1],
		.fd = (__s32)ctx->args[0],
		.sub = (__u32)ctx->args[2],
	};
	if (bpf_map_update_elem(&inflight_connect, &tid, &in, BPF_ANY))
		count(VIGIL_C_INFLIGHT_FULL, VIGIL_KIND_CONNECT);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_connect")
int exit_connect(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct inflight *in = bpf_map_lookup_elem(&inflight_connect, &tid);
	if (!in)
		return 0;
	struct vigil_scratch *s = begin(VIGIL_KIND_CONNECT);
	if (!s) {
		bpf_map_delete_elem(&inflight_connect, &tid);
		return 0;
	}
	s->body.connect.fd = in->fd;
	s->body.connect.ret = ctx->ret;
	s->body.connect.addrlen = in->sub;
	__u8 sa[VIGIL_SOCKADDR_MAX] = {};
	__u32 alen = in->sub;
	if (alen > sizeof(sa))
		alen = sizeof(sa);
	if (alen >= 2 && bpf_probe_read_user(sa, alen, (const void *)in->ptr) == 0) {
		__u16 family = sa[0] | (sa[1] << 8);
		s->body.connect.family = family;
		s->body.connect.port = ((__u16)sa[2] << 8) | sa[3]; /* network order */
		if (family == 2) { /* AF_INET: sin_addr at offset 4 */
			__builtin_memcpy(s->body.connect.addr, &sa[4], 4);
		} else if (family == 10) { /* AF_INET6: sin6_addr at offset 8 */
			__builtin_memcpy(s->body.connect.addr, &sa[8], 16);
		} else if (family == 1) { /* AF_UNIX: raw sun_path bytes */
			s->body.connect.port = 0;
			__u32 n = alen - 2;
			if (n > VIGIL_UNIX_PATH_MAX)
				n = VIGIL_UNIX_PATH_MAX;
			if (n > 0 && bpf_probe_read_user(s->str1, n & 0x7f, (const void *)(in->ptr + 2)) == 0)
				s->hdr.len1 = n & 0x7f;
		}
	} else if (alen >= 2) {
		s->hdr.flags |= VIGIL_F_FAULT;
	}
	bpf_map_delete_elem(&inflight_connect, &tid);
	emit(s, VIGIL_KIND_CONNECT);
	return 0;
}
