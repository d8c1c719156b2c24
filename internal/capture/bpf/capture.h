/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Record layout shared by capture.bpf.c and the Go decoder. The Go side
 * does not keep its own copy of these offsets: bpf2go generates Go types
 * for the structs below (-type), and decode.go reads records through them.
 * Kind, hook and flag numbers are mirrored in kinds.go, where a test checks
 * them against the enums in this object's BTF.
 */
#ifndef VIGIL_CAPTURE_H
#define VIGIL_CAPTURE_H

/* Event kinds (index into counters). */
enum vigil_kind {
	VIGIL_KIND_EXEC = 0,
	VIGIL_KIND_EXEC_FAILED,
	VIGIL_KIND_FORK,
	VIGIL_KIND_EXIT,
	VIGIL_KIND_OPEN,
	VIGIL_KIND_UNLINK,
	VIGIL_KIND_RMDIR,
	VIGIL_KIND_MKDIR,
	VIGIL_KIND_MKNOD,
	VIGIL_KIND_RENAME,
	VIGIL_KIND_LINK,
	VIGIL_KIND_SYMLINK,
	VIGIL_KIND_CHMOD,
	VIGIL_KIND_CHOWN,
	VIGIL_KIND_TRUNCATE,
	VIGIL_KIND_CONNECT,
	VIGIL_KIND_SEND,
	VIGIL_KIND_BIND,
	VIGIL_KIND_LISTEN,
	VIGIL_KIND_CGROUP_MIGRATE,
	VIGIL_KIND_IO_URING,
	VIGIL_NKINDS,
};

/* The kernel hook each record came from (one program per hook). */
enum vigil_hook {
	VIGIL_HOOK_SCHED_PROCESS_EXEC = 0,
	VIGIL_HOOK_SCHED_PROCESS_FORK,
	VIGIL_HOOK_SCHED_PROCESS_EXIT,
	VIGIL_HOOK_CGROUP_ATTACH_TASK,
	VIGIL_HOOK_TASK_NEWTASK,
	VIGIL_HOOK_SYS_EXIT,
	VIGIL_HOOK_IO_URING_COMPLETE,
	VIGIL_HOOK_IO_URING_SUBMIT_REQ,
	VIGIL_HOOK_IO_URING_CQE_OVERFLOW,
	VIGIL_HOOK_IO_URING_REQ_FAILED,
	VIGIL_NHOOKS,
};

/* What sys_exit does with a syscall (struct vigil_sysdesc.op). */
enum vigil_op {
	VIGIL_OP_NONE = 0,
	VIGIL_OP_OPEN,    /* open, openat, openat2, creat */
	VIGIL_OP_EXEC,    /* execve, execveat: recorded when they fail */
	VIGIL_OP_FILE,    /* unlink ... truncate: names, dirs, result */
	VIGIL_OP_CONNECT,
	VIGIL_OP_SENDTO,
	VIGIL_OP_SENDMSG,
	VIGIL_OP_BIND,
	VIGIL_OP_LISTEN,
};

/* Counter classes; counter index = class * VIGIL_NKINDS + kind. */
enum vigil_counter_class {
	VIGIL_C_EMIT = 0,   /* record reserved, numbered and submitted */
	VIGIL_C_DROP,       /* ring buffer reservation failed */
	VIGIL_C_BUSY,       /* every scratch slot of the CPU was in use */
	VIGIL_C_LATE,       /* a tracked task acted after the capture closed */
	VIGIL_C_UNTRACKED,  /* a task could not be marked as tracked */
	VIGIL_C_COMPAT,     /* a 32-bit (compat) syscall, not decoded */
	VIGIL_C_UNTRACED,   /* an io_uring completion io_uring_complete never sees */
	VIGIL_C_RING_OPEN,  /* an io_uring request of the run followed from submission */
	VIGIL_C_RING_DONE,  /* ... and its completion seen, in whatever task */
	VIGIL_C_RING_OVERFLOW, /* a completion of the run queued past a full CQ ring */
	VIGIL_NCLASSES,
};

