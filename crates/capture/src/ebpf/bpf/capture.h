/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between capture.bpf.c and user space (crates/capture/src/ebpf/layout.rs). This
 * file is its one definition: build.rs turns every #define below into a Rust constant, and
 * layout.rs reads each record field at the offset of the Rust type libbpf-cargo generates from
 * these structs (capture.bpf.c names them all in `ring_records` so that it does). All integers
 * are little-endian (x86_64); every struct is padded explicitly (the _Static_asserts at the end
 * pin its size and the offsets of its fields), so both sides agree without compiler help.
 *
 * Rule table: one `struct syscall_rule` per x86_64 syscall number, filled by user space from
 * the registry (ra_syscalls::REGISTRY) before the programs attach. The BPF side has no
 * per-call code: it walks the six argument rules of the call it sees.
 *
 * Ring records: every record starts with a u32 kind. A call produces zero or more RK_DATA /
 * RK_DEFER records (its buffers, in argument order) followed by one RK_CALL record, all from
 * the same thread, so they arrive in that order; records of other threads may interleave.
 */
#ifndef RA_CAPTURE_H
#define RA_CAPTURE_H

#include "syscall_nr.h" /* MAX_NR: the rule table's size */

#define NARGS 6        /* syscall argument registers */
#define XARG 6         /* the "extra" slot: a struct an integer argument points to (fcntl locks) */
#define NSLOTS 7       /* NARGS + XARG */
#define LOST_MMAP_READ MAX_NR        /* lost-table index of mmappread (ring full) */
#define LOST_MMAP_WRITE (MAX_NR + 1) /* lost-table index of mmappwrite (ring full) */
/* Pages that could not be followed (a fault whose mapping could not be looked up, a large
 * folio that could not be found, a full table of written pages): possibly page records
 * missing from the trace. */
#define LOST_MMAP_READ_UNSEEN (MAX_NR + 2)
#define LOST_MMAP_WRITE_UNSEEN (MAX_NR + 3)
#define LOST_URING (MAX_NR + 4) /* io_uring operations whose record did not fit the ring */
#define LOST_SIGNAL (MAX_NR + 5) /* lost-table index of signal_deliver (ring full) */
#define LOST_SLOTS (MAX_NR + 6)

/* struct arg_rule.kind */
#define AK_SCALAR 0  /* a register value; nothing to copy */
#define AK_STR 1     /* NUL-terminated string, at most arg_rule.size bytes with the NUL */
#define AK_BUF 2     /* one buffer; length from the length rule */
#define AK_IOV 3     /* struct iovec[count], count = args[len_arg] */
#define AK_MSG 4     /* struct msghdr: the data of its msg_iov vectors */
#define AK_MMSG 5    /* struct mmsghdr[count], count = args[len_arg]: one vector per message */
#define AK_STRV 6    /* NULL-terminated array of strings (argv, envp) */
#define AK_DEREF32 7 /* a socklen_t *: the u32 it points to after the call (into aux[]) */
#define AK_UREG 8    /* io_uring_register's argument: by the opcode in args[size], the struct
                      * and the array it points to, as ureg_layout[opcode] says (nr_args in
                      * args[len_arg]); the struct is segment 0, the array segment 1 */
#define UREG_OPS 32  /* ureg_layout's length: the register opcodes described */
#define UREG_NONE 255 /* a ureg_layout byte: no such field */

/* struct arg_rule.len_kind: where an AK_BUF's length comes from */
#define LK_ARG 1       /* args[len_arg] */
#define LK_RET 2       /* the return value, when >= 0 */
#define LK_FIXED 3     /* arg_rule.size bytes */
#define LK_RET_TIMES 4 /* return value * arg_rule.size */
#define LK_DEREF 5     /* *(u32 *)args[len_arg], after the call */

/* struct arg_rule.flags */
#define AF_ENTRY 1    /* copy at sys_enter (the call replaces the address space: execve) */
#define AF_OUT 2      /* written by the kernel: copied only when the call succeeded */
#define AF_BULK 4     /* bulk data: not copied with --data none */
#define AF_TRIM_RET 8 /* input the call reports consuming: at most `ret` bytes (iov/msg/buf), or
                         each message's msg_len (mmsg) */
