// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Kernel side of vigil's capture.
 *
 * Which tasks: a task belongs to the run because its ancestor did. The
 * first task is the one vigil clones straight into the session cgroup; from
 * then on every fork of a tracked task is tracked, wherever it lives, in
 * task-local storage that the kernel frees with the task. Cgroup migrations
 * of tracked tasks, and tasks that join the session cgroup from outside,
 * are events of their own.
 *
 * What they did: what the kernel resolved is taken from its own objects:
 * the file an open returned (from the descriptor table, walked from its
 * dentry and mount), the directory a relative name is relative to, a
 * connected socket's peer, the executable of an exec. Names passed by
 * pointer can only be read from the caller's memory, which another thread
 * can rewrite during the call; the decoder labels them as requested names,
 * never as the file. Every hook is a BTF tracepoint: no kprobes, fentry or
 * BPF LSM, which many hosts (this project's CI among them) lack or forbid.
 *
 * Nothing is lost silently: records are numbered only after a successful
 * ring-buffer reservation (so emitted records are 0..n-1), and every record
 * that could not be emitted is counted per kind and cause.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "capture.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Never used: they put the record types into the object's BTF, where
 * bpf2go finds them (-type) to generate the Go side's structs. */
const struct vigil_hdr *btf_hdr __attribute__((unused));
const union vigil_body *btf_body __attribute__((unused));
const enum vigil_kind *btf_kind __attribute__((unused));
const enum vigil_hook *btf_hook __attribute__((unused));
const enum vigil_flag *btf_flag __attribute__((unused));
const enum vigil_counter_class *btf_class __attribute__((unused));
const enum vigil_op *btf_op __attribute__((unused));
const enum vigil_stage *btf_stage __attribute__((unused));

/* Size is replaced by the loader (Config.RingSize). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 23);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_NCLASSES * VIGIL_NKINDS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Tasks of the run. The kernel frees an entry with its task; an entry
 * whose gen is not the session's is a previous session's task. */
struct vigil_task {
	__u32 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vigil_task);
} tracked SEC(".maps");

/*
 * Records under construction. Tracing programs run with migration but not
 * preemption disabled, so two tasks can be inside programs on one CPU at
 * once: each takes a slot of its CPU and holds it until it emits.
 */
#define VIGIL_SLOTS 4

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_SLOTS);
	__type(key, __u32);
	__type(value, struct vigil_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} slot_busy SEC(".maps");

/* What to record of each syscall number: the architecture's own call,
 * and the 32-bit (compat) call of that number, which is counted, not
 * decoded (filled by the loader). One lookup tells, for most syscalls,
 * that neither matters. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VIGIL_NR_MAX);
	__type(key, __u32);
	__type(value, struct vigil_sysentry);
} syscalls SEC(".maps");

/* Set by the loader when it loads the programs. */
volatile const __u64 wakeup_bytes = 0;
/* enum vigil_stage: only benchmarks set anything but VIGIL_STAGE_ALL. */
volatile const __u32 stop_stage = VIGIL_STAGE_ALL;

/* Set by the loader before each session, and by user space when the drain
 * starts (closed): tracked tasks still alive (outside the session cgroup)
 * are counted, not recorded, from then on. The first variable of .bss,
 * at offset 0 of that map, sharing its bytes with nothing
 * (TestSessionIsAloneInBSS). */
struct vigil_session session = {};

static __always_inline void count(__u32 class, __u32 kind)
{
	__u32 idx = class * VIGIL_NKINDS + kind;
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/*
 * Every program reads the session's generation once, when it starts, and
 * does everything of that run under it: a run that began before a
 * resident set passed to the next session (a holder killed while the
 * program was preempted) tracks, counts and emits for its own session,
 * never the next one's. What it would still change of the next session's
 * is refused where it lands: counted only when the generation is still
 * the session's (count_in), and a record that gets past emit's check is
 * refused by the reader.
 */
static __always_inline bool is_tracked(struct task_struct *t, __u32 gen)
{
	struct vigil_task *v = bpf_task_storage_get(&tracked, t, 0, 0);
	return v && v->gen == gen;
}

static __always_inline bool current_tracked(__u32 gen)
{
	return is_tracked(bpf_get_current_task_btf(), gen);
}

static __always_inline void count_in(__u32 gen, __u32 class, __u32 kind)
{
	if (gen == session.gen)
		count(class, kind);
}

/* As count_in, but ordered before whatever this CPU stores next: an add
 * whose result is used is a fetching atomic, a full barrier on every
 * architecture (LDADDAL on arm64; a plain add there is STADD, unordered). */
static __always_inline void count_in_ordered(__u32 gen, __u32 class, __u32 kind)
{
	if (gen != session.gen)
		return;
	__u32 idx = class * VIGIL_NKINDS + kind;
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v && __sync_fetch_and_add(v, 1) == ~0ULL)
		__sync_fetch_and_add(v, 1); /* never: 2^64 counts */
}

/* Marks t as a task of the run; false if the kernel could not store it. */
static __always_inline bool track(struct task_struct *t, __u32 gen)
{
	struct vigil_task *v = bpf_task_storage_get(&tracked, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!v)
		return false;
	if (v->gen != gen) {
		v->gen = gen;
		if (gen == session.gen)
			__sync_fetch_and_add(&session.live_tasks, 1);
	}
	return true;
}

#define VIGIL_CGROUP_WALK 16

/* Whether cg is the session cgroup or below it. */
static __always_inline bool cgroup_in_session(struct cgroup *cg)
{
	for (int i = 0; i < VIGIL_CGROUP_WALK && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == session.cgroup_id)
			return true;
		struct cgroup_subsys_state *css = BPF_CORE_READ(cg, self.parent);
		if (!css)
			return false;
		cg = (struct cgroup *)((char *)css - bpf_core_field_offset(struct cgroup, self));
	}
	return false;
}

struct slot {
	struct vigil_scratch *s;
	__u32 *busy;
	__u32 bit;
	__u32 idx; /* slot index in scratch */
	__u32 off; /* bytes of data used */
	__u32 nstr;
};

#define PF_IO_WORKER 0x00000010