/*
 * Where handle_sys_exit stops for a recorded syscall, for the benchmark
 * that shows what each stage of a record costs (BenchmarkRecordStages).
 * The loader sets it once, before verification, so the verifier knows its
 * value and hard-wires every test of it: a capture that records
 * (VIGIL_STAGE_ALL) keeps only the instructions that read it, at each
 * test (three in handle_sys_exit, one in emit, which every program
 * inlines).
 */
enum vigil_stage {
	VIGIL_STAGE_ALL = 0,     /* record and emit */
	VIGIL_STAGE_TRACKED,     /* stop once the task is known to be tracked */
	VIGIL_STAGE_BEGIN,       /* stop after taking a slot and the header */
	VIGIL_STAGE_BODY,        /* stop after the body and strings, before the ring */
	VIGIL_STAGE_RESERVE,     /* reserve the ring space, then discard it */
};

/* Header flags. String i (0..3) has bits VIGIL_F_STR_* << (4*i). */
enum vigil_flag {
	VIGIL_F_FAULT = 1 << 0,      /* a kernel or user memory read failed */
	VIGIL_F_IO_WORKER = 1 << 1,  /* current is an io_uring worker thread */
	VIGIL_F_ENTERED = 1 << 2,    /* fork/migrate: the task entered the run
				      * without a tracked parent */
	VIGIL_F_PEER_FROM_SOCKET = 1 << 3, /* net: address from the socket */
	VIGIL_F_STR_TRUNC = 1 << 8,     /* the string did not fit */
	VIGIL_F_STR_DETACHED = 1 << 9,  /* path not reachable from a mount
					 * namespace root (memfd, pipe,
					 * socket, lazily unmounted) */
	VIGIL_F_STR_DELETED = 1 << 10,  /* the path's last component is
					 * unlinked */
	VIGIL_F_STR_SET = 1 << 11,      /* the string is present (a path may
					 * be empty, e.g. the root) */
};

#define VIGIL_NSTR 4
/* Strings of one record, together; one string at most VIGIL_STR_MAX. */
#define VIGIL_DATA_MAX 16384
#define VIGIL_DATA_MASK (VIGIL_DATA_MAX - 1)
#define VIGIL_STR_MAX 4096 /* PATH_MAX, including the NUL */
#define VIGIL_ARGV_MAX 4096
#define VIGIL_NAME_MAX 256 /* NAME_MAX + NUL */
#define VIGIL_PATH_DEPTH 64 /* components per path */
#define VIGIL_SOCKADDR_MAX 128
#define VIGIL_UNIX_PATH_MAX 108
#define VIGIL_NR_MAX 512 /* syscall numbers watched: 0..VIGIL_NR_MAX-1 */

/* How sys_exit reads one syscall: which arguments hold names (read from
 * the caller's memory) and the directory fds they are relative to (-1:
 * none, the name is relative to the cwd; VIGIL_DIR_NONE: not a name). */
struct vigil_sysdesc {
	__u8 op;
	__u8 kind;
	__s8 name_a;
	__s8 dir_a;
	__s8 name_b;
	__s8 dir_b;
	__s8 fd; /* an fd argument naming the object (fchmod, connect...) */
	__s8 addr; /* a sockaddr pointer argument */
};

/* dir_a/dir_b value: the name is text to store, not resolved anywhere. */
#define VIGIL_DIR_NONE -2

/* One syscall number: the architecture's own call and the 32-bit one. */
struct vigil_sysentry {
	struct vigil_sysdesc native;
	struct vigil_sysdesc compat;
};

/*
 * What one session sets and reads while it runs. The loader resets it
 * before each session: the same loaded programs can serve one session
 * after another (a resident set), so nothing of a session may live
 * anywhere else. gen tells this session's tracked tasks from those a
 * previous session left alive; it is never 0.
 */
struct vigil_session {
	__u64 next_seq;   /* next sequence number; = records emitted */
	__s64 live_tasks; /* tracked tasks alive now */
	__u64 cgroup_id;  /* the session cgroup */
	__u32 gen;
	__u32 closed;     /* set when the drain starts */
};