#define AF_NARROW 16  /* a 32-bit C argument: only the low half of its register is kept */

/* struct syscall_rule.flags */
#define RF_CAPTURE 1    /* record this call */
#define RF_NO_RETURN 2  /* never returns (exit, exit_group): recorded at sys_enter */
#define RF_XARG 4       /* has an extra struct (see xarg_*) */
#define RF_FLUSH_RANGE 8 /* mmap pages: before the call, write out the dirty pages of
                            [args[0], args[0] + args[1]) (munmap, msync, mremap) */
#define RF_FLUSH_ALL 16  /* mmap pages: before the call, all of the process's (exit_group, execve) */
#define RF_XARG_EQ 32    /* with RF_XARG: captured when the low 32 bits of args[xarg_cond] equal
                          * either half of xarg_mask (ioctl requests), not by bit number */
#define RF_READBACK 64   /* a kernel-side copy (sendfile, copy_file_range, splice): throttle mode
                          * stops the thread at a successful exit so that user space reads the
                          * moved bytes back from the file (CF_READBACK) */
#define RF_XARG_MSG 128  /* with RF_XARG: the extra is the control data of the struct msghdr the
                          * argument points to (msg_controllen bytes at msg_control, at most
                          * xarg_size), copied when the call succeeded; no condition */

struct arg_rule {
	__u8 kind;
	__u8 len_kind;
	__u8 len_arg;
	__u8 flags;
	__u32 size; /* LK_FIXED / LK_RET_TIMES: bytes or element size; AK_STR(V): max length */
};

struct syscall_rule {
	__u8 flags;
	__u8 xarg;      /* RF_XARG: the argument holding the struct pointer ... */
	__u8 xarg_cond; /* ... captured when args[xarg_cond] < 64 and bit args[xarg_cond] ... */
	__u8 bulk_mask; /* bit i: argument i is bulk data (AF_BULK): not copied with --data none */
	__u16 xarg_size; /* ... of xarg_mask is set; xarg_size bytes, after the call */
	__u8 entry_mask; /* bit i: argument i is copied at sys_enter ... */
	__u8 exit_mask;  /* ... at sys_exit (derived from the argument rules) */
	__u64 xarg_mask;
	struct arg_rule args[NARGS];
};

/* record kinds */
#define RK_CALL 1
#define RK_DATA 2
#define RK_DEFER 3
#define RK_FORK 4
#define RK_EXIT 5
#define RK_PAGE 6
#define RK_STOP 7 /* throttle: a process was just stopped (a wake-up for the consumer) */
#define RK_CALL1 8 /* a call with exactly one data chunk: struct rec_call, then an RK_DATA
                      record (struct rec_data and its payload), in one ring record */
#define RK_SIGNAL 9 /* a signal delivered to a target thread: struct rec_signal */

/* struct rec_data.flags */
#define DF_END 1   /* AK_STR / AK_STRV: this chunk ends the string (its NUL is included) */
#define DF_FAULT 2 /* the copy failed here: no payload; the slot is incomplete */
#define DF_RESET 4 /* a new copy of the slot starts here: forget what came for it before */
#define DF_FLAT 8  /* AK_STRV: strings back to back, each with its NUL (the kernel's copy) */
#define DF_BPRM 16 /* AK_STR: the exec's file name as the kernel holds it (bprm->filename), the
                    * entry copy having faulted: execveat's "/dev/fd/N[/path]" for dirfd N */
#define DF_STR 32  /* RK_DEFER of a string whose page was not present (the call failed before
                    * the kernel read it): user space reads the NUL-terminated string at `addr`,
                    * at most `len` bytes with its NUL, while the thread is stopped */

/*
 * RK_DATA: `len` payload bytes follow. They are bytes [off, off + len) of segment `seg` of
 * vector `vec` of argument slot `slot` (vectors: iovecs, messages, strings; segments: the
 * iovecs of a message, else one). `seg_len` is the segment's full length as the program gave
 * it (iov_len); the bytes taken may be fewer (ret, msg_len).
 * RK_DEFER: no payload; user space must read `len` bytes at `addr` itself (throttle mode, when
 * the ring had no room): the thread is being stopped by SIGSTOP before it returns to user mode.
 */