/* Takes a free scratch slot of this CPU and fills the header. */
static __always_inline bool begin(struct slot *sl, __u32 kind, __u32 hook, __u32 gen)
{
	__u32 zero = 0;
	sl->busy = bpf_map_lookup_elem(&slot_busy, &zero);
	if (!sl->busy)
		return false;
	sl->s = 0;
	for (__u32 i = 0; i < VIGIL_SLOTS; i++) {
		__u32 bit = 1u << i;
		if (__sync_fetch_and_or(sl->busy, bit) & bit)
			continue;
		sl->s = bpf_map_lookup_elem(&scratch, &i);
		if (!sl->s) {
			__sync_fetch_and_and(sl->busy, ~bit);
			return false;
		}
		sl->bit = bit;
		sl->idx = i;
		break;
	}
	if (!sl->s) {
		count_in(gen, VIGIL_C_BUSY, kind);
		return false;
	}
	struct vigil_scratch *s = sl->s;
	__u64 id = bpf_get_current_pid_tgid();
	s->hdr.ts_ns = bpf_ktime_get_ns();
	s->hdr.cgroup_id = bpf_get_current_cgroup_id();
	s->hdr.pid = id >> 32;
	s->hdr.tid = (__u32)id;
	s->hdr.kind = kind;
	s->hdr.hook = hook;
	s->hdr.gen = gen;
	s->hdr.flags = 0;
	s->hdr.len[0] = 0;
	s->hdr.len[1] = 0;
	s->hdr.len[2] = 0;
	s->hdr.len[3] = 0;
	__builtin_memset(&s->body, 0, sizeof(s->body));
	bpf_get_current_comm(&s->hdr.comm, sizeof(s->hdr.comm));
	struct task_struct *cur = bpf_get_current_task_btf();
	if (cur->flags & PF_IO_WORKER)
		s->hdr.flags |= VIGIL_F_IO_WORKER;
	sl->off = 0;
	sl->nstr = 0;
	return true;
}

static __always_inline void release(struct slot *sl)
{
	__sync_fetch_and_and(sl->busy, ~sl->bit);
}

/* Ends the current string: its length is what was appended since the
 * previous end. */
static __always_inline void end_str(struct slot *sl, __u32 start)
{
	__u32 i = sl->nstr;
	if (i < VIGIL_NSTR)
		sl->s->hdr.len[i] = sl->off - start;
	sl->nstr = i + 1;
}

/* Skips string i (absent). */
static __always_inline void no_str(struct slot *sl)
{
	end_str(sl, sl->off);
}

static __always_inline void str_flag(struct slot *sl, __u32 bits)
{
	__u32 i = sl->nstr;
	if (i < VIGIL_NSTR)
		sl->s->hdr.flags |= bits << (4 * i);
}

/* Reserves exactly the bytes this record needs, numbers it, submits it. */
static __always_inline void emit(struct slot *sl, __u32 kind)
{
	struct vigil_scratch *s = sl->s;
	struct bpf_dynptr dp;
	__u32 n = sl->off;
	if (n > VIGIL_DATA_MAX)
		n = VIGIL_DATA_MAX;

	if (s->hdr.gen != (__u16)session.gen) {
		/* Begun for a session that has ended (a resident set taken by
		 * another capture meanwhile): neither emitted nor counted in the
		 * new one. The reader refuses a record that passed this check
		 * as the session changed. */
		release(sl);
		return;
	}
	if (session.closed) {
		count(VIGIL_C_LATE, kind);
		release(sl);
		return;
	}
	if (bpf_ringbuf_reserve_dynptr(&events, VIGIL_FIXED_SIZE + n, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, 0);
		count(VIGIL_C_DROP, kind);
		release(sl);
		return;
	}
	if (stop_stage == VIGIL_STAGE_RESERVE && s->hdr.hook == VIGIL_HOOK_SYS_EXIT) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		release(sl);
		return;
	}
	s->hdr.seq = __sync_fetch_and_add(&session.next_seq, 1);
	bpf_dynptr_write(&dp, 0, s, VIGIL_FIXED_SIZE + n, 0);
	__u64 wake = 0;
	if (wakeup_bytes)
		wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit_dynptr(&dp, wake);
	count(VIGIL_C_EMIT, kind);
	release(sl);
}

/* Appends a NUL-terminated string (without its NUL), from kernel or from
 * the caller's memory, as the next string of the record. */
static __always_inline void add_str(struct slot *sl, const void *src, bool user)
{
	__u32 start = sl->off;
	if (src) {
		/* One byte more than a whole PATH_MAX string needs, so that a
		 * string that fits is told from one that was cut. */
		__u32 room = VIGIL_DATA_MAX - start;
		if (room > VIGIL_STR_MAX + 1)
			room = VIGIL_STR_MAX + 1;
		char *dst = sl->s->data + (start & VIGIL_DATA_MASK);
		__u32 size = room & (VIGIL_STR_MAX * 2 - 1);
		long n = user ? bpf_probe_read_user_str(dst, size, src) : bpf_probe_read_kernel_str(dst, size, src);
		if (n < 0) {
			sl->s->hdr.flags |= VIGIL_F_FAULT;
		} else if (n > 0) {
			if ((__u32)n >= room)
				str_flag(sl, VIGIL_F_STR_TRUNC);
			str_flag(sl, VIGIL_F_STR_SET);
			sl->off = start + (__u32)n - 1;
		}
	}
	end_str(sl, start);
}

static __always_inline void add_kstr(struct slot *sl, const void *src)
{
	add_str(sl, src, false);
}

static __always_inline void add_ustr(struct slot *sl, __u64 src)
{
	add_str(sl, (const void *)src, true);
}

/* Appends raw bytes from the caller's memory as the next string. */
static __always_inline void add_ubytes(struct slot *sl, __u64 src, __u32 len)
{
	__u32 start = sl->off;
	if (len > VIGIL_UNIX_PATH_MAX)
		len = VIGIL_UNIX_PATH_MAX;
	if (len > 0 && start + len <= VIGIL_DATA_MAX) {
		if (bpf_probe_read_user(sl->s->data + (start & VIGIL_DATA_MASK), len & 0x7f, (const void *)src)) {
			sl->s->hdr.flags |= VIGIL_F_FAULT;
		} else {
			sl->off = start + len;
			str_flag(sl, VIGIL_F_STR_SET);
		}
	}
	end_str(sl, start);
}

/* State of one path walk, shared with its bpf_loop callback. */
struct walk {
	struct vfsmount *vfsmnt;
	struct mount *m;
	struct dentry *d;
	__u32 slot;
	__u32 off;
	__u32 limit;
	__u32 flags; /* VIGIL_F_STR_* bits for this string, unshifted */
	__u8 done;
	__u8 fault;
};