struct vigil_hdr {
	__u64 seq;
	__u64 ts_ns;
	__u64 cgroup_id;
	__u32 pid; /* tgid */
	__u32 tid;
	__u8 kind;
	__u8 hook;
	__u16 gen; /* the low bits of the session's generation at begin */
	__u32 flags;
	__u16 len[VIGIL_NSTR]; /* bytes of each string, in order */
	char comm[16];
}; /* 64 bytes */

struct vigil_fork {
	__u32 parent_pid;
	__u32 parent_tid;
	__u32 child_pid;
	__u32 child_tid;
	__u32 thread;
	__u32 io_worker;
};

struct vigil_exit {
	__s32 exit_code; /* task->exit_code: status << 8 | signal */
	__u32 group_dead;
};

/* s0: resolved executable path, s1: bprm->filename, s2: argv. */
struct vigil_exec {
	__s32 old_tid;
	__u32 argc;
	__u64 argv_bytes; /* size of the whole argument area */
	__u64 ino;
	__u32 dev;
};

/*
 * A syscall at its return. Strings: s0 the resolved object (the opened
 * file, the fd's file) or, with VIGIL_F_STR_SET on s1 relative, the
 * directory name A is relative to; s1 name A; s2 the directory of name B;
 * s3 name B. Names come from the caller's memory, resolved paths from the
 * kernel's own objects (descriptor table, cwd).
 */
struct vigil_sys {
	__s64 ret;
	__s32 nr;
	__u32 op;
	__u64 args[6];
	__u64 ino;
	__u32 dev;
	__u32 f_mode;
	__u32 s0_is_dir;
	__u32 _pad;
};

/* Network (connect, sendto, sendmsg, bind, listen at syscall return; the
 * numbers are in sys). s0: unix socket path (raw sun_path bytes). */
struct vigil_net {
	struct vigil_sys sys;
	__u16 family;
	__u16 port; /* host order */
	__u16 sock_type;
	__u16 _pad;
	__u8 addr[16];
	__u32 addrlen;
	__u32 _pad2;
};

/* s0: destination cgroup path. The header names the migrated task. */
struct vigil_migrate {
	__u64 dst_cgroup_id;
	__u32 mover_pid;
	__u32 mover_tid;
	__u32 was_tracked;
	__u32 default_hierarchy;
	__u32 into_session;
	__u32 threadgroup;
};

/* s0: the opened file for a successful IORING_OP_OPENAT/OPENAT2. */
struct vigil_iouring {
	__s64 res;
	__u64 user_data;
	__u32 opcode;
	__u32 f_flags; /* the opened file's: O_TMPFILE stays there */
	__u64 ino;
	__u32 dev;
	__u32 f_mode;
	__u32 direct; /* opened into the ring's fixed-file table: no file resolved */
	/* A file-tree request (unlinkat, renameat, mkdirat, symlinkat,
	 * linkat) whose names were kept at submission: s0/s1 the first
	 * name's directory and name, s2/s3 the second's. */
	__u32 names;
	__u32 _pad;
};

union vigil_body {
	struct vigil_fork fork;
	struct vigil_exit exit;
	struct vigil_exec exec;
	struct vigil_sys sys;
	struct vigil_net net;
	struct vigil_migrate migrate;
	struct vigil_iouring iouring;
	__u8 _size[128];
};

/* Record = hdr + body (VIGIL_FIXED_SIZE bytes) + the strings. */
#define VIGIL_FIXED_SIZE 192

struct vigil_scratch {
	struct vigil_hdr hdr;
	union vigil_body body;
	/* Room for a string read of VIGIL_STR_MAX starting anywhere in the
	 * first VIGIL_DATA_MAX bytes, so the verifier can bound every write
	 * with a mask. */
	char data[VIGIL_DATA_MAX + VIGIL_STR_MAX + 8];
};

_Static_assert(sizeof(struct vigil_hdr) == 64, "vigil_hdr layout");
_Static_assert(sizeof(union vigil_body) == 128, "vigil_body layout");
_Static_assert(sizeof(struct vigil_hdr) + sizeof(union vigil_body) == VIGIL_FIXED_SIZE, "fixed size");

#endif /* VIGIL_CAPTURE_H */