struct rec_data {
	__u32 kind;
	__u32 tid;  /* the thread at the call's entry */
	__u32 tgid; /* its process */
	__u32 seq;  /* per-thread call number */
	__u8 slot;
	__u8 flags;
	__u16 seg;
	__u32 vec;
	__u32 len;
	__u32 pad0;
	__u64 seg_len;
	__u64 off;
	__u64 addr;
};

/* struct rec_call.flags */
#define CF_NO_RETURN 1 /* never returned (exit, exit_group, killed inside the call) */
#define CF_READBACK 2  /* RF_READBACK: the thread is being stopped; user space reads the bytes
                        * moved back, then counts it as one deferral done (see `defers`) */

/* struct rec_call.status[] */
#define ST_NONE 0         /* not a pointer argument, or nothing to copy */
#define ST_OK 1           /* copied completely */
#define ST_ABSENT 2       /* NULL pointer, or the output of a failed call */
#define ST_NOT_CAPTURED 3 /* --data none */
#define ST_FAULT 4        /* a copy failed part-way (bad pointer, page not present) */
#define ST_TRUNC 5        /* longer than the rule's maximum (strings) */
#define ST_UNKNOWN_LEN 6  /* the length could not be determined */

struct rec_call {
	__u32 kind;
	__u32 tid;       /* the thread now (after a non-leader execve: the leader's id) */
	__u32 seq;
	__u32 entry_tid; /* the thread at entry: its data records carry this id */
	__u32 tgid;
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 pgid;
	__u32 sid;
	__u32 nr;
	__u32 flags;
	__u64 ts_enter; /* CLOCK_MONOTONIC ns */
	__u64 ts_exit;
	__s64 ret;
	__u64 args[NARGS];
	__u64 aux[NARGS]; /* AK_DEREF32 values */
	__u32 nvec[NSLOTS];
	__u8 status[NSLOTS];
	__u8 pad0;
	__u32 nrec; /* RK_DATA + RK_DEFER records this call emitted */
	/* Pages added to the page cache while the thread was in the call: a read's misses and
	 * the read-ahead it triggered (0: served from the cache). */
	__u32 added_pages;
	__u32 pad1;
};

/* RK_FORK: a new thread or process of the target set. RK_EXIT: a thread ended. RK_STOP: see
 * the kind. */
struct rec_task {
	__u32 kind;
	__u32 tid;       /* the thread that forked / exited */
	__u32 tgid;
	__u32 child_tid; /* RK_FORK; RK_EXIT: the task's exit_code (a wait status) */
	__u32 child_tgid; /* RK_FORK; RK_EXIT: 1 when it ended inside a call (recorded so) */
	__u32 group_dead; /* RK_EXIT: the last thread of its process */
};

/* struct rec_page.flags */
#define PG_READ 1          /* mmappread: a page of a shared file mapping became readable */
#define PG_WRITE 2         /* mmappwrite: a page the process wrote, at a flush point */
#define PG_FAULT 4         /* its memory could not be read: no payload */
#define PG_NOT_CAPTURED 8  /* --data none: no payload */

/* RK_PAGE: one 4 KiB page of a shared file mapping; `len` payload bytes follow. */
struct rec_page {
	__u32 kind;
	__u32 tid;
	__u32 tgid;
	__u32 flags;
	__u64 ts; /* CLOCK_MONOTONIC */
	__u64 addr; /* the page's address in the process */
	__u64 off;  /* its offset in the file */
	__u64 ino;
	__u32 dev;
	__u32 len;
};

/* struct rec_signal.flags */
#define SG_IGNORED 1 /* dropped by the kernel as it was sent (ignored, not blocked): never
                      * delivered, though a traced thread (ptrace, strace) stops for it */
#define SG_FATAL 2   /* fatal as it was sent (no handler): the kernel ends the group at once
                      * (each thread takes SIGKILL), never delivered as itself */