static __always_inline int walk_name(struct walk *w, struct dentry *d)
{
	struct vigil_scratch *s = bpf_map_lookup_elem(&scratch, &w->slot);
	if (!s)
		return -1;
	if (w->off + VIGIL_NAME_MAX > w->limit)
		return -1;
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	long n = bpf_probe_read_kernel_str(s->data + (w->off & VIGIL_DATA_MASK), VIGIL_NAME_MAX, name);
	if (n <= 0) {
		w->fault = 1;
		return -1;
	}
	w->off += n;
	return 0;
}

/* One step up: emit the dentry's name, or cross to the parent mount. */
static long walk_step(__u64 i, void *ctx)
{
	struct walk *w = ctx;
	/* Locals, not w->...: BPF_CORE_READ would relocate the whole access
	 * chain, and struct walk is not a kernel type. */
	struct dentry *d = w->d;
	struct vfsmount *vfsmnt = w->vfsmnt;
	struct mount *m = w->m;
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	struct dentry *root = BPF_CORE_READ(vfsmnt, mnt_root);
	if (d == root || d == parent) {
		struct mount *mp = BPF_CORE_READ(m, mnt_parent);
		if (d != root || m == mp || !mp) {
			/* The root of a namespace, or of a mount with no place
			 * in any namespace: an internal mount (memfd, pipefs,
			 * sockfs) or a detached one. The latter is named by its
			 * root dentry ("memfd:x"), as d_path names it. */
			struct mnt_namespace *ns = BPF_CORE_READ(m, mnt_ns);
			if (!(d == root && ns && (long)ns != -22 /* MNT_NS_INTERNAL */)) {
				w->flags |= VIGIL_F_STR_DETACHED;
				walk_name(w, d);
			}
			w->done = 1;
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = mp;
		w->vfsmnt = (struct vfsmount *)((char *)mp + bpf_core_field_offset(struct mount, mnt));
		return 0;
	}
	if (walk_name(w, d))
		return 1;
	w->d = parent;
	return 0;
}

/*
 * Writes the absolute path of (mnt, dentry) at offset start of the data of
 * record slot slot (this CPU's, held by the caller), in the form user
 * space expects: the components leaf first, each followed by a NUL
 * ("b\0a\0" for /a/b; "" for /). Component names hold neither NUL nor
 * '/', so the form is lossless, and walking up needs no reversal here.
 * The walk crosses mount points up to the root of the mount namespace, as
 * d_path does, though without rename_lock: a rename racing the walk can
 * give a mix of old and new names.
 *
 * A global function, so the verifier checks it once rather than at every
 * place a path is recorded. Returns the end offset in the low 16 bits and
 * VIGIL_F_STR_* bits (plus WALK_FAULT) above.
 */
#define WALK_FAULT (1u << 15)

__attribute__((noinline)) int walk_path(__u32 slot, __u32 start, __u64 vfsmnt_, __u64 dentry_)
{
	struct vfsmount *vfsmnt = (struct vfsmount *)vfsmnt_;
	struct dentry *d = (struct dentry *)dentry_;
	if (start > VIGIL_DATA_MAX)
		return (int)(start | (WALK_FAULT << 16));
	if (!vfsmnt || !d)
		return (int)(start | (WALK_FAULT << 16));
	struct walk w = {
		.vfsmnt = vfsmnt,
		.m = (struct mount *)((char *)vfsmnt - bpf_core_field_offset(struct mount, mnt)),
		.d = d,
		.slot = slot,
		.off = start,
		.limit = start + VIGIL_STR_MAX,
	};
	if (w.limit > VIGIL_DATA_MAX)
		w.limit = VIGIL_DATA_MAX;
	if (d != BPF_CORE_READ(d, d_parent) && !BPF_CORE_READ(d, d_hash.pprev))
		w.flags |= VIGIL_F_STR_DELETED;
	bpf_loop(VIGIL_PATH_DEPTH, walk_step, &w, 0);
	__u32 flags = w.flags;
	if (!w.done)
		flags |= VIGIL_F_STR_TRUNC;
	if (w.fault)
		flags |= WALK_FAULT;
	/* The flags are the string's unshifted bits (1 << 8 .. 1 << 11). */
	return (int)((w.off & 0xffff) | ((flags >> 8) << 16) | (w.fault ? (WALK_FAULT << 16) : 0));
}

static __always_inline void add_path(struct slot *sl, struct vfsmount *vfsmnt, struct dentry *d)
{
	__u32 start = sl->off;
	int r = walk_path(sl->idx, start, (__u64)vfsmnt, (__u64)d);
	__u32 hi = ((__u32)r) >> 16;
	if (hi & WALK_FAULT)
		sl->s->hdr.flags |= VIGIL_F_FAULT;
	str_flag(sl, ((hi & 0xf) << 8) | VIGIL_F_STR_SET);
	__u32 end = ((__u32)r) & 0xffff;
	if (end >= start && end <= VIGIL_DATA_MAX)
		sl->off = end;
	end_str(sl, start);
}

static __always_inline void add_file_path(struct slot *sl, struct file *f)
{
	if (!f) {
		no_str(sl);
		return;
	}
	add_path(sl, BPF_CORE_READ(f, f_path.mnt), BPF_CORE_READ(f, f_path.dentry));
}

/* The file behind descriptor fd of the current task: the kernel's own
 * object, whatever the caller's memory says. */
static __always_inline struct file *fd_file(long fd)
{
	if (fd < 0)
		return 0;
	/* Plain loads from the current task's BTF pointer; only the slot
	 * at a variable index needs a probe read. */
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = t->files->fdt;
	unsigned int max = fdt->max_fds;
	if ((unsigned long)fd >= max)
		return 0;
	struct file **fds = fdt->fd;
	struct file *f = 0;
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

/* The current task's working directory. */
static __always_inline void add_cwd(struct slot *sl)
{
	struct task_struct *t = bpf_get_current_task_btf();
	/* Read as values: walk_path, a global function, takes no kernel
	 * pointers. */
	add_path(sl, BPF_CORE_READ(t, fs, pwd.mnt), BPF_CORE_READ(t, fs, pwd.dentry));
}

/* ---- processes ---- */

/* Every new task passes here (clone, fork, vfork, and the io_uring
 * workers, which sched_process_fork does not report). A task is the run's
 * when its creator is, or when it is created straight into the session
 * cgroup (clone3 CLONE_INTO_CGROUP: how vigil starts the run). */
SEC("tp_btf/task_newtask")
int BPF_PROG(handle_newtask, struct task_struct *task, unsigned long clone_flags)
{
	__u32 gen = session.gen;
	struct task_struct *cur = bpf_get_current_task_btf();
	bool inside = is_tracked(cur, gen);
	if (!inside && !cgroup_in_session(BPF_CORE_READ(task, cgroups, dfl_cgrp)))
		return 0;
	if (!track(task, gen)) {
		count_in(gen, VIGIL_C_UNTRACKED, VIGIL_KIND_FORK);
		return 0;
	}
	/* io_uring workers get no sched_process_fork: report them here. */
	if (!(task->flags & PF_IO_WORKER))
		return 0;
	struct slot sl;
	if (!begin(&sl, VIGIL_KIND_FORK, VIGIL_HOOK_TASK_NEWTASK, gen))
		return 0;
	struct vigil_scratch *s = sl.s;
	s->body.fork.parent_pid = cur->tgid;
	s->body.fork.parent_tid = cur->pid;
	s->body.fork.child_pid = task->tgid;
	s->body.fork.child_tid = task->pid;
	s->body.fork.thread = task->tgid == cur->tgid;
	s->body.fork.io_worker = 1;
	emit(&sl, VIGIL_KIND_FORK);
	return 0;
}

/* The fork record of a task task_newtask tracked. A parent outside the
 * run (vigil) that cloned the first task into the session is flagged, and
 * the record carries the child's cgroup. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 gen = session.gen;
	if (!is_tracked(child, gen))
		return 0;
	bool inside = is_tracked(parent, gen);
	struct slot sl;
	if (!begin(&sl, VIGIL_KIND_FORK, VIGIL_HOOK_SCHED_PROCESS_FORK, gen))
		return 0;
	struct vigil_scratch *s = sl.s;
	if (!inside) {
		s->hdr.flags |= VIGIL_F_ENTERED;
		s->hdr.cgroup_id = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);
	}
	s->body.fork.parent_pid = parent->tgid;
	s->body.fork.parent_tid = parent->pid;
	s->body.fork.child_pid = child->tgid;
	s->body.fork.child_tid = child->pid;
	s->body.fork.thread = child->tgid == parent->tgid;
	emit(&sl, VIGIL_KIND_FORK);
	return 0;
}
SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 gen = session.gen;
	if (!is_tracked(p, gen))
		return 0;
	struct slot sl;
	if (!begin(&sl, VIGIL_KIND_EXEC, VIGIL_HOOK_SCHED_PROCESS_EXEC, gen))
		return 0;
	struct vigil_scratch *s = sl.s;
	struct file *f = BPF_CORE_READ(bprm, file);
	s->body.exec.old_tid = old_pid;
	s->body.exec.argc = BPF_CORE_READ(bprm, argc);
	s->body.exec.ino = BPF_CORE_READ(f, f_inode, i_ino);
	s->body.exec.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	add_file_path(&sl, f);
	add_kstr(&sl, BPF_CORE_READ(bprm, filename));

	/* The argument area of the new image, copied there by the kernel; the
	 * task has not run any of its own code yet, so this is what exec
	 * received. */
	unsigned long a0 = BPF_CORE_READ(p, mm, arg_start);
	unsigned long a1 = BPF_CORE_READ(p, mm, arg_end);
	__u32 start = sl.off;
	if (a1 > a0) {
		__u64 total = a1 - a0;
		__u64 n = total;
		s->body.exec.argv_bytes = total;
		if (n > VIGIL_ARGV_MAX)
			n = VIGIL_ARGV_MAX;
		if (start + n > VIGIL_DATA_MAX)
			n = VIGIL_DATA_MAX - start;
		if (n < total)
			str_flag(&sl, VIGIL_F_STR_TRUNC);
		if (n > 0 && n <= VIGIL_ARGV_MAX) {
			if (bpf_probe_read_user(s->data + (start & VIGIL_DATA_MASK), n, (const void *)a0))
				s->hdr.flags |= VIGIL_F_FAULT;
			else
				sl.off = start + n;
		}
	}
	end_str(&sl, start);
	emit(&sl, VIGIL_KIND_EXEC);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 gen = session.gen;
	if (!is_tracked(p, gen))
		return 0;
	struct slot sl;
	if (begin(&sl, VIGIL_KIND_EXIT, VIGIL_HOOK_SCHED_PROCESS_EXIT, gen)) {
		sl.s->body.exit.exit_code = BPF_CORE_READ(p, exit_code);
		sl.s->body.exit.group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
		emit(&sl, VIGIL_KIND_EXIT);
	}
	/* After the record: once live_tasks is 0 every exit is in the ring. */
	if (gen == session.gen)
		__sync_fetch_and_add(&session.live_tasks, -1);
	return 0;
}

/* A tracked task changing cgroup, or any task joining the session. The
 * header names the migrated task; the mover is the task writing to
 * cgroup.procs. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(handle_migrate, struct cgroup *dst, const char *path, struct task_struct *task, bool threadgroup)
{
	__u32 gen = session.gen;
	bool was = is_tracked(task, gen);
	bool dfl = BPF_CORE_READ(dst, root) == BPF_CORE_READ(task, cgroups, dfl_cgrp, root);
	bool into = dfl && cgroup_in_session(dst);
	if (!was && !into)
		return 0;
	if (!was && !track(task, gen))
		count_in(gen, VIGIL_C_UNTRACKED, VIGIL_KIND_CGROUP_MIGRATE);
	struct slot sl;
	if (!begin(&sl, VIGIL_KIND_CGROUP_MIGRATE, VIGIL_HOOK_CGROUP_ATTACH_TASK, gen))
		return 0;
	struct vigil_scratch *s = sl.s;
	__u64 id = bpf_get_current_pid_tgid();
	s->body.migrate.mover_pid = id >> 32;
	s->body.migrate.mover_tid = (__u32)id;
	s->hdr.pid = task->tgid;
	s->hdr.tid = task->pid;
	s->hdr.cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	bpf_probe_read_kernel_str(s->hdr.comm, sizeof(s->hdr.comm), task->comm);
	s->body.migrate.dst_cgroup_id = BPF_CORE_READ(dst, kn, id);
	s->body.migrate.was_tracked = was;
	s->body.migrate.default_hierarchy = dfl;
	s->body.migrate.into_session = into;
	s->body.migrate.threadgroup = threadgroup;
	if (!was)
		s->hdr.flags |= VIGIL_F_ENTERED;
	add_kstr(&sl, path);
	emit(&sl, VIGIL_KIND_CGROUP_MIGRATE);
	return 0;
}

/* ---- syscalls ---- */

/* The i-th syscall argument as saved at kernel entry (registers, not the
 * caller's memory). */
static __always_inline __u64 sys_arg(struct pt_regs *regs, int i)
{
	/* Plain loads through the tracepoint's BTF pointer: the verifier
	 * checks them, and each costs a load, not a helper call. */
#if defined(__TARGET_ARCH_x86)
	switch (i) {
	case 0: return regs->di;
	case 1: return regs->si;
	case 2: return regs->dx;
	case 3: return regs->r10;
	case 4: return regs->r8;
	case 5: return regs->r9;
	}
#else
	if (i == 0)
		return regs->orig_x0;
	if (i > 0 && i < 6)
		return regs->user_regs.regs[i];
#endif
	return 0;
}

/*
 * A 32-bit (compat) syscall has numbers from another table. x86_64:
 * TS_COMPAT in thread_info.status (in_ia32_syscall, also for int 0x80
 * from a 64-bit task); arm64: PSR_MODE32_BIT in pstate. Read with plain
 * loads through the BTF pointers: this runs for every syscall.
 */
static __always_inline bool compat_syscall(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct___x86 *t = (void *)bpf_get_current_task_btf();
	return t->thread_info.status & 0x0002;
#else
	return regs->user_regs.pstate & 0x10;
#endif
}

#define VIGIL_AT_FDCWD -100

/* Name argument n and the directory it is relative to: s(dir) then
 * s(name). The directory is resolved only for a relative name. */
static __always_inline void add_name(struct slot *sl, __u64 *args, int n, int dir)
{
	if (n < 0 || n > 5) {
		no_str(sl);
		no_str(sl);
		return;
	}
	__u64 uptr = args[n & 7];
	char first = 0;
	bpf_probe_read_user(&first, 1, (const void *)uptr);
	if (dir == VIGIL_DIR_NONE) {
		no_str(sl); /* text, not a name to resolve (a symlink's target) */
	} else if (uptr && first != '/') {
		long dfd = VIGIL_AT_FDCWD;
		if (dir >= 0 && dir <= 5)
			dfd = (int)args[dir & 7];
		if (dfd == VIGIL_AT_FDCWD)
			add_cwd(sl);
		else
			add_file_path(sl, fd_file(dfd));
	} else {
		no_str(sl);
	}
	add_ustr(sl, uptr);
}

static __always_inline void fill_file(struct slot *sl, struct file *f)
{
	sl->s->body.sys.ino = BPF_CORE_READ(f, f_inode, i_ino);
	sl->s->body.sys.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	sl->s->body.sys.f_mode = BPF_CORE_READ(f, f_mode);
}

#define VIGIL_AF_UNIX 1
#define VIGIL_AF_INET 2
#define VIGIL_AF_INET6 10

/* A sockaddr in the caller's memory. */
static __always_inline void user_sockaddr(struct slot *sl, __u64 sa, __u32 addrlen)
{
	struct vigil_net *n = &sl->s->body.net;
	__u16 family = 0;
	n->addrlen = addrlen;
	if (!sa || addrlen < 2) {
		no_str(sl);
		return;
	}
	if (bpf_probe_read_user(&family, 2, (const void *)sa)) {
		sl->s->hdr.flags |= VIGIL_F_FAULT;
		no_str(sl);
		return;
	}
	n->family = family;
	if (family == VIGIL_AF_INET || family == VIGIL_AF_INET6) {
		__u16 port = 0;
		long err = bpf_probe_read_user(&port, 2, (const void *)(sa + 2));
		n->port = (port >> 8) | (port << 8);
		if (family == VIGIL_AF_INET)
			err |= bpf_probe_read_user(n->addr, 4, (const void *)(sa + 4));
		else
			err |= bpf_probe_read_user(n->addr, 16, (const void *)(sa + 8));
		if (err)
			sl->s->hdr.flags |= VIGIL_F_FAULT; /* the address ends past the caller's memory */
		no_str(sl);
	} else if (family == VIGIL_AF_UNIX) {
		add_ubytes(sl, sa + 2, addrlen - 2);
	} else {
		no_str(sl);
	}
}

/* The socket's own address: the peer, or the local end. */
static __always_inline bool socket_addr(struct slot *sl, struct file *f, bool peer)
{
	struct vigil_net *n = &sl->s->body.net;
	struct socket *sock = BPF_CORE_READ(f, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return false;
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != VIGIL_AF_INET && family != VIGIL_AF_INET6)
		return false;
	n->family = family;
	if (peer) {
		__u16 p = BPF_CORE_READ(sk, __sk_common.skc_dport);
		n->port = (p >> 8) | (p << 8);
		if (family == VIGIL_AF_INET) {
			__u32 a = BPF_CORE_READ(sk, __sk_common.skc_daddr);
			__builtin_memcpy(n->addr, &a, 4);
		} else {
			bpf_probe_read_kernel(n->addr, 16, __builtin_preserve_access_index(&sk->__sk_common.skc_v6_daddr));
		}
	} else {
		n->port = BPF_CORE_READ(sk, __sk_common.skc_num);
		if (family == VIGIL_AF_INET) {
			__u32 a = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
			__builtin_memcpy(n->addr, &a, 4);
		} else {
			bpf_probe_read_kernel(n->addr, 16, __builtin_preserve_access_index(&sk->__sk_common.skc_v6_rcv_saddr));
		}
	}
	sl->s->hdr.flags |= VIGIL_F_PEER_FROM_SOCKET;
	no_str(sl);
	return true;
}

static __always_inline void sock_type(struct slot *sl, struct file *f)
{
	struct socket *sock = BPF_CORE_READ(f, private_data);
	sl->s->body.net.sock_type = BPF_CORE_READ(sock, type);
}

#define VIGIL_EINPROGRESS 115
#define VIGIL_AT_REMOVEDIR 0x200

static __noinline void sys_open(struct slot *sl, struct vigil_sysdesc *d, __u64 *args, long ret)
{
	if (d->addr >= 0) {
		/* openat2: flags and mode are in struct open_how, in the
		 * caller's memory; they go where openat2 has no argument. */
		__u64 how[2] = {};
		if (bpf_probe_read_user(how, sizeof(how), (const void *)args[d->addr & 7]))
			sl->s->hdr.flags |= VIGIL_F_FAULT;
		sl->s->body.sys.args[4] = how[0];
		sl->s->body.sys.args[5] = how[1];
	}
	if (ret >= 0) {
		struct file *f = fd_file(ret);
		fill_file(sl, f);
		add_file_path(sl, f);
		add_ustr(sl, args[d->name_a & 7]);
	} else {
		sl->s->body.sys.s0_is_dir = 1;
		add_name(sl, args, d->name_a, d->dir_a);
	}
}

static __noinline void sys_file(struct slot *sl, struct vigil_sysdesc *d, __u64 *args)
{
	if (d->fd >= 0 && d->fd <= 5) {
		/* fchmod, fchown, ftruncate: the object is the descriptor's. */
		struct file *f = fd_file((int)args[d->fd & 7]);
		fill_file(sl, f);
		add_file_path(sl, f);
		no_str(sl);
	} else {
		sl->s->body.sys.s0_is_dir = 1;
		add_name(sl, args, d->name_a, d->dir_a);
	}
	add_name(sl, args, d->name_b, d->dir_b);
}

static __noinline void sys_net(struct slot *sl, struct vigil_sysdesc *d, __u64 *args, long ret)
{
	struct file *f = fd_file((int)args[d->fd & 7]);
	sock_type(sl, f);
	__u32 op = d->op;
	if (op == VIGIL_OP_CONNECT && (ret == 0 || ret == -VIGIL_EINPROGRESS) && socket_addr(sl, f, true))
		return;
	if ((op == VIGIL_OP_BIND && ret == 0) || op == VIGIL_OP_LISTEN) {
		if (socket_addr(sl, f, false))
			return;
	}
	if (op == VIGIL_OP_SENDMSG) {
		/* struct user_msghdr: msg_name, then msg_namelen. */
		struct {
			__u64 name;
			__u32 namelen;
		} mh = {};
		if (bpf_probe_read_user(&mh, sizeof(mh), (const void *)args[1])) {
			sl->s->hdr.flags |= VIGIL_F_FAULT;
			no_str(sl);
			return;
		}
		user_sockaddr(sl, mh.name, mh.namelen);
		return;
	}
	if (op == VIGIL_OP_LISTEN) {
		no_str(sl);
		return;
	}
	int a = d->addr;
	user_sockaddr(sl, args[a & 7], (__u32)args[(a + 1) & 7]);
}

/*
 * One program at syscall exit for every syscall of every task on the host
 * while a capture is attached: it looks the number up before anything
 * else. Results, descriptors and resolved paths are taken here from the
 * kernel's own objects; names passed by pointer can only be read from the
 * caller's memory, and events say which is which.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	/* Every syscall of every task on the host passes here: the number
	 * is read with a plain load, and one inlined array lookup tells
	 * whether the call is of interest. */
#if defined(__TARGET_ARCH_x86)
	long nr = regs->orig_ax;
#else
	long nr = regs->syscallno;
#endif
	if (nr < 0)
		return 0;
	/* x32 numbers are x86_64's with bit 30 set. */
	bool x32 = nr & 0x40000000;
	__u32 key = nr & 0x3fffffff;
	if (key >= VIGIL_NR_MAX)
		return 0;
	struct vigil_sysentry *ent = bpf_map_lookup_elem(&syscalls, &key);
	if (!ent || (ent->native.op == VIGIL_OP_NONE && ent->compat.op == VIGIL_OP_NONE))
		return 0;
	/* 32-bit and x32 calls are counted under the kind they would be, not
	 * decoded. */
	__u32 gen = session.gen;
	if (x32 || compat_syscall(regs)) {
		struct vigil_sysdesc *c = x32 ? &ent->native : &ent->compat;
		if (c->op != VIGIL_OP_NONE && c->kind < VIGIL_NKINDS && current_tracked(gen))
			count_in(gen, VIGIL_C_COMPAT, c->kind);
		return 0;
	}
	struct vigil_sysdesc *d = &ent->native;
	if (d->op == VIGIL_OP_NONE)
		return 0;
	if (d->op == VIGIL_OP_EXEC && ret >= 0)
		return 0; /* a successful exec is sched_process_exec's */
	if (!current_tracked(gen))
		return 0;
	if (stop_stage == VIGIL_STAGE_TRACKED)
		return 0;
	__u32 kind = d->kind;
	if (kind >= VIGIL_NKINDS)
		return 0;

	__u64 args[8] = {};
	for (int i = 0; i < 6; i++)
		args[i] = sys_arg(regs, i);
	/* A send on a connected socket names no destination: not an event
	 * (connect recorded the peer). */
	if (d->op == VIGIL_OP_SENDTO && !args[4])
		return 0;
	if (d->op == VIGIL_OP_SENDMSG) {
		__u64 name = 0;
		if (!bpf_probe_read_user(&name, sizeof(name), (const void *)args[1]) && !name)
			return 0;
	}
	if (d->op == VIGIL_OP_FILE && kind == VIGIL_KIND_UNLINK && d->name_a == 1 && (args[2] & VIGIL_AT_REMOVEDIR))
		kind = VIGIL_KIND_RMDIR; /* unlinkat(AT_REMOVEDIR) */

	struct slot sl;
	if (!begin(&sl, kind, VIGIL_HOOK_SYS_EXIT, gen))
		return 0;
	if (stop_stage == VIGIL_STAGE_BEGIN) {
		release(&sl);
		return 0;
	}
	struct vigil_sys *sys = &sl.s->body.sys;
	sys->ret = ret;
	sys->nr = nr;
	sys->op = d->op;
	for (int i = 0; i < 6; i++)
		sys->args[i] = args[i];
	switch (d->op) {
	case VIGIL_OP_OPEN:
		sys_open(&sl, d, args, ret);
		break;
	case VIGIL_OP_EXEC:
		sys->s0_is_dir = 1;
		add_name(&sl, args, d->name_a, d->dir_a);
		break;
	case VIGIL_OP_FILE:
		sys_file(&sl, d, args);
		break;
	default:
		sys_net(&sl, d, args, ret);
	}
	if (stop_stage == VIGIL_STAGE_BODY) {
		release(&sl);
		return 0;
	}
	emit(&sl, kind);
	return 0;
}

