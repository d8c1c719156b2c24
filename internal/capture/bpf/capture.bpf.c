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
	/* str1 follows the fixed part in the scratch record: one copy. */
	bpf_dynptr_write(&dp, 0, s, VIGIL_FIXED_SIZE + len1, 0);
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

SEC("raw_tracepoint/sched_process_exec")
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
SEC("raw_tracepoint/sched_process_fork")
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

SEC("raw_tracepoint/sched_process_exit")
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

/*
 * Syscall events are built entirely at syscall exit: the saved user
 * registers still hold the arguments then (the syscall does not modify
 * them; on arm64 the first argument survives in orig_x0), so nothing has
 * to be stashed between entry and exit and only one program runs per
 * syscall on the host.
 *
 * Syscall numbers of the running architecture are set by the loader from
 * golang.org/x/sys/unix (x86_64 and arm64 number them differently). The
 * program runs for every syscall of every task on the host while a capture
 * is attached, so it compares the number before anything else.
 */
volatile const long nr_openat = -1;
volatile const long nr_openat2 = -1;
volatile const long nr_connect = -1;

/*
 * The architecture's pt_regs: the flavoured structs resolve against the
 * running kernel's pt_regs by CO-RE, and the branch for the other
 * architecture is removed at load time.
 */
static __always_inline long syscall_nr(struct pt_regs *regs)
{
	if (bpf_core_field_exists(struct pt_regs___x86, orig_ax))
		return BPF_CORE_READ((struct pt_regs___x86 *)regs, orig_ax);
	if (bpf_core_field_exists(struct pt_regs___arm64, syscallno))
		return BPF_CORE_READ((struct pt_regs___arm64 *)regs, syscallno);
	return -1;
}

#define VIGIL_REGS_SPAN 16

/* The first four syscall arguments, as saved at entry. */
static __always_inline void syscall_args(struct pt_regs *regs, __u64 a[4])
{
	if (bpf_core_field_exists(struct pt_regs___x86, r10)) {
		/* r10 ... dx, si, di lie within 16 words: one read of the
		 * span instead of one per register. A layout where they do
		 * not leaves the arguments zero (the path read then faults
		 * and the event says so). */
		__u32 lo = bpf_core_field_offset(struct pt_regs___x86, r10);
		__u32 hi = bpf_core_field_offset(struct pt_regs___x86, di) + 8;
		__u64 w[VIGIL_REGS_SPAN] = {};
		if (hi <= lo || hi - lo > sizeof(w) ||
		    bpf_core_field_offset(struct pt_regs___x86, dx) < lo ||
		    bpf_core_field_offset(struct pt_regs___x86, si) < lo ||
		    bpf_probe_read_kernel(w, hi - lo, (char *)regs + lo))
			return;
		a[0] = w[((bpf_core_field_offset(struct pt_regs___x86, di) - lo) / 8) & (VIGIL_REGS_SPAN - 1)];
		a[1] = w[((bpf_core_field_offset(struct pt_regs___x86, si) - lo) / 8) & (VIGIL_REGS_SPAN - 1)];
		a[2] = w[((bpf_core_field_offset(struct pt_regs___x86, dx) - lo) / 8) & (VIGIL_REGS_SPAN - 1)];
		a[3] = w[0];
	} else if (bpf_core_field_exists(struct pt_regs___arm64, orig_x0)) {
		/* regs[0] holds the return value by now. */
		struct user_pt_regs___arm64 *r = (void *)regs;
		a[0] = BPF_CORE_READ((struct pt_regs___arm64 *)regs, orig_x0);
		a[1] = BPF_CORE_READ(r, regs[1]);
		a[2] = BPF_CORE_READ(r, regs[2]);
		a[3] = BPF_CORE_READ(r, regs[3]);
	}
}

/*
 * A 32-bit (compat) syscall has numbers from another table; the syscall
 * tracepoints never report those, and neither does this capture.
 * x86_64: TS_COMPAT in thread_info.status (in_ia32_syscall, still set at
 * sys_exit); arm64: PSR_MODE32_BIT in pstate (compat_user_mode).
 */