/* RK_SIGNAL: a signal delivered to a target thread (tp_btf/signal_deliver, in the thread), or
 * sent to it and ignored or fatal at once (tp_btf/signal_generate, SG_IGNORED, SG_FATAL).
 * SIGKILL is not recorded (the thread's end says it). */
struct rec_signal {
	__u32 kind;
	__u32 tid;
	__u32 tgid;
	__u32 flags;
	__u64 ts;       /* CLOCK_MONOTONIC */
	__u8 info[48];  /* struct kernel_siginfo */
};

/* Per-CPU loss counters, by syscall number (and LOST_MMAP_*). */
struct lost_slot {
	__u64 count;
	__u64 bytes;
	__u64 first_ns; /* CLOCK_MONOTONIC */
	__u64 last_ns;
};

/* Per-CPU statistics (struct stats) */
struct stats {
	__u64 deferred;       /* RK_DEFER records */
	__u64 deferred_bytes;
	__u64 faults;         /* copies that failed */
	__u64 lost_calls;
	__u64 throttle_stops; /* SIGSTOPs sent */
	__u64 no_storage;     /* task storage could not be allocated (counted as lost too) */
	__u64 pages;          /* RK_PAGE records */
	__u64 pages_unclassified; /* faults whose mapping could not be looked up */
	__u64 page_walks;     /* walks of the dirty / seen page tables at flush points */
	__u64 pages_cached_vma; /* faults classified by the process's cached mapping */
	__u64 inputs_recovered; /* string inputs that faulted at entry, read again later */
	__u64 pages_folio;    /* pages of large folios mapped by a fault of a neighbour */
	__u64 pages_retried;  /* faults classified late (at the next system call) */
	__u64 pad[3];         /* (calls and data records are counted in user space) */
};

/*
 * io_uring operations (tp_btf/io_uring_submit_req, tp_btf/io_uring_complete). Each request
 * gives an RK_URING_SUBMIT when the kernel has read its SQE (in the thread that submitted it:
 * the io_uring_enter caller, or the ring's SQPOLL thread) and an RK_URING_COMPLETE when its CQE
 * is posted (in whichever thread ran it: the submitter, an io-wq worker, the SQPOLL thread;
 * all share the submitter's memory). Both carry `serial`, the request's number (request
 * structs are reused). A write's data precedes its SUBMIT as RK_URING_DATA chunks (read at
 * submission); a read's precedes its COMPLETE (read at completion, when the thread completing
 * it has the submitter's memory mapped; else UF_NO_MM and user space reads the bytes back
 * from the file).
 */
#define RK_URING_SUBMIT 10
#define RK_URING_COMPLETE 11
#define RK_URING_DATA 12
/* RK_URING_STR: a string (or struct open_how) a path opcode's SQE points to, read at
 * submission before its SUBMIT: struct rec_uring_data with `off` = URS_* (which one) and `len`
 * bytes (a string's with its NUL) following. */
#define RK_URING_STR 13
#define URS_PATH 0  /* the path (sqe->addr; GETXATTR/SETXATTR: sqe->addr3) */
#define URS_PATH2 1 /* the second path (sqe->addr2) */
#define URS_NAME 2  /* an xattr name (sqe->addr) */
#define URS_HOW 3   /* OPENAT2's struct open_how (sqe->addr2, 24 bytes) */
#define URS_MAX 4096 /* PATH_MAX: the most a string record holds */

/* struct rec_uring.flags */
#define UF_SQPOLL 1      /* the ring has an SQPOLL thread (it submitted the SQE) */
#define UF_NO_MM 2       /* completed where the submitter's memory is not mapped: no data */
#define UF_DATA_LOST 4   /* its data did not fit the ring (drop) or could not be read */
#define UF_NO_SUBMIT 8   /* COMPLETE: no SUBMIT was recorded (the SQE failed before the kernel
                          * issued it, was submitted before the recording, or the in-flight
                          * table was full) */
#define UF_BUF_SELECT 16 /* a provided buffer (IOSQE_BUFFER_SELECT): the address is the kernel's
                          * pick; its data is not read */