/* ---- io_uring ---- */

#define VIGIL_IORING_OP_OPENAT 18
#define VIGIL_IORING_OP_OPENAT2 28

/* io_uring completions io_uring_complete never sees, counted (health
 * io_uring_untraced) so that a record does not call itself complete
 * without them: a request submitted with IOSQE_CQE_SKIP_SUCCESS posts no
 * completion when it succeeds (counted at submission, whatever its
 * outcome); any other request of the run is followed from submission
 * (ring_inflight), so one whose completion is queued past a full CQ ring,
 * posted by a task not the run's, or never posted while the capture runs
 * is counted too. */
#define VIGIL_REQ_F_CQE_SKIP (1U << 6) /* REQ_F_CQE_SKIP_BIT = IOSQE_CQE_SKIP_SUCCESS_BIT */

#define VIGIL_IORING_SETUP_DEFER_TASKRUN (1U << 13)

#define VIGIL_IORING_OP_RENAMEAT 35
#define VIGIL_IORING_OP_UNLINKAT 36
#define VIGIL_IORING_OP_MKDIRAT 37
#define VIGIL_IORING_OP_SYMLINKAT 38
#define VIGIL_IORING_OP_LINKAT 39

/* The names of a file-tree request, copied at submission from the
 * kernel's own copy (struct filename, taken when the request was
 * prepared: what the operation will use, whatever the caller's memory
 * holds meanwhile) and taken by its completion, by which time the kernel
 * has freed them. An entry evicted before its completion (more requests
 * in flight than the map holds), or never taken (a completion the hook
 * does not see), leaves that completion without names: it is then
 * counted as unrecorded, as before names were kept. */