#define VIGIL_X86_TS_COMPAT 0x0002
#define VIGIL_ARM64_PSR_MODE32 0x10

static __always_inline bool compat_syscall(struct pt_regs *regs)
{
	if (bpf_core_field_exists(struct thread_info___x86, status)) {
		struct task_struct___x86 *t = (void *)bpf_get_current_task();
		return BPF_CORE_READ(t, thread_info.status) & VIGIL_X86_TS_COMPAT;
	}
	if (bpf_core_field_exists(struct user_pt_regs___arm64, pstate))
		return BPF_CORE_READ((struct user_pt_regs___arm64 *)regs, pstate) & VIGIL_ARM64_PSR_MODE32;
	return false;
}

static __always_inline void open_event(__u32 sub, __u64 a[4], long ret)
{
	struct vigil_scratch *s = begin(VIGIL_KIND_OPEN);
	if (!s)
		return;
	s->body.open.dirfd = (__s32)a[0];
	s->body.open.syscall = sub;
	s->body.open.ret = ret;
	if (sub == VIGIL_SYS_OPENAT) {
		s->body.open.flags = a[2];
		s->body.open.mode = a[3];
	} else if (a[2]) {
		struct open_how how = {};
		if (bpf_probe_read_user(&how, sizeof(how), (const void *)a[2]) == 0) {
			s->body.open.flags = how.flags;
			s->body.open.mode = how.mode;
		} else {
			s->hdr.flags |= VIGIL_F_FAULT;
		}
	}
	s->hdr.len1 = str_user(s->str1, (const void *)a[1], &s->hdr.flags, VIGIL_F_TRUNC1);
	emit(s, VIGIL_KIND_OPEN);
}

static __always_inline void connect_event(__u64 a[4], long ret)
{
	struct vigil_scratch *s = begin(VIGIL_KIND_CONNECT);
	if (!s)
		return;
	__u64 ptr = a[1];
	s->body.connect.fd = (__s32)a[0];
	s->body.connect.ret = ret;
	s->body.connect.addrlen = (__u32)a[2];
	__u8 sa[VIGIL_SOCKADDR_MAX] = {};
	__u64 alen = (__u32)a[2];
	if (alen > sizeof(sa))
		alen = sizeof(sa);
	if (alen >= 2 && bpf_probe_read_user(sa, alen, (const void *)ptr) == 0) {
		__u16 family = sa[0] | (sa[1] << 8);
		s->body.connect.family = family;
		s->body.connect.port = ((__u16)sa[2] << 8) | sa[3]; /* network order */
		if (family == 2) { /* AF_INET: sin_addr at offset 4 */
			__builtin_memcpy(s->body.connect.addr, &sa[4], 4);
		} else if (family == 10) { /* AF_INET6: sin6_addr at offset 8 */
			__builtin_memcpy(s->body.connect.addr, &sa[8], 16);
		} else if (family == 1) { /* AF_UNIX: raw sun_path bytes */
			s->body.connect.port = 0;
			__u64 n = alen - 2;
			if (n > VIGIL_UNIX_PATH_MAX)
				n = VIGIL_UNIX_PATH_MAX;
			if (n > 0 && bpf_probe_read_user(s->str1, n & 0x7f, (const void *)(ptr + 2)) == 0)
				s->hdr.len1 = n & 0x7f;
		}
	} else if (alen >= 2) {
		s->hdr.flags |= VIGIL_F_FAULT;
	}
	emit(s, VIGIL_KIND_CONNECT);
}

SEC("raw_tracepoint/sys_exit")
int handle_sys_exit(unsigned long long *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];
	long nr = syscall_nr(regs);
	if (nr != nr_openat && nr != nr_openat2 && nr != nr_connect)
		return 0;
	if (!in_session() || compat_syscall(regs))
		return 0;
	long ret = (long)ctx[1];
	__u64 a[4] = {};
	syscall_args(regs, a);
	if (nr == nr_connect)
		connect_event(a, ret);
	else
		open_event(nr == nr_openat ? VIGIL_SYS_OPENAT : VIGIL_SYS_OPENAT2, a, ret);
	return 0;
}