#define UF_MORE 32       /* COMPLETE: IORING_CQE_F_MORE, more completions of the request follow */
#define UF_STR_LOST 64   /* SUBMIT: a string or open_how the SQE points to could not be read
                          * (a page not present, the ring full): its RK_URING_STR is missing */

struct rec_uring {
	__u32 kind;
	__u32 tid;       /* the thread the tracepoint ran in */
	__u32 tgid;
	__u32 flags;     /* UF_* */
	__u64 ts;        /* CLOCK_MONOTONIC ns */
	__u64 ctx;       /* the ring (struct io_ring_ctx *) */
	__u64 serial;
	__u32 enter_tid; /* SUBMIT: the thread in io_uring_enter and its call's seq (0: none, SQPOLL) */
	__u32 enter_seq;
	__s32 res;       /* COMPLETE: cqe->res, cqe->flags */
	__u32 cflags;
	__u64 user_data;
	__u32 opcode;
	__u32 data_len;  /* payload bytes in the RK_URING_DATA records before this one */
	__u64 ino;       /* COMPLETE: the request's file when it has one */
	__u32 dev;
	__u32 ring_flags; /* ctx->flags (IORING_SETUP_*) */
	__u8 sqe[64];    /* SUBMIT: the SQE as the kernel read it (its first 64 bytes) */
};

/* RK_URING_DATA: `len` payload bytes follow, bytes [off, off + len) of request `serial`'s
 * buffer. */
struct rec_uring_data {
	__u32 kind;
	__u32 tid;
	__u32 tgid;
	__u32 len;
	__u64 serial;
	__u64 off;
};

/*
 * The layout pinned: each struct's size and the offset of each of its fields. The object and
 * layout.rs are built together and layout.rs follows the generated types by itself, so a change
 * cannot split them; these make it deliberate (and keep the padding explicit).
 */