struct vigil_ring_names {
	__u32 gen;
	__u32 set; /* bit i: name i was read */
	char name[2][VIGIL_STR_MAX];
};

#define VIGIL_RING_NAMES 128

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_RING_NAMES);
	__type(key, __u64);
	__type(value, struct vigil_ring_names);
} ring_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_ring_names);
} ring_names_scratch SEC(".maps");

static __always_inline bool ring_fileop(__u8 op)
{
	return op >= VIGIL_IORING_OP_RENAMEAT && op <= VIGIL_IORING_OP_LINKAT;
}

static __noinline void ring_names_save(struct io_kiocb *req, __u32 op, __u32 gen)
{
	__u32 zero = 0;
	__u64 key = (__u64)req;
	/* Whatever an earlier request at this address left (one whose
	 * completion was never seen) is not this one's. */
	bpf_map_delete_elem(&ring_names, &key);
	struct vigil_ring_names *v = bpf_map_lookup_elem(&ring_names_scratch, &zero);
	if (!v)
		return;
	struct filename *a = 0, *b = 0;
	if (op == VIGIL_IORING_OP_UNLINKAT && bpf_core_type_exists(struct io_unlink)) {
		struct io_unlink *x = (void *)req;
		a = BPF_CORE_READ(x, filename);
	} else if (op == VIGIL_IORING_OP_MKDIRAT && bpf_core_type_exists(struct io_mkdir)) {
		struct io_mkdir *x = (void *)req;
		a = BPF_CORE_READ(x, filename);
	} else if (op == VIGIL_IORING_OP_RENAMEAT && bpf_core_type_exists(struct io_rename)) {
		struct io_rename *x = (void *)req;
		a = BPF_CORE_READ(x, oldpath);
		b = BPF_CORE_READ(x, newpath);
	} else if ((op == VIGIL_IORING_OP_LINKAT || op == VIGIL_IORING_OP_SYMLINKAT) && bpf_core_type_exists(struct io_link)) {
		struct io_link *x = (void *)req;
		a = BPF_CORE_READ(x, oldpath);
		b = BPF_CORE_READ(x, newpath);
	} else {
		return;
	}
	v->gen = gen;
	v->set = 0;
	if (a && bpf_probe_read_kernel_str(v->name[0], VIGIL_STR_MAX, BPF_CORE_READ(a, name)) > 0)
		v->set |= 1;
	if (b && bpf_probe_read_kernel_str(v->name[1], VIGIL_STR_MAX, BPF_CORE_READ(b, name)) > 0)
		v->set |= 2;
	bpf_map_update_elem(&ring_names, &key, v, BPF_ANY);
}

/* The kept names as strings: for each, no directory (s0, s2), then the
 * name. A relative name's directory descriptor is resolved by the kernel
 * when the request runs, which no tracepoint here shows, and the workload
 * can point the descriptor elsewhere between submission and completion:
 * so the directory is not recorded, and such a request is counted as one
 * the record cannot show (evidence.Unrecorded). */
static __noinline void ring_names_add(struct slot *sl, struct vigil_ring_names *v)
{
	for (int i = 0; i < 2; i++) {
		no_str(sl);
		if (v->set & (1u << i))
			add_kstr(sl, v->name[i]);
		else
			no_str(sl);
	}
}

/* The run's requests from submission to completion, keyed by request:
 * a completion can be posted by a task that is not the run's (a kworker
 * tearing the ring down after the run's tasks exited without reaping),
 * where the completion program records nothing. Such a completion, and a
 * request still open when the capture ends (RING_OPEN - RING_DONE), is
 * counted as untraced, so the record does not call itself complete. */
#define VIGIL_RING_INFLIGHT 4096

/* An entry is the request's only by address: a completion takes it only
 * if the opcode and user_data match those submitted. An entry left behind
 * (a completion queued past a full CQ ring never passes the hook) stays
 * counted as open; one evicted (LRU) or found stale is dropped, and stays
 * counted as open too. So the count errs only towards untraced. */