#define RA_SIZE(s, n) _Static_assert(sizeof(struct s) == (n), "struct " #s ": size changed")
#define RA_AT(s, f, o) \
	_Static_assert(__builtin_offsetof(struct s, f) == (o), "struct " #s ": " #f " moved")

RA_SIZE(arg_rule, 8);
RA_AT(arg_rule, kind, 0);
RA_AT(arg_rule, len_kind, 1);
RA_AT(arg_rule, len_arg, 2);
RA_AT(arg_rule, flags, 3);
RA_AT(arg_rule, size, 4);

RA_SIZE(syscall_rule, 64);
RA_AT(syscall_rule, flags, 0);
RA_AT(syscall_rule, xarg, 1);
RA_AT(syscall_rule, xarg_cond, 2);
RA_AT(syscall_rule, bulk_mask, 3);
RA_AT(syscall_rule, xarg_size, 4);
RA_AT(syscall_rule, entry_mask, 6);
RA_AT(syscall_rule, exit_mask, 7);
RA_AT(syscall_rule, xarg_mask, 8);
RA_AT(syscall_rule, args, 16);

RA_SIZE(rec_data, 56);
RA_AT(rec_data, kind, 0);
RA_AT(rec_data, tid, 4);
RA_AT(rec_data, tgid, 8);
RA_AT(rec_data, seq, 12);
RA_AT(rec_data, slot, 16);
RA_AT(rec_data, flags, 17);
RA_AT(rec_data, seg, 18);
RA_AT(rec_data, vec, 20);
RA_AT(rec_data, len, 24);
RA_AT(rec_data, seg_len, 32);
RA_AT(rec_data, off, 40);
RA_AT(rec_data, addr, 48);

/* RK_CALL1 puts a struct rec_data right after it: a multiple of 8. */
RA_SIZE(rec_call, 216);
RA_AT(rec_call, kind, 0);
RA_AT(rec_call, tid, 4);
RA_AT(rec_call, seq, 8);
RA_AT(rec_call, entry_tid, 12);
RA_AT(rec_call, tgid, 16);
RA_AT(rec_call, ppid, 20);
RA_AT(rec_call, uid, 24);
RA_AT(rec_call, gid, 28);
RA_AT(rec_call, pgid, 32);
RA_AT(rec_call, sid, 36);
RA_AT(rec_call, nr, 40);
RA_AT(rec_call, flags, 44);
RA_AT(rec_call, ts_enter, 48);
RA_AT(rec_call, ts_exit, 56);
RA_AT(rec_call, ret, 64);
RA_AT(rec_call, args, 72);
RA_AT(rec_call, aux, 120);
RA_AT(rec_call, nvec, 168);
RA_AT(rec_call, status, 196);
RA_AT(rec_call, nrec, 204);
RA_AT(rec_call, added_pages, 208);

RA_SIZE(rec_task, 24);
RA_AT(rec_task, kind, 0);
RA_AT(rec_task, tid, 4);
RA_AT(rec_task, tgid, 8);
RA_AT(rec_task, child_tid, 12);
RA_AT(rec_task, child_tgid, 16);
RA_AT(rec_task, group_dead, 20);

RA_SIZE(rec_page, 56);
RA_AT(rec_page, kind, 0);
RA_AT(rec_page, tid, 4);
RA_AT(rec_page, tgid, 8);
RA_AT(rec_page, flags, 12);
RA_AT(rec_page, ts, 16);
RA_AT(rec_page, addr, 24);
RA_AT(rec_page, off, 32);
RA_AT(rec_page, ino, 40);
RA_AT(rec_page, dev, 48);
RA_AT(rec_page, len, 52);

RA_SIZE(rec_signal, 72);
RA_AT(rec_signal, kind, 0);
RA_AT(rec_signal, tid, 4);
RA_AT(rec_signal, tgid, 8);
RA_AT(rec_signal, flags, 12);
RA_AT(rec_signal, ts, 16);
RA_AT(rec_signal, info, 24);

RA_SIZE(lost_slot, 32);
RA_AT(lost_slot, count, 0);
RA_AT(lost_slot, bytes, 8);
RA_AT(lost_slot, first_ns, 16);
RA_AT(lost_slot, last_ns, 24);

RA_SIZE(stats, 128);
RA_AT(stats, deferred, 0);
RA_AT(stats, deferred_bytes, 8);
RA_AT(stats, faults, 16);
RA_AT(stats, lost_calls, 24);
RA_AT(stats, throttle_stops, 32);
RA_AT(stats, no_storage, 40);
RA_AT(stats, pages, 48);
RA_AT(stats, pages_unclassified, 56);
RA_AT(stats, page_walks, 64);
RA_AT(stats, pages_cached_vma, 72);
RA_AT(stats, inputs_recovered, 80);
RA_AT(stats, pages_folio, 88);
RA_AT(stats, pages_retried, 96);
RA_AT(stats, pad, 104);

RA_SIZE(rec_uring, 152);
RA_AT(rec_uring, kind, 0);
RA_AT(rec_uring, tid, 4);
RA_AT(rec_uring, tgid, 8);
RA_AT(rec_uring, flags, 12);
RA_AT(rec_uring, ts, 16);
RA_AT(rec_uring, ctx, 24);
RA_AT(rec_uring, serial, 32);
RA_AT(rec_uring, enter_tid, 40);
RA_AT(rec_uring, enter_seq, 44);
RA_AT(rec_uring, res, 48);
RA_AT(rec_uring, cflags, 52);
RA_AT(rec_uring, user_data, 56);
RA_AT(rec_uring, opcode, 64);
RA_AT(rec_uring, data_len, 68);
RA_AT(rec_uring, ino, 72);
RA_AT(rec_uring, dev, 80);
RA_AT(rec_uring, ring_flags, 84);
RA_AT(rec_uring, sqe, 88);

RA_SIZE(rec_uring_data, 32);
RA_AT(rec_uring_data, kind, 0);
RA_AT(rec_uring_data, tid, 4);
RA_AT(rec_uring_data, tgid, 8);
RA_AT(rec_uring_data, len, 12);
RA_AT(rec_uring_data, serial, 16);
RA_AT(rec_uring_data, off, 24);

#endif