struct vigil_ring_req {
	__u32 gen;
	__u32 opcode;
	__u64 user_data;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_RING_INFLIGHT);
	__type(key, __u64);
	__type(value, struct vigil_ring_req);
} ring_inflight SEC(".maps");

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(handle_io_uring_submit, void *req_)
{
	__u32 gen = session.gen;
	if (!req_ || !current_tracked(gen))
		return 0;
	struct io_kiocb *req = req_;
	__u64 key = (__u64)req_;
	if (BPF_CORE_READ(req, flags) & VIGIL_REQ_F_CQE_SKIP) {
		/* Counted now; its completion, if it fails, is recorded
		 * without names (none are kept for it). */
		count_in(gen, VIGIL_C_UNTRACED, VIGIL_KIND_IO_URING);
		bpf_map_delete_elem(&ring_inflight, &key);
		bpf_map_delete_elem(&ring_names, &key);
		return 0;
	}
	__u8 op = BPF_CORE_READ(req, opcode);
	struct vigil_ring_req entry = {.gen = gen, .opcode = op, .user_data = BPF_CORE_READ(req, cqe.user_data)};
	if (bpf_map_update_elem(&ring_inflight, &key, &entry, BPF_ANY)) {
		count_in(gen, VIGIL_C_UNTRACED, VIGIL_KIND_IO_URING);
		return 0;
	}
	count_in(gen, VIGIL_C_RING_OPEN, VIGIL_KIND_IO_URING);
	if (ring_fileop(op))
		ring_names_save(req, op, gen);
	return 0;
}

/* A completion queued past a full CQ ring never passes io_uring_complete,
 * and leaves its request's entry in ring_inflight; a later request at the
 * same address that fails before submission (in prep, unseen by
 * io_uring_submit_req) would complete against it and net the count to
 * zero. Overflows are counted on their own, and the capture counts as
 * untraced the larger of the two. */
SEC("tp_btf/io_uring_cqe_overflow")
int BPF_PROG(handle_io_uring_overflow, void *ctx_)
{
	__u32 gen = session.gen;
	if (current_tracked(gen))
		count_in(gen, VIGIL_C_RING_OVERFLOW, VIGIL_KIND_IO_URING);
	return 0;
}

/* A request that fails before it is submitted (in prep) completes
 * without passing io_uring_submit_req: whatever its address holds in
 * ring_inflight and ring_names is an earlier request's, which it must
 * not take. */
SEC("tp_btf/io_uring_req_failed")
int BPF_PROG(handle_io_uring_req_failed, void *sqe, void *req_)
{
	if (!req_)
		return 0;
	__u64 key = (__u64)req_;
	bpf_map_delete_elem(&ring_inflight, &key);
	bpf_map_delete_elem(&ring_names, &key);
	return 0;
}

/* Completions of requests of the run's rings. The submitting task, or an
 * io_uring worker of it (tracked from task_newtask), completes them. The
 * opcode and result are recorded, and for an open the file; the other
 * operations' arguments are not decoded. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_io_uring_complete, void *ctx_, void *req_)
{
	__u32 gen = session.gen;
	if (!req_)
		return 0;
	/* Whether the run submitted this request: its names were kept only
	 * then, and a completion by a task not the run's is counted. */
	__u64 key = (__u64)req_;
	struct io_kiocb *req = req_;
	bool followed = false;
	struct vigil_ring_req *opened = bpf_map_lookup_elem(&ring_inflight, &key);
	if (opened) {
		followed = opened->gen == gen && opened->opcode == BPF_CORE_READ(req, opcode) &&
			   opened->user_data == BPF_CORE_READ(req, cqe.user_data);
		bpf_map_delete_elem(&ring_inflight, &key);
	}
	if (!current_tracked(gen)) {
		if (followed) {
			/* Untraced before done: the capture reads done first,
			 * so a completion between its reads is counted twice,
			 * never lost. */
			count_in_ordered(gen, VIGIL_C_UNTRACED, VIGIL_KIND_IO_URING);
			count_in(gen, VIGIL_C_RING_DONE, VIGIL_KIND_IO_URING);
		}
		if (opened)
			bpf_map_delete_elem(&ring_names, &key);
		return 0;
	}
	if (followed)
		count_in(gen, VIGIL_C_RING_DONE, VIGIL_KIND_IO_URING);
	/* The result and user_data are the request's own (req->cqe), in
	 * every argument list the loader accepts: before 6.13 the tracepoint
	 * passes copies of them, from 6.13 a pointer to the CQE as posted, in
	 * the CQ ring the workload maps writable, where another thread can
	 * rewrite it before this reads it. Neither argument is read. */
	long res = BPF_CORE_READ(req, cqe.res);
	__u64 user_data = BPF_CORE_READ(req, cqe.user_data);
	struct slot sl;
	if (!begin(&sl, VIGIL_KIND_IO_URING, VIGIL_HOOK_IO_URING_COMPLETE, gen))
		return 0;
	struct vigil_iouring *u = &sl.s->body.iouring;
	__u8 op = BPF_CORE_READ(req, opcode);
	u->opcode = op;
	u->res = res;
	u->user_data = user_data;
	bool is_open = op == VIGIL_IORING_OP_OPENAT || op == VIGIL_IORING_OP_OPENAT2;
	bool deferred = BPF_CORE_READ((struct io_ring_ctx *)ctx_, flags) & VIGIL_IORING_SETUP_DEFER_TASKRUN;
	__u32 slot = 0;
	if (is_open && res >= 0 && bpf_core_field_exists(((struct io_open *)0)->file_slot))
		slot = BPF_CORE_READ((struct io_open *)req, file_slot);
	if (is_open && res >= 0 && slot) {
		/* A direct descriptor: the result is 0 or the slot, not a
		 * descriptor of the task, and fd_file(res) would name another
		 * file. The fixed-file table is not read. */
		u->direct = 1;
	} else if (is_open && res >= 0 && deferred) {
		/* The descriptor's file is read from the task's table now,
		 * and on a ring whose completions wait for the task to ask
		 * (IORING_SETUP_DEFER_TASKRUN) the task can have replaced the
		 * descriptor (dup2) since the open installed it: no file is
		 * recorded, and the open is counted as one the record cannot
		 * show. */
	} else if (is_open && res >= 0) {
		struct file *f = fd_file(res);
		u->ino = BPF_CORE_READ(f, f_inode, i_ino);
		u->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		u->f_mode = BPF_CORE_READ(f, f_mode);
		u->f_flags = BPF_CORE_READ(f, f_flags);
		add_file_path(&sl, f);
	} else if (ring_fileop(op)) {
		struct vigil_ring_names *v = bpf_map_lookup_elem(&ring_names, &key);
		if (v && followed && v->gen == gen) {
			u->names = 1;
			ring_names_add(&sl, v);
		}
		if (v)
			bpf_map_delete_elem(&ring_names, &key);
	}
	emit(&sl, VIGIL_KIND_IO_URING);
	return 0;
}
