// SPDX-License-Identifier: GPL-2.0
/*
 * reanimator's eBPF capture backend, kernel side.
 *
 * Two BTF raw tracepoints see every system call (tp_btf/sys_enter, tp_btf/sys_exit): one link
 * each, with the call dispatched here (classic syscalls:* tracepoint links cost 60-100 ms each
 * to detach on the project's kernel). A call is captured when its process is in the target set
 * (`targets`, grown by tp_btf/sched_process_fork; or a cgroup) and the rule table (`rules`,
 * filled by user space from the registry) says so. There is no per-call code: the program walks
 * the call's six argument rules.
 *
 * sys_enter saves the registers in task-local storage; sys_exit copies the call's buffers into
 * the ring buffer (inputs too: the kernel has just read them, so their pages are present and a
 * non-faulting copy succeeds) and then the call record. Calls that replace the address space
 * (execve) copy their inputs at sys_enter; calls that never return (exit, exit_group) are
 * recorded at sys_enter; a thread killed inside a call is recorded at sched_process_exit.
 *
 * Buffers of any size are copied in chunks of at most `chunk_max` bytes, one ring record each,
 * with bpf_ringbuf_reserve_dynptr + the bpf_probe_read_user_dynptr kfunc (one copy, user memory
 * straight into the ring), inside bpf_loop (bounded, verified once). Strings go through a
 * per-CPU scratch buffer (their length is unknown until read).
 *
 * Loss policy (`throttle`):
 *   throttle: after a call, when the ring holds more than `high_wm` unconsumed bytes, the
 *     thread is sent SIGSTOP (it stops before returning to user mode, and its whole process
 *     with it) and the process is flagged in `stops`;
 *     user space drains the ring and sends SIGCONT. A chunk that would push the ring past
 *     `data_limit` is not copied: an RK_DEFER record tells user space to read it with
 *     process_vm_readv while the thread is stopped (the stop is sent in the same sys_exit).
 *   drop: nothing waits; a call whose records do not fit is dropped whole and counted in
 *     `lost` (count, bytes, time range) per call number.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "capture.h"
#include "folio.h"

char LICENSE[] SEC("license") = "GPL";

/* Every record type of the ring, named by one global (never read or written) so that BTF keeps
 * it and libbpf-cargo generates its Rust type: layout.rs reads each field at that type's
 * offset. (A struct only reserved in the ring has no BTF of its own in the skeleton.) */
struct ring_records {
	struct rec_call call;
	struct rec_data data;
	struct rec_task task;
	struct rec_page page;
	struct rec_signal signal;
	struct rec_uring uring;
	struct rec_uring_data uring_data;
};
struct ring_records ring_records;

#define SIGKILL 9
#define SIGSTOP 19
#define TS_COMPAT 0x0002
#define IOV_MAX 1024
#define MAX_STRV (1 << 17)
#define SCHUNK 4096
#define MAX_STEPS (1 << 23)
#define UNKNOWN_LEN (~0ULL)
#define LEN_CAP (1ULL << 31)

/* Set by user space before load. */
const volatile __u32 data_none = 0;      /* --data none both ways: AF_BULK arguments are not copied */
/* --data per direction (`write=..,read=..`): data written from the caller (input buffers,
 * io_uring writes at submission, kernel-side copies) and data read into it (AF_OUT buffers,
 * io_uring reads at completion, mmap pages read) left uncopied on their own. */
const volatile __u32 data_none_in = 0;
const volatile __u32 data_none_out = 0;
#define BULK_NONE(flags) (((flags) & AF_OUT) ? data_none_out : data_none_in)
const volatile __u32 throttle = 1;       /* 1: --loss throttle; 0: --loss drop */
const volatile __u64 high_wm = 1 << 20;  /* throttle: SIGSTOP above this many unconsumed bytes */
const volatile __u64 data_limit = 1 << 21; /* throttle: defer chunks that would pass this */
const volatile __u32 chunk_max = 1 << 20; /* largest payload of one RK_DATA record */
const volatile __u32 use_cgroup = 0;     /* targets = the tasks under cgroups[0] */
const volatile __u32 self_tgid = 0;      /* never traced (the recorder) */
const volatile __u32 mmap_pages = 0;     /* record mmappread / mmappwrite pages */
const volatile __u32 mmap_private = 0;   /* --mmap-private: reads of private file mappings too */
const volatile __u32 signals = 0;        /* record delivered signals (RK_SIGNAL) */
/* Benchmarks only (REANIMATOR_BPF_NOOP=1): sys_enter and sys_exit return at once, recording
 * nothing: what the two syscall tracepoints cost with programs attached, the floor of any
 * tracer built on them. (Read-only data: when 0, the verifier removes the test.) */
const volatile __u32 noop = 0;
/* io_uring_register's argument by opcode (AK_UREG), from ra_syscalls::uring::register::layout:
 * byte 0 the struct's size (0: the argument is the array), 1 the offset of the array's pointer
 * in it, 2 of its u32 element count (UREG_NONE: nr_args), 3 of its u32 flags (UREG_NONE:
 * none; bit 0 IORING_RSRC_REGISTER_SPARSE), 4 the element size, 5-6 (u16) the most array
 * bytes read; 0: not a registration of files or buffers. */
const volatile __u64 ureg_layout[UREG_OPS] = {};

/* Read by user space through the mmapped .bss. */
__u64 throttle_gen = 0; /* SIGSTOPs sent */
__s64 live_procs = 0;   /* target processes alive (user space sets the initial count) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24); /* set by user space */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_NR);
	__type(key, __u32);
	__type(value, struct syscall_rule);
} rules SEC(".maps");

/* The hash tables are not preallocated (BPF_F_NO_PREALLOC): their elements are allocated as
 * they are inserted (bpf_mem_alloc, safe in tracing programs since Linux 6.1). Preallocated,
 * the six of them took ~31 MiB, zeroed and threaded on free lists before the first call could
 * be recorded: a good part of the recorder's start-up. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Throttle: non-zero after this program sent the process SIGSTOP: the time of the first stop
 * not yet resumed (bpf_ktime_get_ns, so user space can tell how long the process was held);
 * user space resets it to 0 and then sends SIGCONT. The signal is sent BEFORE the flag is set,
 * so every stop is followed by a flag that user space will see after it, and resume. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} stops SEC(".maps");

/* Throttle: RK_DEFER records emitted per process; user space resumes a process only when it
 * has read as many. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} defers SEC(".maps");

/* The walk of one argument's memory (see vstep, sstep). It lives in task storage, not on the
 * stack: the verifier then sees every field as an unknown value at each loop step, so the
 * bpf_loop callbacks converge after one step instead of being simulated step by step. */
struct walk {
	__u64 ptr;      /* the buffer or string; or the iovec / mmsghdr / string-pointer array */
	__u64 nvec;     /* vectors to walk */
	__u64 left;     /* bytes still to take over all vectors (AK_BUF / AK_IOV / AK_MSG) */
	__u64 vec_left; /* AK_MMSG: bytes still to take from the current message; AK_UREG: the
			 * array's bytes */
	__u64 segs;     /* AK_MMSG: the current message's iovec array; AK_UREG: the array */
	__u64 seg_base;
	__u64 seg_len;
	__u64 seg_take;
	__u64 seg_off; /* also: the offset in the current string */
	__u64 ok_msgs; /* AK_MMSG: messages the call handled */
	__u32 vec;
	__u32 seg;
	__u32 nseg;
	__u32 max; /* strings: bytes per string, with its NUL */
	__u8 slot;
	__u8 kind;
	__u8 stage;
	__u8 trim; /* AK_MMSG: take each handled message's msg_len, nothing of the others */
	__u8 hdr;  /* AK_UREG: the struct's size (segment 0; ptr is the struct) */
	__u8 pad[3];
};

/* The call a thread is in. Task-local: programs may be preempted, so nothing per-CPU holds
 * state across helper calls. */
struct tstate {
	__u64 args[NARGS];
	__u64 aux[NARGS];
	__u64 ts_enter;
	__u64 bytes;      /* payload bytes emitted for this call */
	__u64 lost_bytes; /* drop: data bytes of this call when it is lost */
	__s64 ret;        /* the result, while the exit copies run */
	__u32 ok;         /* ... and whether it is a success */
	__u32 nr;
	__u32 seq;
	__u32 entry_tid;
	__u32 nrec;
	__u32 ndefer;
	__u32 nvec[NSLOTS];
	__u8 status[NSLOTS];
	__u8 active;
	__u8 lost;
	__u8 c1_slot; /* emit_call1: the argument slot of the one chunk ... */
	__u8 refetch; /* string slots whose copy at entry faulted (read again: recover_inputs) */
	__u8 can_defer; /* sys_exit, throttle mode: a string that faults is read by user space */
	__u32 added_pages; /* pages added to the page cache during the call (see rec_call) */
	__u64 c1_ptr; /* ... its address and length */
	__u64 c1_len;
	__u64 avail;  /* unconsumed ring bytes after this call's records, when known (else 0) */
	/* Who made the call, read from the task once per call record (load_ident): the verifier
	 * checks each load through a task pointer at some cost, so they are in one place. */
	__u32 id_tid;
	__u32 id_tgid;
	__u32 id_ppid;
	__u32 id_uid;
	__u32 id_gid;
	__u32 id_pgid;
	__u32 id_sid;
	__u32 id_pad;
	struct walk w;
	/* mmap pages: the thread's last fault in a recorded file mapping, finished at its next
	 * fault, system call or exit (the fault has been handled by then): the page of a read
	 * fault is recorded then (it is mapped), and the neighbours of the faulting page in its
	 * large folio that the fault mapped with it are taken (see finish_fault). */
	__u64 pend_addr;    /* PK_READ: the page still to record (0 once recorded) */
	__u64 pend_page;    /* the faulting page */
	__u64 pend_off;
	__u64 pend_ino;
	__u64 vm_start;     /* the mapping it is in */
	__u64 vm_end;
	__u64 vm_pgoff;
	__u64 pend_mapping; /* its file's struct address_space */
	__u64 pend_folio;   /* PK_WRITE: the folio of the page when the fault began (0: none) */
	__u64 pend_bits[8]; /* ... and which of its pages were mapped then (bit i: page i) */
	__u32 pend_dev;
	__u32 pend_flags;   /* DP_* */
	__u8 pend_kind;     /* PK_* */
	__u8 pend_around;   /* PK_READ: the fault-around reported the faulting page's range */
	__u8 nretry;        /* faults whose mapping could not be looked up yet (retry[]) */
	__u8 pad1;
	/* Those faults: page address | RT_* flags, classified at the next system call. */
	__u64 retry[4];
	/* A string chunk is read here first (its length is unknown until read), then output. */
	struct rec_data sh;
	__u8 sbuf[2 * SCHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOST_SLOTS);
	__type(key, __u32);
	__type(value, struct lost_slot);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* mmap pages: a page of a process's shared file mapping. */
struct page_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

/* A written page: its offset in the file and the file's identity (the mapping may be gone,
 * and its descriptor closed and reused, by the flush point). */
struct dirty_page {
	__u64 off;
	__u64 ino;
	__u32 dev;
	__u32 flags; /* DP_* */
};
/* A file whose pages are never written back (tmpfs, shmem): msync leaves them writable, so
 * they stay in the table after it (later writes take no fault). */
#define DP_NOWB 1

/* Pages written through a shared file mapping, waiting for a flush point (munmap, msync,
 * mremap, exit_group, execve, process exit). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct page_key);
	__type(value, struct dirty_page);
} dirty SEC(".maps");

/* Pages of a large folio that a write fault of one of them mapped writable (see
 * walk_folio): one entry per fault, keyed by its first page, a bit per page. (An entry per
 * page would need hundreds of element allocations in one program run, more than the hash
 * map's per-CPU cache holds: they failed.) Flushed with `dirty`. */
struct dirty_run {
	__u64 off; /* the file offset of the key's page */
	__u64 ino;
	__u32 dev;
	__u32 npages;
	__u32 flags; /* DP_* */
	__u32 pad;
	__u64 bits[8]; /* bit i: the page at key.addr + i * 4096 */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct page_key);
	__type(value, struct dirty_run);
} dirty_runs SEC(".maps");

/* What the mmap page records know of each process (`procmm`, by tgid):
 *
 * - dirty, seen: its entries in `dirty` and `seen`. Flush points (munmap, msync, mremap,
 *   execve, exit) walk those maps only for a process that has some: a walk visits every
 *   bucket of the map (~4 ms here), and programs that never map a file shared (nearly all,
 *   malloc's munmaps included) must not pay it per call. Counts go up on each insert and
 *   down on each delete, so they are never below the number of entries.
 * - state: whether it can have shared file mappings, so that its page faults need looking
 *   at: MS_CLEAN after an exec (a new address space holds none) until it calls mmap with
 *   MAP_SHARED on a descriptor (or shmat): MS_SHARED. Children inherit the state. Processes
 *   of state 0 (attached with -p, already running in a --cgroup) are looked at always.
 *   Looking up a fault's mapping (bpf_find_vma) costs ~4 us per fault in this VM (its mmap
 *   lock is released through an irq_work, a self-interrupt), which made every exec'd
 *   program start 0.65 ms slower. */
#define MS_CLEAN 1
#define MS_SHARED 2
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_MUNMAP 11
#define NR_MREMAP 25
#define NR_SHMAT 30
#define NR_SHMDT 67
#define NR_REMAP_FILE_PAGES 216
#define MAP_SHARED_BIT 0x01 /* MAP_SHARED and MAP_SHARED_VALIDATE (0x03) */
#define MAP_ANONYMOUS 0x20
#define MAP_DENYWRITE 0x0800 /* ignored by the kernel; glibc's ld.so maps every ELF segment so */
#define PROT_EXEC 0x4
#define NR_MSYNC 26

/* struct tstate.pend_kind */
#define PK_NONE 0
#define PK_READ 1
#define PK_WRITE 2
/* struct tstate.retry[]: the page's address with these flags */
#define RT_WRITE 1
#define RT_PROT 2

struct proc_mm {
	__u64 dirty;
	__u64 seen;
	__u8 state;
	__u8 pad[3];
	/* The shared file mapping the process's last classified fault was in. bpf_find_vma
	 * answers -EBUSY until the irq_work releasing its mmap lock has run (on this VM: the next
	 * tick), so a second fault soon after the first could not be classified and its page was
	 * silently missing (a write to page 2 then page 0 recorded only page 2). Faults inside
	 * this mapping need no lookup. Cleared before any call that changes the mappings. */
	__u32 c_valid;
	__u64 c_start;
	__u64 c_end;
	__u64 c_pgoff;
	__u64 c_ino;
	__u64 c_dev;
	__u64 c_mapping;
	__u32 c_kind;
	__u32 c_flags;
	/* The last mapping a fault was found in that is not recorded (anonymous memory, program
	 * text): a burst of faults there (a new heap, a memset) needs no lookup either. */
	__u32 n_valid;
	__u64 n_start;
	__u64 n_end;
	/* Bumped whenever both are cleared: a lookup that raced with a change of the mappings
	 * does not store its (stale) answer. */
	__u64 gen;
	/* Where its `seen` entries are: the pages of [sr_start, sr_end), the span of the
	 * mappings pages were recorded in. Forgetting them deletes those pages one by one when
	 * the span is small, instead of walking the whole table (every bucket: milliseconds),
	 * which every program reading one file through a mapping paid at each munmap and exit
	 * (glibc maps gconv-modules.cache shared in every program that converts characters). */
	__u64 sr_start;
	__u64 sr_end;
};
#define FORGET_MAX 65536 /* pages deleted one by one at most; a larger range is walked */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct proc_mm);
} procmm SEC(".maps");

/* Entries inserted while `procmm` was full: from then on every flush point walks. */
__u64 uncounted = 0;

/* The process's entry, created if needed (NULL only when the map is full). */
/* The value a process's entry starts from: a global, not a zeroed struct on the stack of
 * every caller (that put ~130 bytes in the frames of the fault and exit paths, whose call
 * chains then passed the verifier's 512-byte stack). Never written. */
struct proc_mm proc_mm_zero;

static __always_inline struct proc_mm *proc_mm(__u32 tgid)
{
	struct proc_mm *m = bpf_map_lookup_elem(&procmm, &tgid);

	if (!m) {
		bpf_map_update_elem(&procmm, &tgid, &proc_mm_zero, BPF_NOEXIST);
		m = bpf_map_lookup_elem(&procmm, &tgid);
	}
	return m;
}

static __always_inline void set_mapstate(__u32 tgid, __u8 v)
{
	struct proc_mm *m = proc_mm(tgid);

	if (m)
		m->state = v;
}

/* Pages already recorded as read (until their range is unmapped). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 131072);
	__type(key, struct page_key);
	__type(value, __u8);
} seen SEC(".maps");

extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, __u32 off, __u32 size,
				      const void *unsafe_ptr) __ksym;

static __always_inline struct stats *st(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stats, &zero);
}

/* Ring wake-ups cost an irq_work and a scheduler wake-up each; by default the kernel sends one
 * whenever the consumer had caught up, i.e. for nearly every record when it keeps up. Records
 * are submitted without any: the consumer reads on its poll timeout (a few milliseconds),
 * except after a throttle stop (RK_STOP forces one). */
static __always_inline __u64 wakeup(void)
{
	return BPF_RB_NO_WAKEUP;
}

static __always_inline int is_target(__u32 tgid)
{
	if (tgid == self_tgid)
		return 0;
	if (use_cgroup)
		return bpf_current_task_under_cgroup(&cgroups, 0) == 1;
	return bpf_map_lookup_elem(&targets, &tgid) != 0;
}

/* `n` records of lost-table slot `slot` lost, `bytes` of data with them. */
static __always_inline void account_lost_n(__u32 slot, __u64 n, __u64 bytes)
{
	struct lost_slot *l = bpf_map_lookup_elem(&lost, &slot);
	struct stats *s = st();
	__u64 now = bpf_ktime_get_ns();

	if (l) {
		if (!l->count)
			l->first_ns = now;
		__sync_fetch_and_add(&l->count, n);
		__sync_fetch_and_add(&l->bytes, bytes);
		l->last_ns = now;
	}
	if (s)
		__sync_fetch_and_add(&s->lost_calls, n);
}

static __always_inline void account_lost(__u32 slot, __u64 bytes)
{
	account_lost_n(slot, 1, bytes);
}

/* ---- the byte engine: buffers, iovecs, messages ------------------------------------------- */

#define VS_VEC 0
#define VS_SEG 1
#define VS_COPY 2

/* The call cannot be recorded whole (drop mode, or no room even for a defer record). */
static __always_inline void mark_lost(struct tstate *s, __u64 more)
{
	if (!s->lost) {
		s->lost = 1;
		s->lost_bytes = s->bytes;
	}
	s->lost_bytes += more;
}

static __always_inline int small_record(struct tstate *s, struct rec_data *h)
{
	if (bpf_ringbuf_output(&rb, h, sizeof(*h), BPF_RB_NO_WAKEUP))
		return -1;
	s->nrec++;
	return 0;
}

static __always_inline void fill_hdr(struct rec_data *h, struct tstate *s, __u32 kind)
{
	struct walk *w = &s->w;

	h->kind = kind;
	h->tid = s->entry_tid;
	h->tgid = bpf_get_current_pid_tgid() >> 32;
	h->seq = s->seq;
	h->slot = w->slot;
	h->flags = 0;
	h->seg = w->seg;
	h->vec = w->vec;
	h->len = 0;
	h->pad0 = 0;
	h->seg_len = w->seg_len;
	h->off = w->seg_off;
	h->addr = 0;
}

static __always_inline void stat_add(__u32 field, __u64 v)
{
	struct stats *sp = st();

	if (sp)
		__sync_fetch_and_add(&((__u64 *)sp)[field & 15], v);
}
#define STAT(f, v) stat_add(__builtin_offsetof(struct stats, f) / 8, v)

/* Tell user space to read [seg_base + seg_off, seg_base + seg_take) itself. */
static __always_inline void defer_rest(struct tstate *s)
{
	struct walk *w = &s->w;
	struct rec_data h;
	__u64 n = w->seg_take - w->seg_off;

	fill_hdr(&h, s, RK_DEFER);
	h.len = n;
	h.addr = w->seg_base + w->seg_off;
	w->seg_off = w->seg_take;
	if (small_record(s, &h)) {
		mark_lost(s, n);
		return;
	}
	s->ndefer++;
	STAT(deferred, 1);
	STAT(deferred_bytes, n);
}

/* Copy the next chunk of the current segment into the ring (or defer it, or count it lost).
 * Returns 1 when the walk must stop (a failed copy). */
static __always_inline int copy_chunk(struct tstate *s)
{
	struct walk *w = &s->w;
	struct rec_data h;
	struct bpf_dynptr dp;
	__u64 n = w->seg_take - w->seg_off;

	if (n > chunk_max)
		n = chunk_max;
	if (s->lost) {
		/* Already lost (drop mode): only count its bytes. */
		s->lost_bytes += w->seg_take - w->seg_off;
		w->seg_off = w->seg_take;
		return 0;
	}
	if (throttle && bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) + n + sizeof(h) > data_limit) {
		defer_rest(s);
		return 0;
	}
	fill_hdr(&h, s, RK_DATA);
	h.len = n;
	if (bpf_ringbuf_reserve_dynptr(&rb, sizeof(h) + n, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		if (throttle) {
			defer_rest(s);
		} else {
			mark_lost(s, w->seg_take - w->seg_off);
			w->seg_off = w->seg_take;
		}
		return 0;
	}
	if (n && bpf_probe_read_user_dynptr(&dp, sizeof(h), n, (void *)(w->seg_base + w->seg_off))) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		h.flags = DF_FAULT;
		h.len = 0;
		if (small_record(s, &h))
			mark_lost(s, 0);
		s->status[w->slot & 7] = ST_FAULT;
		STAT(faults, 1);
		return 1;
	}
	bpf_dynptr_write(&dp, 0, &h, sizeof(h), 0);
	bpf_ringbuf_submit_dynptr(&dp, BPF_RB_NO_WAKEUP);
	s->nrec++;
	s->bytes += n;
	w->seg_off += n;
	return 0;
}

static __always_inline int read_u64(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* One step of the walk over an AK_BUF / AK_IOV / AK_MSG / AK_MMSG argument: start a vector,
 * start a segment, or copy one chunk. */
static long vstep(__u64 i, void *ctx)
{
	struct tstate *s = *(struct tstate **)ctx;
	struct walk *w = &s->w;

	if (w->stage == VS_VEC) {
		if (w->vec >= w->nvec)
			return 1;
		w->seg = 0;
		w->nseg = 1;
		if (w->kind == AK_MMSG) {
			__u64 m = w->ptr + 64ULL * w->vec, iov = 0, n = 0;
			__u32 msg_len = 0;

			if (read_u64(&iov, m + 16) || read_u64(&n, m + 24) ||
			    bpf_probe_read_user(&msg_len, 4, (const void *)(m + 56))) {
				s->status[w->slot & 7] = ST_FAULT;
				return 1;
			}
			w->segs = iov;
			w->nseg = n > IOV_MAX ? IOV_MAX : n;
			if (w->trim)
				w->vec_left = w->vec < w->ok_msgs ? msg_len : 0;
			else
				w->vec_left = UNKNOWN_LEN;
		}
		w->stage = VS_SEG;
		return 0;
	}
	if (w->stage == VS_SEG) {
		__u64 base = w->ptr, len = w->left, left;

		if (w->seg >= w->nseg) {
			w->vec++;
			w->stage = VS_VEC;
			return 0;
		}
		if (w->kind == AK_UREG) {
			/* segment 0 the struct, 1 the array (see ureg_walk) */
			base = w->seg ? w->segs : w->ptr;
			len = w->seg ? w->vec_left : w->hdr;
		} else if (w->kind != AK_BUF) {
			__u64 at = w->kind == AK_MMSG ? w->segs + 16ULL * w->seg : w->ptr + 16ULL * w->vec;

			if (read_u64(&base, at) || read_u64(&len, at + 8)) {
				s->status[w->slot & 7] = ST_FAULT;
				return 1;
			}
		}
		left = w->kind == AK_MMSG ? w->vec_left : w->left;
		w->seg_base = base;
		w->seg_len = len;
		w->seg_take = len < left ? len : left;
		if (w->seg_take > LEN_CAP)
			w->seg_take = LEN_CAP;
		if (w->kind == AK_MMSG)
			w->vec_left -= w->seg_take;
		else
			w->left -= w->seg_take;
		w->seg_off = 0;
		w->stage = VS_COPY;
		if (w->seg_take)
			return 0;
		/* Nothing to take: one empty record still tells user space the segment's length. */
		if (!s->lost) {
			struct rec_data h;

			fill_hdr(&h, s, RK_DATA);
			if (small_record(s, &h))
				mark_lost(s, 0);
		}
		w->seg++;
		w->stage = VS_SEG;
		return 0;
	}
	if (w->seg_off < w->seg_take && copy_chunk(s))
		return 1;
	if (w->seg_off >= w->seg_take) {
		w->seg++;
		w->stage = VS_SEG;
	}
	return 0;
}

/* ---- the string engine: paths, C strings, argv/envp --------------------------------------- */

/* Output the string chunk in s->sbuf (n bytes, s->sh filled in) with its header: one record
 * of the call, or lost bytes (drop mode, full ring). Returns 0 when it went into the ring. */
static __always_inline int emit_sbuf(struct tstate *s, __u64 n)
{
	/* n <= SCHUNK already: the mask lets the verifier see that the output stays inside the
	 * string buffer (which is twice SCHUNK for that reason). */
	n &= 2 * SCHUNK - 1;
	if (s->lost || bpf_ringbuf_output(&rb, &s->sh, sizeof(s->sh) + n, BPF_RB_NO_WAKEUP)) {
		mark_lost(s, n);
		return -1;
	}
	s->nrec++;
	s->bytes += n;
	return 0;
}

/* One step of the walk over an AK_STR / AK_STRV argument: fetch the next string pointer
 * (AK_STRV, stage 1), or read and output one chunk of the current string. */
static long sstep(__u64 i, void *ctx)
{
	struct tstate *s = *(struct tstate **)ctx;
	struct walk *w = &s->w;
	__u32 n, end = 1, trunc = 0;
	long r;

	if (w->stage) {
		__u64 p = 0;

		if (w->vec >= MAX_STRV) {
			s->status[w->slot & 7] = ST_TRUNC;
			return 1;
		}
		if (read_u64(&p, w->ptr + 8ULL * w->vec)) {
			s->status[w->slot & 7] = ST_FAULT;
			STAT(faults, 1);
			return 1;
		}
		if (!p)
			return 1;
		w->seg_base = p;
		w->seg_off = 0;
		w->stage = 0;
	}
	r = bpf_probe_read_user_str(s->sbuf, SCHUNK, (const void *)(w->seg_base + w->seg_off));
	if (r <= 0 && s->can_defer && w->kind == AK_STR) {
		/* Not paged in: the kernel never read it (a call that failed first, as memfd_create
		 * with bad flags does). User space reads it, paging it in, while the thread is
		 * stopped: what the ptrace recorder reads too. */
		fill_hdr(&s->sh, s, RK_DEFER);
		s->sh.flags = DF_STR;
		s->sh.addr = w->seg_base + w->seg_off;
		s->sh.len = w->max > w->seg_off ? w->max - w->seg_off : 0;
		if (s->lost || small_record(s, &s->sh)) {
			mark_lost(s, 0);
		} else {
			s->ndefer++;
			STAT(deferred, 1);
		}
		w->vec++;
		return 1;
	}
	if (r <= 0) {
		fill_hdr(&s->sh, s, RK_DATA);
		s->sh.flags = DF_FAULT;
		if (!s->lost && small_record(s, &s->sh))
			mark_lost(s, 0);
		s->status[w->slot & 7] = ST_FAULT;
		STAT(faults, 1);
		return 1;
	}
	n = r;
	if (n >= SCHUNK) {
		/* No NUL before the chunk's last byte (bpf_probe_read_user_str wrote its own there):
		 * keep SCHUNK - 1 bytes; the next read starts at the byte that was replaced. */
		n = SCHUNK - 1;
		end = 0;
	}
	if (w->seg_off + n >= w->max) {
		if (w->seg_off + n > w->max || !end)
			trunc = 1;
		n = w->max - w->seg_off;
	}
	fill_hdr(&s->sh, s, RK_DATA);
	s->sh.flags = end && !trunc ? DF_END : 0;
	s->sh.len = n;
	emit_sbuf(s, n);
	w->seg_off += n;
	if (trunc) {
		s->status[w->slot & 7] = ST_TRUNC;
		return 1;
	}
	if (!end)
		return 0;
	w->vec++;
	if (w->kind == AK_STR)
		return 1;
	w->stage = 1;
	return 0;
}

/* ---- arguments ---------------------------------------------------------------------------- */

static __always_inline __u64 eval_len(struct tstate *s, const struct arg_rule *a, __s64 ret)
{
	__u64 v;
	__u32 d = 0;
	__u32 k = a->len_arg;

	switch (a->len_kind) {
	case LK_ARG:
		if (k >= NARGS)
			return UNKNOWN_LEN;
		v = s->args[k];
		break;
	case LK_RET:
		if (ret < 0)
			return UNKNOWN_LEN;
		v = ret;
		break;
	case LK_FIXED:
		v = a->size;
		break;
	case LK_RET_TIMES:
		if (ret < 0)
			return UNKNOWN_LEN;
		v = (__u64)ret * a->size;
		break;
	case LK_DEREF:
		if (k >= NARGS || !s->args[k] ||
		    bpf_probe_read_user(&d, 4, (const void *)s->args[k]))
			return UNKNOWN_LEN;
		v = d;
		break;
	default:
		return UNKNOWN_LEN;
	}
	return v > LEN_CAP ? LEN_CAP : v;
}

/* AK_UREG: io_uring_register's registered files or buffers (see ureg_layout): the struct at
 * p as segment 0, then the array it (or p) points to as segment 1, in whole elements. Sets up
 * the walk of vstep (the one of buffers) over them: returns 1 when there is something to walk.
 * Not inlined, and no bpf_loop of its own: its locals stay out of capture_slot's frame, and
 * the copy runs in vstep's, so that no call chain gets deeper than the buffers' (the verifier
 * refuses the programs past 512 bytes of stack over a chain, bpf_loop callbacks counted). */
static __noinline int ureg_walk(struct tstate *s, const struct arg_rule *a, __u64 p, __u32 i)
{
	struct walk *w = &s->w;
	__u32 op, cnt32 = 0, fl = 0;
	__u64 l, hdr, elem, cap, cnt, ptr = p, n;

	if (!s || !a || i >= NSLOTS)
		return 0;
	op = (__u32)s->args[a->size & 7] & ~(1U << 31);
	if (op >= UREG_OPS || a->len_arg >= NARGS || a->size >= NARGS) {
		s->status[i] = ST_NONE;
		return 0;
	}
	l = ureg_layout[op & (UREG_OPS - 1)];
	if (!l) {
		s->status[i] = ST_NONE;
		return 0;
	}
	hdr = l & 0xff;
	elem = (l >> 32) & 0xff;
	cap = (l >> 40) & 0xffff;
	cnt = s->args[a->len_arg & 7];
	w->nvec = 1;
	s->nvec[i] = 1;
	if (hdr) {
		__u8 at = (l >> 8) & 0xff, cat = (l >> 16) & 0xff, fat = (l >> 24) & 0xff;

		if (read_u64(&ptr, p + at) ||
		    (cat != UREG_NONE && bpf_probe_read_user(&cnt32, 4, (const void *)(p + cat))) ||
		    (fat != UREG_NONE && bpf_probe_read_user(&fl, 4, (const void *)(p + fat)))) {
			s->status[i] = ST_FAULT;
			return 0;
		}
		if (cat != UREG_NONE)
			cnt = cnt32;
		if ((fl & 1) || !ptr)
			elem = 0; /* sparse: no array */
	}
	n = !elem ? 0 : cnt > cap / elem ? cap / elem * elem : cnt * elem;
	if (!hdr && !n)
		return 0;
	w->hdr = hdr;
	w->segs = ptr;
	w->vec_left = n;
	w->seg = hdr ? 0 : 1;
	w->nseg = n ? 2 : 1; /* (an empty array: no record, as the ptrace recorder's) */
	w->stage = VS_SEG;
	return 1;
}

/* Copy argument slot `i` (an argument register, or XARG: the extra struct) of the current call
 * at this stage (s->ret, s->ok: the result and whether the call succeeded; 1 at entry).
 *
 * A global function (not static), like emit_page: the verifier checks it once, on its own,
 * instead of once per call site in each caller's state. That took the three large programs'
 * verification from ~93 ms to ~31 ms with full buffers (~50 to ~24 ms with --data none), most
 * of the recorder's start. Its pointer arguments are then plain memory that may be NULL, hence
 * the checks. */
__noinline int capture_slot(struct tstate *s, const struct arg_rule *ap, __u64 p, __u32 i)
{
	struct arg_rule a;
	struct walk *w;
	__s64 ret;

	if (!s || !ap)
		return 0;
	a = *ap;
	w = &s->w;
	ret = s->ret;
	int ok = s->ok;
	__u64 len;
	int trim = (a.flags & (AF_OUT | AF_TRIM_RET)) && ok && ret >= 0;

	i &= 7;
	if (i >= NSLOTS)
		return 0;
	if (!p) {
		s->status[i] = ST_ABSENT;
		return 0;
	}
	if ((a.flags & AF_OUT) && !ok) {
		s->status[i] = ST_ABSENT;
		return 0;
	}
	if (a.kind == AK_DEREF32) {
		__u32 v = 0;

		if (i >= NARGS || bpf_probe_read_user(&v, 4, (const void *)p)) {
			s->status[i] = ST_FAULT;
			return 0;
		}
		s->aux[i] = v;
		s->status[i] = ST_OK;
		return 0;
	}
	if ((a.flags & AF_BULK) && BULK_NONE(a.flags)) {
		s->status[i] = ST_NOT_CAPTURED;
		return 0;
	}
	s->status[i] = ST_OK;
	__builtin_memset(w, 0, sizeof(*w));
	w->ptr = p;
	w->slot = i;
	w->kind = a.kind;
	w->left = UNKNOWN_LEN;
	if (a.kind == AK_STR || a.kind == AK_STRV) {
		w->seg_base = p;
		w->max = a.size;
		w->stage = a.kind == AK_STRV;
		bpf_loop(MAX_STEPS, sstep, &s, 0);
		s->nvec[i] = w->vec;
		return 0;
	}
	switch (a.kind) {
	case AK_BUF:
		len = eval_len(s, &a, ret);
		if (len == UNKNOWN_LEN) {
			s->status[i] = ST_UNKNOWN_LEN;
			return 0;
		}
		if ((a.flags & AF_TRIM_RET) && trim && (__u64)ret < len)
			len = ret;
		w->nvec = 1;
		w->left = len;
		if (len <= chunk_max) {
			/* The common case, one chunk: what one walk of vstep would do, without it. */
			w->seg_base = p;
			w->seg_len = len;
			w->seg_take = len;
			s->nvec[i] = 1;
			if (len) {
				copy_chunk(s);
			} else {
				struct rec_data h;

				fill_hdr(&h, s, RK_DATA);
				if (!s->lost && small_record(s, &h))
					mark_lost(s, 0);
			}
			return 0;
		}
		break;
	case AK_MSG: {
		__u64 iov = 0, n = 0;

		if (read_u64(&iov, p + 16) || read_u64(&n, p + 24)) {
			s->status[i] = ST_FAULT;
			return 0;
		}
		w->ptr = iov;
		w->nvec = n > IOV_MAX ? IOV_MAX : n;
		if (trim)
			w->left = ret;
		break;
	}
	case AK_IOV:
		if (a.len_arg >= NARGS)
			return 0;
		w->nvec = s->args[a.len_arg & 7];
		if (w->nvec > IOV_MAX)
			w->nvec = IOV_MAX;
		if (trim)
			w->left = ret;
		break;
	case AK_MMSG:
		if (a.len_arg >= NARGS)
			return 0;
		w->nvec = s->args[a.len_arg & 7];
		if (w->nvec > IOV_MAX)
			w->nvec = IOV_MAX;
		w->trim = trim;
		w->ok_msgs = ret;
		break;
	case AK_UREG:
		if (!ureg_walk(s, ap, p, i))
			return 0;
		break;
	default:
		s->status[i] = ST_NONE;
		return 0;
	}
	bpf_loop(MAX_STEPS, vstep, &s, 0);
	/* (AK_UREG: one vector, also when its walk stopped at a fault) */
	s->nvec[i] = w->kind == AK_UREG ? 1 : w->vec;
	return 0;
}

struct actx {
	struct tstate *s;
	struct syscall_rule *r;
	__u8 mask; /* the slots to walk */
};

static long arg_step(__u64 i, void *ctx)
{
	struct actx *c = ctx;
	struct syscall_rule *r = c->r;
	struct tstate *s = c->s;
	/* 64-bit, so that clang bounds-checks the very register the accesses use (a 32-bit copy
	 * gets checked instead, and the verifier sees an unbounded index). */
	__u64 k = i;

	if (k >= NARGS)
		return 1;
	if (!(c->mask & (1 << k)))
		return 0;
	capture_slot(s, &r->args[k], s->args[k], k);
	return 0;
}

static __always_inline void capture_args(struct tstate *s, struct syscall_rule *r, __s64 ret, int ok,
					 int entry)
{
	__u8 mask = entry ? r->entry_mask : r->exit_mask;
	struct actx c = {.s = s, .r = r, .mask = mask};
	__u32 top = 0;

	s->ret = ret;
	s->ok = ok;
	if (data_none && (mask & r->bulk_mask)) {
		/* --data none: a bulk argument gets its status only (capture_slot's first checks),
		 * here rather than through bpf_loop and a subprogram call for each. */
		__u8 bulk = mask & r->bulk_mask;

		mask &= ~bulk;
#pragma unroll
		for (int k = 0; k < NARGS; k++) {
			if (!(bulk & (1 << k)))
				continue;
			if (!s->args[k] || ((r->args[k].flags & AF_OUT) && !ok))
				s->status[k] = ST_ABSENT;
			else
				s->status[k] = ST_NOT_CAPTURED;
		}
		c.mask = mask;
	}
	/* Walk the argument slots up to the last one with something to copy (none for most
	 * calls at entry, and for close, fsync, lseek...). */
	for (int j = 0; j < NARGS; j++)
		if (mask >> j)
			top = j + 1;
	if (top)
		bpf_loop(top, arg_step, &c, 0);
	if (!entry && (r->flags & RF_XARG) && r->xarg < NARGS && r->xarg_cond < NARGS) {
		__u64 cond = s->args[r->xarg_cond & 7];

		int on;

		if (r->flags & RF_XARG_EQ)
			on = (__u32)cond == (__u32)r->xarg_mask || (__u32)cond == (__u32)(r->xarg_mask >> 32);
		else
			on = cond < 64 && (r->xarg_mask & (1ULL << cond));
		__u64 p = s->args[r->xarg & 7];
		__u32 size = r->xarg_size;

		if (r->flags & RF_XARG_MSG) {
			/* struct msghdr: msg_control at +32, msg_controllen at +40 */
			__u64 ctl = 0, clen = 0;

			on = s->ok && p && !read_u64(&ctl, p + 32) && !read_u64(&clen, p + 40) && ctl &&
			     clen;
			p = ctl;
			if (clen < size)
				size = clen;
		}
		if (on) {
			struct arg_rule a = {.kind = AK_BUF, .len_kind = LK_FIXED, .size = size};

			capture_slot(s, &a, p, XARG);
		}
	}
}

/* ---- inputs that faulted at entry ---------------------------------------------------------- */

/* Start a new copy of slot k: a DF_RESET record (user space drops what it had for the slot). */
static __always_inline int reset_slot(struct tstate *s, __u32 k)
{
	struct rec_data h;

	s->w.slot = k;
	s->w.vec = 0;
	s->w.seg = 0;
	s->w.seg_len = 0;
	s->w.seg_off = 0;
	fill_hdr(&h, s, RK_DATA);
	h.flags = DF_RESET;
	if (s->lost || small_record(s, &h))
		return -1;
	s->status[k & 7] = 0;
	s->nvec[k & 7] = 0;
	return 0;
}

/* A failed exec (or any call whose string inputs faulted at entry): the old address space is
 * still there and the kernel has read what it could, so the pages are in: copy again. What
 * still faults the kernel could not read either. */
static __noinline int refetch_inputs(struct tstate *s, struct syscall_rule *r)
{
	if (!s || !r)
		return 0;
#pragma unroll
	for (int k = 0; k < NARGS; k++) {
		if (!(s->refetch & (1 << k)))
			continue;
		if (reset_slot(s, k))
			continue;
		capture_slot(s, &r->args[k], s->args[k], k);
		if (s->status[k] != ST_FAULT)
			STAT(inputs_recovered, 1);
	}
	s->refetch = 0;
	return 0;
}

struct flat_ctx {
	struct tstate *s;
	__u64 at;
	__u64 end;
};

/* One chunk of a flat string area (the new image's argv or envp) into the ring. */
static long flat_step(__u64 i, void *ctx)
{
	struct flat_ctx *c = ctx;
	struct tstate *s = c->s;
	__u64 n = c->end - c->at;

	if (c->at >= c->end)
		return 1;
	if (n > SCHUNK)
		n = SCHUNK;
	n &= 2 * SCHUNK - 1;
	if (bpf_probe_read_user(s->sbuf, n, (const void *)c->at))
		return 1;
	fill_hdr(&s->sh, s, RK_DATA);
	s->sh.flags = DF_FLAT | (c->at + n >= c->end ? DF_END : 0);
	s->sh.len = n;
	if (emit_sbuf(s, n))
		return 1;
	s->w.seg_off += n;
	c->at += n;
	return 0;
}

static __noinline int recover_exec_inputs(struct tstate *s, struct linux_binprm *bprm)
{
	struct syscall_rule *r;
	struct mm_struct *mm;
	__u32 nr, strv = 0;

	if (!s || !bprm)
		return 0;
	nr = s->nr;
	r = bpf_map_lookup_elem(&rules, &nr);
	mm = bpf_get_current_task_btf()->mm;
	if (!r || !mm)
		return 0;
#pragma unroll
	for (int k = 0; k < NARGS; k++) {
		__u8 kind = r->args[k].kind;

		if (kind == AK_STRV)
			strv++;
		if (!(s->refetch & (1 << k)) || reset_slot(s, k))
			continue;
		if (kind == AK_STR) {
			const char *name = BPF_CORE_READ(bprm, filename);
			long n = bpf_probe_read_kernel_str(s->sbuf, SCHUNK, name);

			if (n <= 0) {
				s->status[k] = ST_FAULT;
				continue;
			}
			fill_hdr(&s->sh, s, RK_DATA);
			s->sh.flags = DF_END | DF_BPRM;
			s->sh.len = n;
			if (emit_sbuf(s, n))
				continue;
			s->nvec[k] = 1;
			s->status[k] = ST_OK;
			STAT(inputs_recovered, 1);
		} else if (kind == AK_STRV) {
			struct flat_ctx c = {.s = s};

			c.at = strv == 1 ? BPF_CORE_READ(mm, arg_start) : BPF_CORE_READ(mm, env_start);
			c.end = strv == 1 ? BPF_CORE_READ(mm, arg_end) : BPF_CORE_READ(mm, env_end);
			s->w.slot = k;
			s->w.seg_off = 0;
			bpf_loop(1 << 10, flat_step, &c, 0);
			s->status[k] = c.at >= c.end ? ST_OK : ST_FAULT;
			if (c.at >= c.end)
				STAT(inputs_recovered, 1);
		}
	}
	s->refetch = 0;
	return 0;
}

/* ---- records ------------------------------------------------------------------------------ */

/* The caller's identity, as of now (after the call: setuid, setsid... show their effect). */
static __always_inline void load_ident(struct tstate *s, struct task_struct *t)
{
	/* Through a read-only untrusted alias (bpf_rdonly_cast, a register move once verified):
	 * the loads are the same, but the verifier does not check whether each pointer it
	 * reaches is a trusted one, a search of the kernel's BTF by name per pointer field per
	 * program that cost several milliseconds of start-up each. */
	struct task_struct *u = bpf_core_cast(t, struct task_struct);

	s->id_tid = u->pid;
	s->id_tgid = u->tgid;
	s->id_ppid = u->real_parent->tgid;
	s->id_uid = u->cred->uid.val;
	s->id_gid = u->cred->gid.val;
	s->id_pgid = u->signal->pids[PIDTYPE_PGID]->numbers[0].nr;
	s->id_sid = u->signal->pids[PIDTYPE_SID]->numbers[0].nr;
}

/* The fields of a call record (any kind); load_ident(s, ...) first. */
static __always_inline void fill_call(struct rec_call *c, __u32 kind, struct tstate *s, __s64 ret,
				      __u32 flags)
{
	c->kind = kind;
	c->tid = s->id_tid;
	c->seq = s->seq;
	c->entry_tid = s->entry_tid;
	c->tgid = s->id_tgid;
	c->ppid = s->id_ppid;
	c->uid = s->id_uid;
	c->gid = s->id_gid;
	c->pgid = s->id_pgid;
	c->sid = s->id_sid;
	c->nr = s->nr;
	c->flags = flags;
	c->ts_enter = s->ts_enter;
	c->ts_exit = (flags & CF_NO_RETURN) ? 0 : bpf_ktime_get_ns();
	c->ret = ret;
	__builtin_memcpy(c->args, s->args, sizeof(c->args));
	__builtin_memcpy(c->aux, s->aux, sizeof(c->aux));
	__builtin_memcpy(c->nvec, s->nvec, sizeof(c->nvec));
	__builtin_memcpy(c->status, s->status, sizeof(c->status));
	c->pad0 = 0;
	c->nrec = s->nrec;
	c->added_pages = s->added_pages;
}

/* Returns 1 when the call record went into the ring. */
static __always_inline int emit_call(struct tstate *s, __s64 ret, __u32 flags)
{
	struct rec_call *c;

	if (s->lost) {
		account_lost(s->nr, s->lost_bytes);
		return 0;
	}
	c = bpf_ringbuf_reserve(&rb, sizeof(*c), 0);
	if (!c) {
		/* Its data records (if any) stay orphans; user space drops them by seq. */
		account_lost(s->nr, s->bytes);
		return 0;
	}
	fill_call(c, RK_CALL, s, ret, flags);
	bpf_ringbuf_submit(c, wakeup());
	return 1;
}

/* The common bulk call (read, write, pread64, pwrite64, recvfrom, ...): one buffer copied at
 * exit, small enough for one chunk. Its data and its call go into ONE ring record (RK_CALL1):
 * one reservation and one submission instead of two, and no argument walk. Measured with
 * fio's 4 KiB writes, the data record's own reservation cost ~250 ns of sys_exit's ~830.
 *
 * Up to C1_MAX bytes, the record is reserved with a fixed capacity (the next power of two,
 * from C1_MIN): bpf_ringbuf_reserve gives a pointer the headers are written through directly,
 * where a variable-size dynptr reservation needs them built aside and copied in with
 * bpf_dynptr_write (tracing programs may not write through dynptr slices). That copy cost
 * ~130 ns of a 4 KiB write's ~980 ns sys_exit here. The capacity past the payload is left
 * unwritten (user space reads `len` bytes); it costs ring space, at most as much again as the
 * payload, never a copy. Larger buffers take the dynptr reservation of their exact size. */
#define C1_MIN 256
#define C1_MAX 32768

struct call1_hdr {
	struct rec_call c;
	struct rec_data h;
};

static __always_inline void fill_call1_data(struct rec_data *h, struct tstate *s, __u32 k,
					    __u64 len)
{
	h->kind = RK_DATA;
	h->tid = s->entry_tid;
	h->tgid = s->id_tgid;
	h->seq = s->seq;
	h->slot = k;
	h->flags = 0;
	h->seg = 0;
	h->vec = 0;
	h->len = len;
	h->pad0 = 0;
	h->seg_len = len;
	h->off = 0;
	h->addr = 0;
}

static __always_inline void call1_done(struct tstate *s, __u32 k, __u64 len)
{
	s->status[k & 7] = ST_OK;
	s->nvec[k & 7] = 1;
	s->nrec++;
	s->bytes += len;
}

/* The RK_CALL1 record of s->c1_* in a reservation of `cap` payload bytes (a constant at each
 * call site, as bpf_ringbuf_reserve requires). Returns 1 when recorded, 0 when nothing was. */
static __noinline int call1_fixed(struct tstate *s, __u32 cap)
{
	struct call1_hdr *rec;
	__u64 len = s->c1_len;
	__u32 k = s->c1_slot;

	if (len > cap || k >= NARGS)
		return 0;
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec) + cap, 0);
	if (!rec)
		return 0;
	if (bpf_probe_read_user((void *)(rec + 1), len, (void *)s->c1_ptr)) {
		/* The general path records the fault. No wake-up for a discarded record. */
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return 0;
	}
	fill_call1_data(&rec->h, s, k, len);
	call1_done(s, k, len);
	fill_call(&rec->c, RK_CALL1, s, s->ret, 0);
	bpf_ringbuf_submit(rec, wakeup());
	return 1;
}

/* Returns 1 when the call is recorded, 0 to take the general path (then nothing it did is
 * visible: at most a copy into a discarded reservation). */
static __noinline int emit_call1(struct tstate *s, struct syscall_rule *r, __s64 ret, int ok)
{
	__u8 mask = r->exit_mask;
	struct bpf_dynptr dp;
	/* Large buffers: the two headers are built in the thread's string buffer (task-local,
	 * idle here; too big for the stack), then written in front of the payload. */
	struct call1_hdr *hd = (void *)s->sbuf;
	struct arg_rule a;
	__u64 p, len, size, cap = C1_MIN;
	int trim;
	__u32 k = NARGS;

	if (data_none || s->lost || (r->flags & RF_XARG))
		return 0;
#pragma unroll
	for (int j = 0; j < NARGS; j++)
		if (mask == (1 << j))
			k = j;
	if (k >= NARGS)
		return 0; /* no exit buffer, or several */
	a = r->args[k];
	p = s->args[k];
	if (a.kind != AK_BUF || !p || ((a.flags & AF_OUT) && !ok) || BULK_NONE(a.flags))
		return 0;
	len = eval_len(s, &a, ret);
	if (len == UNKNOWN_LEN)
		return 0;
	trim = (a.flags & (AF_OUT | AF_TRIM_RET)) && ok && ret >= 0;
	if ((a.flags & AF_TRIM_RET) && trim && (__u64)ret < len)
		len = ret;
	if (!len || len > chunk_max || len > LEN_CAP)
		return 0;
	s->ret = ret;
	s->ok = ok;
	if (len <= C1_MAX) {
#pragma unroll
		for (int i = 0; i < 7; i++)
			if (cap < len)
				cap <<= 1;
		size = sizeof(*hd) + cap;
	} else {
		size = sizeof(*hd) + len;
	}
	if (throttle) {
		__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);

		if (avail + size > data_limit)
			return 0; /* the general path defers it */
		s->avail = avail + size;
	}
	if (len <= C1_MAX) {
		s->c1_slot = k;
		s->c1_ptr = p;
		s->c1_len = len;
		switch (cap) {
		case 256: return call1_fixed(s, 256);
		case 512: return call1_fixed(s, 512);
		case 1024: return call1_fixed(s, 1024);
		case 2048: return call1_fixed(s, 2048);
		case 4096: return call1_fixed(s, 4096);
		case 8192: return call1_fixed(s, 8192);
		case 16384: return call1_fixed(s, 16384);
		default: return call1_fixed(s, C1_MAX);
		}
	}
	if (bpf_ringbuf_reserve_dynptr(&rb, size, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		return 0;
	}
	if (bpf_probe_read_user_dynptr(&dp, sizeof(*hd), len, (void *)p)) {
		/* the general path records the fault */
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		return 0;
	}
	fill_call1_data(&hd->h, s, k, len);
	call1_done(s, k, len);
	fill_call(&hd->c, RK_CALL1, s, ret, 0);
	bpf_dynptr_write(&dp, 0, hd, sizeof(*hd), 0);
	bpf_ringbuf_submit_dynptr(&dp, wakeup());
	return 1;
}

static __always_inline void emit_task(__u32 kind, __u32 tid, __u32 tgid, __u32 ctid, __u32 ctgid,
				      __u32 group_dead)
{
	struct rec_task *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r)
		return;
	r->kind = kind;
	r->tid = tid;
	r->tgid = tgid;
	r->child_tid = ctid;
	r->child_tgid = ctgid;
	r->group_dead = group_dead;
	bpf_ringbuf_submit(r, 0);
}

/* Throttle: stop this process when the ring is filling up, or when user space has deferred
 * data to read from it. */
static __always_inline void maybe_stop(__u32 tgid, __u32 ndefer, __u64 avail)
{
	if (ndefer) {
		__u64 *d = bpf_map_lookup_elem(&defers, &tgid);

		if (d)
			__sync_fetch_and_add(d, ndefer);
	} else if ((avail ? avail : bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA)) <= high_wm) {
		/* `avail`: what emit_call1 saw just before its reservation, plus that reservation
		 * (records consumed since then only make it an overestimate: a stop a little early). */
		return;
	}
	/* To this thread, not the process: a process-directed SIGSTOP already pending (sent by
	 * another thread) is not queued again and may be taken by that other thread later, and
	 * this one would run on in user mode, reusing the buffer the recorder must still read.
	 * A thread-directed one stops this thread before it leaves the kernel (and the whole
	 * process with it, as any stop signal does). */
	bpf_send_signal_thread(SIGSTOP);
	__u64 now = bpf_ktime_get_ns();
	__u64 *since = bpf_map_lookup_elem(&stops, &tgid);

	if (!since)
		bpf_map_update_elem(&stops, &tgid, &now, BPF_NOEXIST);
	else if (*since == 0)
		/* A racing stop of another thread may have set it first: keep the earlier time. */
		__sync_val_compare_and_swap(since, 0, now);
	__sync_fetch_and_add(&throttle_gen, 1);
	STAT(throttle_stops, 1);
	/* Wake the consumer now: once it has drained the ring it resumes the process. */
	struct rec_task r = {.kind = RK_STOP, .tgid = tgid};

	bpf_ringbuf_output(&rb, &r, sizeof(r), BPF_RB_FORCE_WAKEUP);
}

static __always_inline void reset(struct tstate *s)
{
	__builtin_memset(s->aux, 0, sizeof(s->aux));
	__builtin_memset(s->nvec, 0, sizeof(s->nvec));
	__builtin_memset(s->status, 0, sizeof(s->status));
	s->bytes = 0;
	s->lost_bytes = 0;
	s->nrec = 0;
	s->ndefer = 0;
	s->lost = 0;
	s->avail = 0;
	s->refetch = 0;
	s->added_pages = 0;
}

/* ---- mmap pages ---------------------------------------------------------------------------- */

/* emit_page: also emit a PG_FAULT header when the page cannot be read (not sent). */
#define PG_ALWAYS 0x100

/* Record the page at `addr` (4 KiB) of the current process. Returns 0 when recorded, -1 when
 * its memory could not be read (then nothing is emitted unless PG_ALWAYS: a header with
 * PG_FAULT), -2 when the ring had no room (counted lost). */
/* (Global, see capture_slot.) */
__noinline int emit_page(__u32 flags, __u64 addr, __u64 off, __u64 ino, __u32 dev)
{
	struct rec_page h = {};
	struct bpf_dynptr dp;
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 slot = (flags & PG_WRITE) ? LOST_MMAP_WRITE : LOST_MMAP_READ;
	int always = flags & PG_ALWAYS;

	flags &= ~PG_ALWAYS;
	h.kind = RK_PAGE;
	h.tid = (__u32)pt;
	h.tgid = pt >> 32;
	h.flags = flags;
	h.ts = bpf_ktime_get_ns();
	h.addr = addr;
	h.off = off;
	h.ino = ino;
	h.dev = dev;
	if ((flags & PG_WRITE) ? data_none_in : data_none_out) {
		h.flags |= PG_NOT_CAPTURED;
		if (bpf_ringbuf_output(&rb, &h, sizeof(h), wakeup())) {
			account_lost(slot, 0);
			return -2;
		}
		return 0;
	}
	h.len = 4096;
	if (bpf_ringbuf_reserve_dynptr(&rb, sizeof(h) + 4096, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		account_lost(slot, 4096);
		return -2;
	}
	if (bpf_probe_read_user_dynptr(&dp, sizeof(h), 4096, (void *)addr)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		if (!always)
			return -1;
		h.flags |= PG_FAULT;
		h.len = 0;
		if (bpf_ringbuf_output(&rb, &h, sizeof(h), wakeup()))
			account_lost(slot, 4096);
		return -1;
	}
	bpf_dynptr_write(&dp, 0, &h, sizeof(h), 0);
	bpf_ringbuf_submit_dynptr(&dp, wakeup());
	STAT(pages, 1);
	return 0;
}

static __always_inline int is_seen(__u32 tgid, __u64 addr)
{
	struct page_key k = {.tgid = tgid, .addr = addr};

	return bpf_map_lookup_elem(&seen, &k) != 0;
}

/* The page at `addr` of the mapping [lo, hi) was recorded as read. */
/* (Global, see capture_slot.) */
__noinline int mark_seen(__u32 tgid, __u64 addr, __u64 lo, __u64 hi)
{
	struct page_key k = {.tgid = tgid, .addr = addr};
	__u8 one = 1;
	struct proc_mm *pc;

	if (bpf_map_update_elem(&seen, &k, &one, BPF_NOEXIST))
		return 0;
	pc = proc_mm(tgid);
	if (!pc) {
		__sync_fetch_and_add(&uncounted, 1);
		return 0;
	}
	__sync_fetch_and_add(&pc->seen, 1);
	if (pc->sr_end <= pc->sr_start) {
		pc->sr_start = lo;
		pc->sr_end = hi;
	} else {
		if (lo < pc->sr_start)
			pc->sr_start = lo;
		if (hi > pc->sr_end)
			pc->sr_end = hi;
	}
	return 0;
}

/* A page written through a shared file mapping, to be recorded at the next flush point.
 * Returns 1 when it is new in the table. A full table counts the page lost. */
/* (Global, see capture_slot.) */
__noinline int mark_dirty(__u32 tgid, __u64 page, __u64 off, __u64 ino, __u64 dev_flags)
{
	struct page_key k = {.tgid = tgid, .addr = page};
	struct dirty_page d = {.off = off, .ino = ino, .dev = dev_flags, .flags = dev_flags >> 32};

	if (bpf_map_update_elem(&dirty, &k, &d, BPF_NOEXIST) == 0) {
		struct proc_mm *pc = proc_mm(tgid);

		if (pc)
			__sync_fetch_and_add(&pc->dirty, 1);
		else
			__sync_fetch_and_add(&uncounted, 1);
		return 1;
	}
	if (!bpf_map_lookup_elem(&dirty, &k))
		account_lost(LOST_MMAP_WRITE_UNSEEN, 4096); /* the table is full */
	return 0;
}

/* Whether the page at `addr` is mapped in the current process (a read that cannot fault). */
static __always_inline int mapped(__u64 addr)
{
	__u8 c;

	return bpf_probe_read_user(&c, 1, (const void *)addr) == 0;
}

/* ---- large folios ----------------------------------------------------------------------------
 *
 * A fault that finds its page in a large folio may map the whole folio: since Linux 6.18,
 * finish_fault() maps every page of the folio that lies in the mapping and in the faulting
 * page's page table (mm/memory.c; before, only shmem/tmpfs), with write permission and dirty
 * when the fault is a write, and the pages without a fault of their own. The kernel writes the
 * whole folio back. So the pages the fault mapped are found from the folio: the one holding
 * the page in the file's page cache (mapping->i_pages, an xarray of folios by page index). */

#define XA_CHUNK_SHIFT 6
#define XA_CHUNK_MASK 63
#define XA_MAX_DEPTH 11 /* 64-bit indices, 6 bits per level */
#define FOLIO_MAX 512   /* pages in the largest page cache folio (a PMD's: MAX_PAGECACHE_ORDER) */
#define PMD_SPAN (512ULL << 12)

/* An xarray entry: a node (internal, above 4096), a sibling (internal, the canonical slot's
 * offset below 64: a multi-index entry's other slots), another internal entry (retry, zero),
 * a value (bit 0: shadow entries of evicted pages), or a pointer (a folio). */
static __always_inline int xa_is_internal(__u64 e) { return (e & 3) == 2; }
static __always_inline int xa_is_node(__u64 e) { return xa_is_internal(e) && e > 4096; }
static __always_inline int xa_is_sibling(__u64 e) { return xa_is_internal(e) && (e >> 2) < 64; }

/* struct tstate.pend_folio of a fault found late (retry_faults): what was mapped before it is
 * not known. */
#define FOLIO_UNKNOWN (~0ULL)

struct folio_ext {
	__u64 folio; /* 0: no folio holds the page */
	__u64 index; /* the page index of its first page */
	__u64 nr;    /* its pages */
};

/* The folio of the page cache of `mapping` holding page `index`, looked up as xa_load()
 * does (without its RCU: a concurrent change shows as an inconsistent answer, checked at the
 * end). Returns 0 (out->folio 0 when none holds it) or -1 when it could not be told. */
__noinline int find_folio(__u64 mapping, __u64 index, struct folio_ext *out)
{
	struct address_space *as = (struct address_space *)mapping;
	__u32 soff = bpf_core_field_offset(struct xa_node, slots);
	__u64 e = 0, base = 0;
	struct folio *f;

	if (!out || !as)
		return -1;
	out->folio = 0;
	out->index = 0;
	out->nr = 0;
	e = (__u64)BPF_CORE_READ(as, i_pages.xa_head);
	if (!xa_is_node(e) && index != 0)
		return 0; /* a single entry only holds index 0 */
	for (int lvl = 0; lvl < XA_MAX_DEPTH && xa_is_node(e); lvl++) {
		__u64 n = e - 2, off;
		__u8 shift = 0;

		if (bpf_probe_read_kernel(&shift, 1,
					  (void *)n + bpf_core_field_offset(struct xa_node, shift)))
			return -1;
		if (shift >= 64)
			return -1;
		off = index >> shift;
		if (lvl == 0 && off > XA_CHUNK_MASK)
			return 0; /* beyond the tree */
		off &= XA_CHUNK_MASK;
		if (bpf_probe_read_kernel(&e, 8, (void *)(n + soff + off * 8)))
			return -1;
		if (xa_is_sibling(e)) {
			off = e >> 2;
			if (bpf_probe_read_kernel(&e, 8, (void *)(n + soff + (off & XA_CHUNK_MASK) * 8)))
				return -1;
		}
	}
	if (xa_is_node(e))
		return -1;
	if (!e || (e & 1))
		return 0; /* empty, or a shadow entry: nothing in the cache */
	if (xa_is_internal(e))
		return -1; /* retry: being changed */
	f = (struct folio *)e;
	if ((__u64)BPF_CORE_READ(f, mapping) != mapping)
		return -1;
	base = BPF_CORE_READ(f, index);
	out->nr = folio_pages(f);
	if (index < base || index >= base + out->nr || out->nr > FOLIO_MAX)
		return -1;
	out->folio = e;
	out->index = base;
	return 0;
}

/* Pages of a folio a write fault mapped with its own: into `dirty_runs` (merged with an
 * entry for the same first page). A full table counts them lost. */
/* (Not inlined: its locals in walk_folio's frame were part of the fault path's stack.) */
static __noinline void add_run(__u32 tgid, __u64 base, struct dirty_run *run)
{
	struct page_key k = {.tgid = tgid, .addr = base};
	struct dirty_run *old;

	if (bpf_map_update_elem(&dirty_runs, &k, run, BPF_NOEXIST) == 0) {
		struct proc_mm *pc = proc_mm(tgid);

		if (pc)
			__sync_fetch_and_add(&pc->dirty, 1);
		else
			__sync_fetch_and_add(&uncounted, 1);
		return;
	}
	old = bpf_map_lookup_elem(&dirty_runs, &k);
	if (!old) {
		__u64 n = 0;

#pragma unroll
		for (int w = 0; w < 8; w++)
			n += __builtin_popcountll(run->bits[w]);
		account_lost_n(LOST_MMAP_WRITE_UNSEEN, n, n * 4096); /* the table is full */
		return;
	}
#pragma unroll
	for (int w = 0; w < 8; w++)
		old->bits[w] |= run->bits[w];
	if (old->npages < run->npages)
		old->npages = run->npages;
}

/* The pages of a folio in the faulting page's mapping and page table. */
struct fwalk {
	struct tstate *s;
	struct folio_ext fx;
	__u64 lo; /* addresses [lo, hi): the mapping within the faulting page's page table */
	__u64 hi;
	__u32 tgid;
	__u32 added;
	__u32 mode;
	__u32 pad;
	__u64 base;            /* FW_WRITE: the address of the run's first page ... */
	struct dirty_run *run; /* ... and the run (this CPU's run_scratch) */
};

/* walk_folio's run, off the stack: with fw_step's frame (a bpf_loop callback, counted in the
 * call chain's stack by the verifier) the fault path's frames came to 528 bytes of the 512
 * allowed, and the kernel refused the programs (EACCES). One per CPU: BPF programs do not nest
 * on a CPU's fault path (the fault programs ignore the faults of BPF programs' own reads). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dirty_run);
} run_scratch SEC(".maps");
#define FW_BEFORE 0 /* note which pages are mapped (pend_bits) */
#define FW_WRITE 1  /* mark dirty those the fault mapped */
#define FW_READ 2   /* record those not recorded yet */

/* The address of page i of the folio, or 0 when it is outside [lo, hi). */
static __always_inline __u64 fw_addr(struct fwalk *c, __u64 i)
{
	struct tstate *s = c->s;
	__u64 pgoff = c->fx.index + i, addr;

	if (pgoff < s->vm_pgoff)
		return 0;
	addr = s->vm_start + ((pgoff - s->vm_pgoff) << 12);
	if (addr < c->lo || addr >= c->hi)
		return 0;
	return addr;
}

static long fw_step(__u64 i, void *ctx)
{
	struct fwalk *c = ctx;
	struct tstate *s = c->s;
	__u64 addr = fw_addr(c, i), bit = 1ULL << (i & 63);
	__u32 w = (i >> 6) & 7;

	if (!addr || addr == s->pend_page)
		return 0;
	if (c->mode == FW_BEFORE) {
		if (mapped(addr))
			s->pend_bits[w] |= bit;
	} else if (c->mode == FW_WRITE) {
		__u64 j = (addr - c->base) >> 12;

		if (c->fx.folio == s->pend_folio && (s->pend_bits[w] & bit))
			return 0; /* mapped before this fault: not by it */
		if (s->pend_folio == FOLIO_UNKNOWN && is_seen(c->tgid, addr))
			return 0; /* (not known: a page read before was mapped by an earlier fault) */
		if (j < FOLIO_MAX && mapped(addr)) {
			c->run->bits[(j >> 6) & 7] |= 1ULL << (j & 63);
			c->added++;
		}
	} else if (!is_seen(c->tgid, addr) &&
		   emit_page(PG_READ, addr, (c->fx.index + i) << 12, s->pend_ino, s->pend_dev) == 0) {
		mark_seen(c->tgid, addr, s->vm_start, s->vm_end);
		c->added++;
	}
	return 0;
}

/* Walk the folio holding the pending page (in `mode`). Returns -1 when it could not be
 * looked up. */
/* (Global, see capture_slot.) */
__noinline int walk_folio(struct tstate *s, __u32 tgid, __u32 mode)
{
	struct fwalk c = {.s = s, .tgid = tgid, .mode = mode};
	__u32 zero = 0;
	__u64 idx, pmd;

	if (!s)
		return -1;
	c.run = bpf_map_lookup_elem(&run_scratch, &zero);
	if (!c.run)
		return -1;
	__builtin_memset(c.run, 0, sizeof(*c.run));
	idx = s->vm_pgoff + ((s->pend_page - s->vm_start) >> 12);
	pmd = s->pend_page & ~(PMD_SPAN - 1);

	if (find_folio(s->pend_mapping, idx, &c.fx))
		return -1;
	if (mode == FW_BEFORE)
		s->pend_folio = c.fx.folio;
	if (c.fx.nr <= 1)
		return 0;
	c.lo = s->vm_start > pmd ? s->vm_start : pmd;
	c.hi = s->vm_end < pmd + PMD_SPAN ? s->vm_end : pmd + PMD_SPAN;
	if (mode == FW_WRITE) {
		/* The run starts at the folio's first page in [lo, hi). */
		__u64 first = c.fx.index < s->vm_pgoff ? s->vm_pgoff : c.fx.index;

		c.base = s->vm_start + ((first - s->vm_pgoff) << 12);
		if (c.base < c.lo)
			c.base = c.lo;
		c.run->off = (s->vm_pgoff + ((c.base - s->vm_start) >> 12)) << 12;
		c.run->ino = s->pend_ino;
		c.run->dev = s->pend_dev;
		c.run->flags = s->pend_flags;
		c.run->npages = c.fx.nr > FOLIO_MAX ? FOLIO_MAX : c.fx.nr;
	}
	bpf_loop(c.fx.nr > FOLIO_MAX ? FOLIO_MAX : c.fx.nr, fw_step, &c, 0);
	if (!c.added)
		return 0;
	STAT(pages_folio, c.added);
	if (mode == FW_WRITE)
		add_run(tgid, c.base, c.run);
	return 0;
}

/* The thread's last fault in a recorded file mapping is done: record the page it made
 * readable, and the neighbours it mapped with it in the page's large folio (written ones go
 * to the dirty table, read ones are recorded now). */
/* (Global, see capture_slot.) */
__noinline int finish_fault(struct tstate *s, __u32 tgid)
{
	__u8 kind;

	if (!s)
		return 0;
	kind = s->pend_kind;
	s->pend_kind = PK_NONE;
	if (kind == PK_READ) {
		__u64 addr = s->pend_addr;

		s->pend_addr = 0;
		if (addr && !is_seen(tgid, addr) &&
		    emit_page(PG_READ | PG_ALWAYS, addr, s->pend_off, s->pend_ino, s->pend_dev) == 0)
			mark_seen(tgid, addr, s->vm_start, s->vm_end);
		/* A fault-around maps (and on_map_pages recorded) the range it reports; a read
		 * fault without one mapped its page's folio, as much of it as fits. */
		if (!s->pend_around && walk_folio(s, tgid, FW_READ))
			account_lost(LOST_MMAP_READ_UNSEEN, 0);
	} else if (kind == PK_WRITE) {
		if (walk_folio(s, tgid, FW_WRITE))
			account_lost(LOST_MMAP_WRITE_UNSEEN, 0);
	}
	return 0;
}

struct vma_info {
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u64 mapping;
	__u32 dev;
	__u32 kind;  /* VK_* */
	__u32 flags; /* DP_* */
	__u32 pad;
};
#define VK_NONE 0
#define VK_SHARED 1  /* a shared file mapping: reads and writes recorded */
#define VK_PRIVATE 2 /* a private file mapping that is no program image (--mmap-private): reads */

/* Files mapped as program images (ELF executables and libraries: see mark_image). */
struct file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct file_key);
	__type(value, __u8);
} images SEC(".maps");

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct vma_info *v = ctx;
	struct file *f = vma->vm_file;
	unsigned long fl = vma->vm_flags;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	/* Shared memory that is no file (MAP_SHARED|MAP_ANONYMOUS, System V shm, io_uring rings)
	 * is backed by kernel-internal inodes: its loads and stores are no file I/O. */
	if (!f || (f->f_inode->i_flags & S_PRIVATE))
		return 0;
	v->pgoff = vma->vm_pgoff;
	v->ino = f->f_inode->i_ino;
	v->dev = f->f_inode->i_sb->s_dev;
	v->mapping = (__u64)f->f_mapping;
	if (f->f_inode->i_sb->s_magic == TMPFS_MAGIC)
		v->flags = DP_NOWB;
	/* VM_MAYSHARE, not VM_SHARED: a MAP_SHARED mapping of a file opened read-only has only
	 * the former, and reads through it are file I/O like any other. */
	if (fl & VM_MAYSHARE) {
		v->kind = VK_SHARED;
	} else if (mmap_private && !(fl & VM_EXEC) && !(f->f_flags & __FMODE_EXEC)) {
		struct file_key k = {.ino = v->ino, .dev = v->dev};

		if (!bpf_map_lookup_elem(&images, &k))
			v->kind = VK_PRIVATE;
	}
	return 0;
}

/* mmap of descriptor `fd` as a program image (PROT_EXEC, or MAP_DENYWRITE, which glibc's
 * loader passes for every segment): the file's private mappings are program text and data,
 * not recorded by --mmap-private (the executable and the ELF interpreter the kernel maps
 * itself are told by __FMODE_EXEC). */
static __always_inline void mark_image(struct task_struct *t, __s32 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = 0;
	struct inode *ino;
	__u8 one = 1;

	if (!fdt || fd < 0 || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return;
	fds = BPF_CORE_READ(fdt, fd);
	if (!fds || bpf_probe_read_kernel(&f, sizeof(f), fds + fd) || !f)
		return;
	ino = BPF_CORE_READ(f, f_inode);
	if (!ino)
		return;
	struct file_key k = {.ino = BPF_CORE_READ(ino, i_ino), .dev = BPF_CORE_READ(ino, i_sb, s_dev)};

	bpf_map_update_elem(&images, &k, &one, BPF_ANY);
}

/* Forget the process's cached mappings (before a call that changes its mappings). */
static __always_inline void forget_mappings(__u32 tgid)
{
	struct proc_mm *pm = bpf_map_lookup_elem(&procmm, &tgid);

	if (pm) {
		pm->c_valid = 0;
		pm->n_valid = 0;
		__sync_fetch_and_add(&pm->gen, 1);
	}
}

#define ENOENT 2
#define EBUSY 16

/* The mapping of `address` in the current process, from the process's cached ones or
 * bpf_find_vma. Returns 0 (v->kind VK_NONE when it is not recorded) or -1 when it could not
 * be looked up now (bpf_find_vma answers -EBUSY until the irq_work releasing its previous
 * mmap lock has run: on this VM, the next tick). */
/* (Global, see capture_slot.) */
__noinline int classify(__u32 tgid, __u64 address, struct vma_info *v)
{
	struct proc_mm *m = bpf_map_lookup_elem(&procmm, &tgid);
	__u64 gen = 0;
	long r;

	if (!v)
		return 0;

	if (m && m->c_valid && address >= m->c_start && address < m->c_end) {
		v->kind = m->c_kind;
		v->start = m->c_start;
		v->end = m->c_end;
		v->pgoff = m->c_pgoff;
		v->ino = m->c_ino;
		v->dev = m->c_dev;
		v->mapping = m->c_mapping;
		v->flags = m->c_flags;
		STAT(pages_cached_vma, 1);
		return 0;
	}
	if (m && m->n_valid && address >= m->n_start && address < m->n_end)
		return 0;
	if (m)
		gen = m->gen;
	/* (The callback's context must be on the stack.) */
	struct vma_info found = {};

	r = bpf_find_vma(bpf_get_current_task_btf(), address, vma_cb, &found, 0);
	if (r == -ENOENT)
		return 0; /* no mapping there: the fault is the program's error */
	if (r)
		return -1;
	*v = found;
	m = proc_mm(tgid);
	if (!m || m->gen != gen)
		return 0;
	if (v->kind) {
		m->c_start = v->start;
		m->c_end = v->end;
		m->c_pgoff = v->pgoff;
		m->c_ino = v->ino;
		m->c_dev = v->dev;
		m->c_mapping = v->mapping;
		m->c_kind = v->kind;
		m->c_flags = v->flags;
		m->c_valid = 1;
	} else {
		m->n_start = v->start;
		m->n_end = v->end;
		m->n_valid = 1;
	}
	return 0;
}

struct flush_ctx {
	__u32 tgid;
	__u32 all;
	__u64 lo;
	__u64 hi;
	__u64 deleted;
	__u32 how; /* FL_* */
	__u32 pad;
};
/* flush_pages' `how` */
#define FL_FORGET 1  /* the range is unmapped (or the address space goes): forget what was read */
#define FL_MSYNC 2   /* msync: the pages stay mapped ... */
#define FL_MS_SYNC 4 /* ... and with MS_SYNC are written back and write-protected (a later write
		      * faults again), except where nothing is written back (DP_NOWB); MS_ASYNC
		      * does nothing, so the pages stay dirty and writable */
#define MS_SYNC 4

/* Whether a flushed page stays in the table (still writable without a fault). */
static __always_inline int stays_dirty(struct flush_ctx *c, __u32 flags)
{
	return (c->how & FL_MSYNC) && (!(c->how & FL_MS_SYNC) || (flags & DP_NOWB));
}

static long flush_dirty_cb(void *map, struct page_key *k, struct dirty_page *d, void *ctx)
{
	struct flush_ctx *c = ctx;

	if (k->tgid != c->tgid || (!c->all && (k->addr < c->lo || k->addr >= c->hi)))
		return 0;
	emit_page(PG_WRITE | PG_ALWAYS, k->addr, d->off, d->ino, d->dev);
	if (!stays_dirty(c, d->flags) && bpf_map_delete_elem(map, k) == 0)
		c->deleted++;
	return 0;
}

struct run_ctx {
	struct flush_ctx *c;
	struct page_key *k;
	struct dirty_run *d;
};

static long run_step(__u64 i, void *ctx)
{
	struct run_ctx *r = ctx;
	struct flush_ctx *c = r->c;
	__u64 addr = r->k->addr + (i << 12), bit = 1ULL << (i & 63);
	__u32 w = (i >> 6) & 7;
	struct page_key pk = {.tgid = c->tgid, .addr = addr};

	if (!(r->d->bits[w] & bit) || (!c->all && (addr < c->lo || addr >= c->hi)))
		return 0;
	if (!stays_dirty(c, r->d->flags))
		r->d->bits[w] &= ~bit;
	/* (A page with an entry of its own is recorded from that one.) */
	if (!bpf_map_lookup_elem(&dirty, &pk))
		emit_page(PG_WRITE | PG_ALWAYS, addr, r->d->off + (i << 12), r->d->ino, r->d->dev);
	return 0;
}

static long flush_run_cb(void *map, struct page_key *k, struct dirty_run *d, void *ctx)
{
	struct flush_ctx *c = ctx;
	struct run_ctx r = {.c = c, .k = k, .d = d};
	__u64 left = 0;

	if (k->tgid != c->tgid || (!c->all && (k->addr + ((__u64)d->npages << 12) <= c->lo ||
					       k->addr >= c->hi)))
		return 0;
	bpf_loop(d->npages > FOLIO_MAX ? FOLIO_MAX : d->npages, run_step, &r, 0);
#pragma unroll
	for (int w = 0; w < 8; w++)
		left |= d->bits[w];
	if (!left && bpf_map_delete_elem(map, k) == 0)
		c->deleted++;
	return 0;
}

static long forget_seen_cb(void *map, struct page_key *k, __u8 *v, void *ctx)
{
	struct flush_ctx *c = ctx;

	if (k->tgid == c->tgid && (c->all || (k->addr >= c->lo && k->addr < c->hi)) &&
	    bpf_map_delete_elem(map, k) == 0)
		c->deleted++;
	return 0;
}

struct forget_ctx {
	__u64 at;
	__u64 deleted;
	__u32 tgid;
};

static long forget_step(__u64 i, void *ctx)
{
	struct forget_ctx *f = ctx;
	struct page_key k = {.tgid = f->tgid, .addr = f->at + (i << 12)};

	if (bpf_map_delete_elem(&seen, &k) == 0)
		f->deleted++;
	return 0;
}

/* Forget the process's `seen` entries of c's range page by page, within the span they are in
 * (see proc_mm). Returns 1 when that is too many pages: the table is walked instead. */
static __always_inline int forget_seen_pages(struct proc_mm *pc, struct flush_ctx *c)
{
	struct forget_ctx f = {.tgid = c->tgid};
	__u64 lo = pc->sr_start, hi = pc->sr_end;

	if (!c->all) {
		if (c->lo > lo)
			lo = c->lo;
		if (c->hi < hi)
			hi = c->hi;
	}
	if (lo >= hi)
		return 0;
	if ((hi - lo) >> 12 > FORGET_MAX)
		return 1;
	f.at = lo;
	bpf_loop((hi - lo) >> 12, forget_step, &f, 0);
	c->deleted = f.deleted;
	if (c->all || (c->lo <= pc->sr_start && pc->sr_end <= c->hi))
		pc->sr_end = pc->sr_start = 0; /* none left */
	return 0;
}

/* Before munmap / msync / mremap / exit_group / execve: record the process's dirty pages of
 * the range (their content now is what reaches the file), and forget which pages of it were
 * read (a new mapping there starts afresh). */
/* (Global, see capture_slot.) */
__noinline int flush_pages(__u32 tgid, __u32 all, __u64 lo, __u64 len, __u32 how)
{
	struct flush_ctx c = {.tgid = tgid, .all = all, .lo = lo & ~4095ULL, .hi = lo + len, .how = how};
	struct proc_mm *pc = bpf_map_lookup_elem(&procmm, &tgid);
	int walk_all = uncounted != 0;

	if (!pc && !walk_all)
		return 0;
	if (walk_all || pc->dirty) {
		/* Runs first: a page of a run that has an entry of its own in `dirty` is left to
		 * that one. */
		bpf_for_each_map_elem(&dirty_runs, flush_run_cb, &c, 0);
		bpf_for_each_map_elem(&dirty, flush_dirty_cb, &c, 0);
		STAT(page_walks, 1);
		if (pc)
			__sync_fetch_and_add(&pc->dirty, -c.deleted);
	}
	if ((how & FL_FORGET) && (walk_all || pc->seen) && (c.all || bpf_get_current_pid_tgid() >> 32 == tgid)) {
		c.deleted = 0;
		if (walk_all || !pc || forget_seen_pages(pc, &c)) {
			bpf_for_each_map_elem(&seen, forget_seen_cb, &c, 0);
			STAT(page_walks, 1);
			if (pc && c.all)
				pc->sr_end = pc->sr_start = 0;
		}
		if (pc)
			__sync_fetch_and_add(&pc->seen, -c.deleted);
	}
	return 0;
}

/* note_fault's `how` */
#define NF_WRITE 1 /* a write fault */
#define NF_PROT 2  /* its page was mapped (read-only): a protection fault */
#define NF_LATE 4  /* the fault is over: found at the next system call (retry_faults) */

/* A fault at `address` in the recorded mapping `v`. */
/* (Global, see capture_slot.) */
__noinline int note_fault(struct tstate *s, struct vma_info *v, __u64 address, __u32 tgid,
			  __u32 how)
{
	__u64 page = address & ~4095ULL, off;
	int write = how & NF_WRITE, prot = how & NF_PROT, late = how & NF_LATE;

	if (!s || !v || !v->kind)
		return 0;
	off = page - v->start + (v->pgoff << 12);
	s->pend_page = page;
	s->pend_off = off;
	s->pend_ino = v->ino;
	s->pend_dev = v->dev;
	s->pend_flags = v->flags;
	s->vm_start = v->start;
	s->vm_end = v->end;
	s->vm_pgoff = v->pgoff;
	s->pend_mapping = v->mapping;
	s->pend_around = 0;
	s->pend_folio = 0;
	__builtin_memset(s->pend_bits, 0, sizeof(s->pend_bits));
	if (write) {
		if (v->kind != VK_SHARED)
			return 0; /* a private mapping's copy: no file I/O */
		mark_dirty(tgid, page, off, v->ino, v->dev | ((__u64)v->flags << 32));
		if (prot)
			return 0; /* a mapped page made writable: that page alone */
		/* Mapping it may map its folio: which of the folio's pages are mapped already? */
		if (late || walk_folio(s, tgid, FW_BEFORE))
			s->pend_folio = FOLIO_UNKNOWN;
		s->pend_kind = PK_WRITE;
		if (late)
			finish_fault(s, tgid);
		return 0;
	}
	if (is_seen(tgid, page))
		return 0;
	s->pend_kind = PK_READ;
	s->pend_addr = page;
	if (late)
		finish_fault(s, tgid);
	return 0;
}

/* Faults whose mapping could not be looked up when they happened, looked up again (at a
 * system call, where bpf_find_vma does not need the irq_work; `final` at the thread's exit):
 * recorded late, or, when they still cannot be, counted lost. */
struct retry_ctx {
	struct tstate *s;
	__u32 tgid;
	__u32 final;
	__u32 kept;
};

static long retry_step(__u64 k, void *ctx)
{
	struct retry_ctx *c = ctx;
	struct tstate *s = c->s;
	struct vma_info v = {};
	__u64 e = s->retry[k & 3];

	if (classify(c->tgid, e & ~4095ULL, &v)) {
		if (c->final) {
			account_lost((e & RT_WRITE) ? LOST_MMAP_WRITE_UNSEEN : LOST_MMAP_READ_UNSEEN, 0);
			STAT(pages_unclassified, 1);
		} else {
			s->retry[c->kept & 3] = e; /* (kept <= k) */
			c->kept++;
		}
		return 0;
	}
	STAT(pages_retried, 1);
	note_fault(s, &v, e & ~4095ULL, c->tgid,
		   ((e & RT_WRITE) ? NF_WRITE : 0) | ((e & RT_PROT) ? NF_PROT : 0) | NF_LATE);
	return 0;
}

/* (Global, see capture_slot.) */
__noinline int retry_faults(struct tstate *s, __u32 tgid, __u32 final)
{
	struct retry_ctx c = {.s = s, .tgid = tgid, .final = final};

	if (!s)
		return 0;
	bpf_loop(s->nretry > 4 ? 4 : s->nretry, retry_step, &c, 0);
	s->nretry = c.kept;
	return 0;
}

/* A page fault of a traced thread (from user mode, or the kernel's access to user memory in
 * a system call: read(2) into a mapping writes through it). */
/* (Global, see capture_slot: both fault programs call it.) */
__noinline int on_fault(__u64 address, __u64 error_code)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *t;
	struct vma_info v = {};
	struct tstate *s;
	struct proc_mm *m;

	if (!is_target(tgid))
		return 0;
	m = bpf_map_lookup_elem(&procmm, &tgid);
	if (m && m->state == MS_CLEAN)
		return 0; /* no recorded file mapping, and nothing pending (see procmm) */
	t = bpf_get_current_task_btf();
	s = bpf_task_storage_get(&tstates, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0;
	finish_fault(s, tgid);
	if (classify(tgid, address, &v)) {
		__u64 e = (address & ~4095ULL) | ((error_code & X86_PF_WRITE) ? RT_WRITE : 0) |
			  ((error_code & X86_PF_PROT) ? RT_PROT : 0);

		if (s->nretry < 4) {
			s->retry[s->nretry & 3] = e;
			s->nretry++;
		} else {
			account_lost((e & RT_WRITE) ? LOST_MMAP_WRITE_UNSEEN : LOST_MMAP_READ_UNSEEN, 0);
			STAT(pages_unclassified, 1);
		}
		return 0;
	}
	note_fault(s, &v, address, tgid,
		   ((error_code & X86_PF_WRITE) ? NF_WRITE : 0) | ((error_code & X86_PF_PROT) ? NF_PROT : 0));
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return on_fault(address, error_code);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(on_page_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	/* User memory only, and not the non-faulting reads of BPF programs (these very ones
	 * included) and other pagefault_disable() sections, which map nothing. */
	if (address >> 63 || bpf_get_current_task_btf()->pagefault_disabled)
		return 0;
	return on_fault(address, error_code);
}

struct mp_ctx {
	struct tstate *s;
	__u64 start;
	__u32 tgid;
};

static long map_step(__u64 i, void *ctx)
{
	struct mp_ctx *c = ctx;
	struct tstate *s = c->s;
	__u64 pgoff = c->start + i;
	__u64 addr = s->vm_start + ((pgoff - s->vm_pgoff) << 12);

	if (pgoff < s->vm_pgoff || addr >= s->vm_end || is_seen(c->tgid, addr))
		return 0;
	/* Mapped by the fault-around just now, or not (not in the page cache): -1, skipped. */
	if (emit_page(PG_READ, addr, pgoff << 12, s->pend_ino, s->pend_dev) == 0) {
		mark_seen(c->tgid, addr, s->vm_start, s->vm_end);
		if (addr == s->pend_addr)
			s->pend_addr = 0;
	}
	return 0;
}

/* The fault-around of a read fault maps the file's cached pages around the faulting one
 * without faults of their own: record those of them the process had not read yet. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long start, unsigned long end)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tstate *s;
	struct mp_ctx c;

	if (!is_target(tgid))
		return 0;
	s = bpf_task_storage_get(&tstates, bpf_get_current_task_btf(), 0, 0);
	if (!s || s->pend_kind != PK_READ || mapping->host->i_ino != s->pend_ino || end < start)
		return 0;
	c.s = s;
	c.start = start;
	c.tgid = tgid;
	s->pend_around = 1;
	bpf_loop(end - start + 1 > 512 ? 512 : end - start + 1, map_step, &c, 0);
	return 0;
}

/* ---- programs ----------------------------------------------------------------------------- */

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	if (noop)
		return 0;
	struct task_struct *t = bpf_get_current_task_btf();
	/* Loads from the task instead of a helper call: the same ids. */
	__u32 tgid = t->tgid;
	struct syscall_rule *r;
	/* Only threads of the target set get storage (at their first call, below), so for them
	 * this one lookup replaces the target-table lookup; other threads do both. With --cgroup,
	 * membership can change, so it is checked at every call. */
	struct tstate *s = bpf_task_storage_get(&tstates, t, 0, 0);
	__u32 nr;

	if ((!s || use_cgroup) && !is_target(tgid))
		return 0;
	/* x32 calls have bit 30 set: out of range like every other unknown number. */
	if ((__u64)id >= MAX_NR)
		return 0;
	if (t->thread_info.status & TS_COMPAT)
		return 0; /* an i386 call: its numbers are another table */
	nr = id;
	if (mmap_pages) {
		if (s) {
			finish_fault(s, tgid);
			if (s->nretry)
				retry_faults(s, tgid, 0);
		}
		/* Marked before the call runs: conservative if it fails. */
		if (nr == NR_MMAP && !(regs->r10 & MAP_ANONYMOUS) && (int)regs->r8 >= 0) {
			if (regs->r10 & MAP_SHARED_BIT)
				set_mapstate(tgid, MS_SHARED);
			else if (mmap_private && ((regs->dx & PROT_EXEC) || (regs->r10 & MAP_DENYWRITE)))
				mark_image(t, regs->r8);
			else if (mmap_private)
				set_mapstate(tgid, MS_SHARED);
		}
		if (nr == NR_SHMAT)
			set_mapstate(tgid, MS_SHARED);
		/* Calls that change the mappings: the cached ones may no longer be there. */
		if (nr == NR_MMAP || nr == NR_MUNMAP || nr == NR_MREMAP || nr == NR_MPROTECT ||
		    nr == NR_SHMDT || nr == NR_REMAP_FILE_PAGES)
			forget_mappings(tgid);
	}
	r = bpf_map_lookup_elem(&rules, &nr);
	if (!r)
		return 0;
	/* (msync keeps the mapping: what of it was read stays recorded.) */
	if (mmap_pages && (r->flags & (RF_FLUSH_RANGE | RF_FLUSH_ALL)))
		flush_pages(tgid, !!(r->flags & RF_FLUSH_ALL), regs->di, regs->si,
			    nr != NR_MSYNC ? FL_FORGET
					   : FL_MSYNC | ((regs->dx & MS_SYNC) ? FL_MS_SYNC : 0));
	if (!(r->flags & RF_CAPTURE))
		return 0;
	if (!s) /* this thread's first call */
		s = bpf_task_storage_get(&tstates, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		STAT(no_storage, 1);
		account_lost(nr, 0);
		return 0;
	}
	reset(s);
	s->seq++;
	s->nr = nr;
	s->entry_tid = t->pid;
	s->args[0] = regs->di;
	s->args[1] = regs->si;
	s->args[2] = regs->dx;
	s->args[3] = regs->r10;
	s->args[4] = regs->r8;
	s->args[5] = regs->r9;
	/* A 32-bit argument's register may hold garbage above it (the kernel reads the low half):
	 * keep what the kernel reads, before any length, count or command is evaluated. */
#pragma unroll
	for (int i = 0; i < NARGS; i++)
		if (r->args[i].flags & AF_NARROW)
			s->args[i] = (__u32)s->args[i];
	s->ts_enter = bpf_ktime_get_ns();
	s->active = 1;
	/* (Before the argument walk: the verifier then checks the task loads once, not once
	 * for every way out of the walk.) */
	if (r->flags & RF_NO_RETURN)
		load_ident(s, t);
	capture_args(s, r, 0, 1, 1);
	if (r->entry_mask) {
		/* Strings copied before the call (execve's, which the call replaces) that were not
		 * paged in yet: read again once the kernel has read them (recover_inputs). */
#pragma unroll
		for (int k = 0; k < NARGS; k++)
			if ((r->entry_mask & (1 << k)) && s->status[k] == ST_FAULT &&
			    (r->args[k].kind == AK_STR || r->args[k].kind == AK_STRV))
				s->refetch |= 1 << k;
	}
	if (r->flags & RF_NO_RETURN) {
		s->active = 0;
		emit_call(s, 0, CF_NO_RETURN);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	if (noop)
		return 0;
	struct task_struct *t = bpf_get_current_task_btf();
	struct tstate *s = bpf_task_storage_get(&tstates, t, 0, 0);
	struct syscall_rule *r;
	__u32 nr;
	int ok;

	if (!s || !s->active)
		return 0;
	s->active = 0;
	nr = s->nr;
	r = bpf_map_lookup_elem(&rules, &nr);
	if (!r)
		return 0;
	load_ident(s, t);
	if (t->pending.signal.sig[0] & (1UL << (SIGKILL - 1))) {
		/* Being killed (another thread's exit_group, SIGKILL): the program never sees this
		 * result (often -ERESTARTSYS from an interrupted wait), as under ptrace, which gets
		 * no exit stop then. Recorded like a call killed inside: inputs, no result. */
		capture_args(s, r, -1, 0, 0);
		emit_call(s, 0, CF_NO_RETURN);
		return 0;
	}
	ok = !(ret < 0 && ret >= -4095);
	/* Throttle mode can stop the thread here: a string input that was never paged in is
	 * then read by user space (sstep). */
	s->can_defer = throttle;
	if (s->refetch)
		refetch_inputs(s, r);
	/* A kernel-side copy that moved bytes: stopped with the call, like a deferral, for user
	 * space to read them back from the file before the thread runs on. */
	int readback = throttle && !data_none_in && (r->flags & RF_READBACK) && ok && ret > 0;
	if (readback || !emit_call1(s, r, ret, ok)) {
		capture_args(s, r, ret, ok, 0);
		if (emit_call(s, ret, readback ? CF_READBACK : 0) && readback)
			s->ndefer++;
	}
	s->can_defer = 0;
	if (throttle)
		maybe_stop(s->id_tgid, s->ndefer, s->avail);
	return 0;
}

/* A successful exec: the new address space has no shared file mapping. Inputs of the exec
 * that faulted when copied at its entry are taken from the kernel's own copies: the file name
 * from the binprm, argv and envp from the new image's argument and environment areas. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	if (!is_target(tgid))
		return 0;
	set_mapstate(tgid, MS_CLEAN);
	forget_mappings(tgid);
	struct tstate *s = bpf_task_storage_get(&tstates, p, 0, 0);

	if (s && s->active && s->refetch)
		recover_exec_inputs(s, bprm);
	if (s && s->nretry) {
		/* Faults in the old address space that could not be looked up: too late now
		 * (counted as read faults, the kind of most). */
		account_lost_n(LOST_MMAP_READ_UNSEEN, s->nretry, 0);
		STAT(pages_unclassified, s->nretry);
		s->nretry = 0;
	}
	if (s)
		s->pend_kind = PK_NONE;
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;

	if (!is_target(ptgid))
		return 0;
	if (ctgid != ptgid) {
		__u8 one = 1;
		__u64 zero = 0;

		if (!use_cgroup)
			bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
		if (mmap_pages) {
			struct proc_mm *m = bpf_map_lookup_elem(&procmm, &ptgid);

			if (m && m->state)
				set_mapstate(ctgid, m->state);
		}
		bpf_map_update_elem(&defers, &ctgid, &zero, BPF_NOEXIST);
		__sync_fetch_and_add(&live_procs, 1);
	}
	emit_task(RK_FORK, parent->pid, ptgid, child->pid, ctgid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_task_exit, struct task_struct *t, bool group_dead)
{
	__u32 tgid = t->tgid;
	struct tstate *s;

	if (!is_target(tgid))
		return 0;
	__u32 inside = 0;

	s = bpf_task_storage_get(&tstates, t, 0, 0);
	if (s && s->active) {
		/* Killed inside the call (another thread's exit_group, a signal): no result. Its
		 * inputs are copied if the address space is still there. */
		__u32 nr = s->nr;
		struct syscall_rule *r = bpf_map_lookup_elem(&rules, &nr);

		s->active = 0;
		load_ident(s, t); /* before the walk: see on_sys_enter */
		if (r)
			capture_args(s, r, -1, 0, 0);
		emit_call(s, 0, CF_NO_RETURN);
		inside = 1;
	}
	if (mmap_pages) {
		if (s) {
			finish_fault(s, tgid);
			if (s->nretry)
				retry_faults(s, tgid, 1);
		}
		if (group_dead) {
			flush_pages(tgid, 1, 0, 0, FL_FORGET);
			bpf_map_delete_elem(&procmm, &tgid);
		}
	}
	emit_task(RK_EXIT, t->pid, tgid, t->exit_code, inside, group_dead);
	if (group_dead) {
		if (!use_cgroup)
			bpf_map_delete_elem(&targets, &tgid);
		__sync_fetch_and_add(&live_procs, -1);
	}
	return 0;
}

struct kernel_siginfo;
struct k_sigaction;

/* RK_SIGNAL for signal `sig` of thread `t`; `info` the kernel's siginfo, or SEND_SIG_NOINFO (0:
 * sent by the current task, SI_USER) or SEND_SIG_PRIV (1: by the kernel, SI_KERNEL). */
static __always_inline void emit_signal(struct task_struct *t, int sig, void *info, __u32 flags)
{
	struct rec_signal *r;
	__u64 *w;

	if (!signals || noop || sig == SIGKILL)
		return;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		account_lost(LOST_SIGNAL, 0);
		return;
	}
	r->kind = RK_SIGNAL;
	r->tid = t->pid;
	r->tgid = t->tgid;
	r->flags = flags;
	r->ts = bpf_ktime_get_ns();
	w = (__u64 *)r->info;
	for (int i = 0; i < 6; i++)
		w[i] = 0;
	if ((unsigned long)info > 1) {
		bpf_probe_read_kernel(r->info, sizeof(r->info), info);
	} else {
		__u32 *v = (__u32 *)r->info;

		v[0] = sig;
		if (info) {
			v[2] = 0x80; /* SI_KERNEL */
		} else {
			v[4] = bpf_get_current_pid_tgid() >> 32;
			v[5] = (__u32)bpf_get_current_uid_gid();
		}
	}
	bpf_ringbuf_submit(r, 0);
}

/* A signal the thread takes now (after its system call's sys_exit, before user code runs). */
SEC("tp_btf/signal_deliver")
int BPF_PROG(on_signal_deliver, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (!signals || !is_target(t->tgid))
		return 0;
	emit_signal(t, sig, info, 0);
	return 0;
}

#define TRACE_SIGNAL_DELIVERED 0
#define TRACE_SIGNAL_IGNORED 1
#define SIGNAL_GROUP_EXIT 0x00000004

/* Signals sent to a target thread that signal_deliver never sees, though a traced thread stops
 * for them and strace shows them: one the kernel drops at once as ignored (SIGCHLD, SIGWINCH
 * without a handler; SG_IGNORED), and a fatal one (SIGTERM without a handler) that the kernel
 * turns into the group's exit as it is sent (complete_signal: each thread then takes SIGKILL).
 * Signals to a group already exiting are dropped (ignored) and left out. (Not in cgroup mode:
 * the target is not the current task.) */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	__u32 tgid;

	if (!signals || result > TRACE_SIGNAL_IGNORED || use_cgroup)
		return 0;
	tgid = task->tgid;
	if (tgid == self_tgid || !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	struct signal_struct *sg = task->signal;
	int dying = sg && (sg->flags & SIGNAL_GROUP_EXIT);

	if (result == TRACE_SIGNAL_IGNORED && !dying)
		emit_signal(task, sig, info, SG_IGNORED);
	else if (result == TRACE_SIGNAL_DELIVERED && dying && sg->group_exit_code == sig)
		emit_signal(task, sig, info, SG_FATAL);
	return 0;
}

/* A folio added to the page cache: counted against the call the thread is in (a read's
 * misses and read-ahead: replay --reads as-recorded replays only reads that had some). */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_add_folio, struct folio *folio)
{
	struct tstate *s;

	if (noop)
		return 0;
	s = bpf_task_storage_get(&tstates, bpf_get_current_task_btf(), 0, 0);
	if (s && s->active)
		s->added_pages += folio_pages(folio);
	return 0;
}

/* ---- io_uring operations (capture.h, RK_URING_*) ----------------------------------------- */

#define NR_IO_URING_ENTER 426
#define IORING_SETUP_SQPOLL (1U << 1)
#define IORING_SETUP_SQE128 (1U << 10)
#define IOSQE_BUFFER_SELECT (1U << 5)
#define IORING_CQE_F_MORE (1U << 1)
/* include/uapi/linux/io_uring.h opcodes whose buffer is an iovec array (addr, len iovecs) */
#define IORING_OP_READV 1
#define IORING_OP_WRITEV 2
#define IORING_OP_READV_FIXED 60
#define IORING_OP_WRITEV_FIXED 61
/* include/uapi/linux/io_uring.h opcodes whose buffer is one contiguous range */
#define IORING_OP_READ_FIXED 4
#define IORING_OP_WRITE_FIXED 5
#define IORING_OP_READ 22
#define IORING_OP_WRITE 23
#define IORING_OP_SEND 26
#define IORING_OP_RECV 27

/* A request between its SUBMIT and its COMPLETE. */
struct uring_flight {
	__u64 serial;
	__u64 addr; /* a read's buffer, read at completion */
	__u64 len;
	__u64 mm;   /* the submitter's struct mm_struct * */
	__u32 flags;
	__u32 vec;  /* `addr` is an iovec array of `len` entries */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, __u64); /* struct io_kiocb * */
	__type(value, struct uring_flight);
} uring_flight SEC(".maps");

__u64 uring_serial = 0;

struct ucopy {
	__u64 addr;
	__u64 len;   /* the bytes to copy (vectored: at most) */
	__u64 off;   /* copied so far: the next chunk's offset in the request's data */
	__u64 serial;
	__u32 tid;
	__u32 tgid;
	__u32 lost;
	__u32 niov;  /* vectored (READV, WRITEV and their _FIXED): `iovs` iovecs at `iov` */
	__u64 iov;
	__u32 idx;   /* the next iovec to read */
	__u32 pad;
	__u64 base;  /* the current iovec's base, length and bytes of it copied */
	__u64 cur;
	__u64 pos;
};

/* Each thread's copy in progress, in task storage (not on the stack: the verifier would
 * follow its values exactly through every step and never converge). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ucopy);
} ucopies SEC(".maps");

struct uctx {
	struct ucopy *u;
};

/* One chunk of a request's buffer into the ring as an RK_URING_DATA record. */
static long ucopy_step(__u64 i, void *ctx)
{
	struct ucopy *u = ((struct uctx *)ctx)->u;
	struct rec_uring_data h = {};
	struct bpf_dynptr dp;
	__u64 n = u->len - u->off;

	if (u->off >= u->len)
		return 1;
	if (n > chunk_max)
		n = chunk_max;
	if (bpf_ringbuf_reserve_dynptr(&rb, sizeof(h) + n, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		u->lost = 1;
		return 1;
	}
	if (bpf_probe_read_user_dynptr(&dp, sizeof(h), n, (void *)(u->addr + u->off))) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		STAT(faults, 1);
		u->lost = 1;
		return 1;
	}
	h.kind = RK_URING_DATA;
	h.tid = u->tid;
	h.tgid = u->tgid;
	h.len = n;
	h.serial = u->serial;
	h.off = u->off;
	bpf_dynptr_write(&dp, 0, &h, sizeof(h), 0);
	bpf_ringbuf_submit_dynptr(&dp, BPF_RB_NO_WAKEUP);
	u->off += n;
	return 0;
}

/* One step through a vectored request's iovecs: the next iovec read from the array (user
 * memory), or one chunk of the current one into the ring as an RK_URING_DATA record. */
static long uvec_step(__u64 i, void *ctx)
{
	struct ucopy *u = ((struct uctx *)ctx)->u;
	struct rec_uring_data h = {};
	struct bpf_dynptr dp;
	__u64 n, v[2];

	if (u->off >= u->len)
		return 1;
	if (u->pos >= u->cur) {
		if (u->idx >= u->niov)
			return 1;
		if (bpf_probe_read_user(v, sizeof(v), (void *)(u->iov + (__u64)u->idx * 16))) {
			STAT(faults, 1);
			u->lost = 1;
			return 1;
		}
		u->idx++;
		u->base = v[0];
		u->cur = v[1];
		u->pos = 0;
		return 0;
	}
	n = u->cur - u->pos;
	if (n > u->len - u->off)
		n = u->len - u->off;
	if (n > chunk_max)
		n = chunk_max;
	if (bpf_ringbuf_reserve_dynptr(&rb, sizeof(h) + n, 0, &dp)) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		u->lost = 1;
		return 1;
	}
	if (bpf_probe_read_user_dynptr(&dp, sizeof(h), n, (void *)(u->base + u->pos))) {
		bpf_ringbuf_discard_dynptr(&dp, BPF_RB_NO_WAKEUP);
		STAT(faults, 1);
		u->lost = 1;
		return 1;
	}
	h.kind = RK_URING_DATA;
	h.tid = u->tid;
	h.tgid = u->tgid;
	h.len = n;
	h.serial = u->serial;
	h.off = u->off;
	bpf_dynptr_write(&dp, 0, &h, sizeof(h), 0);
	bpf_ringbuf_submit_dynptr(&dp, BPF_RB_NO_WAKEUP);
	u->off += n;
	u->pos += n;
	return 0;
}

/* Copy [addr, addr + len) of the current thread's memory as request `serial`'s data (u:
 * addr, len, serial, tid, tgid set, the rest zero); the bytes copied, fewer when the ring had
 * no room or a page was not present (then `lost` is set). */
static __noinline __u64 uring_copy(struct ucopy *in)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct ucopy *u = bpf_task_storage_get(&ucopies, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct uctx c;
	__u64 len = in->len;

	if (!u) {
		in->lost = 1;
		return 0;
	}
	*u = *in;
	if (u->len > LEN_CAP)
		u->len = LEN_CAP;
	c.u = u;
	if (u->niov) {
		/* Vectored: the iovecs' bytes, at most `len`; short only if a step failed or the
		 * steps ran out before the last iovec. */
		bpf_loop(MAX_STEPS, uvec_step, &c, 0);
		if (u->lost || (u->off < u->len && (u->idx < u->niov || u->pos < u->cur)))
			in->lost = 1;
		return u->off;
	}
	bpf_loop(MAX_STEPS, ucopy_step, &c, 0);
	if (u->lost || u->off < len)
		in->lost = 1;
	return u->off;
}

static __always_inline int uring_is_write(__u32 op)
{
	return op == IORING_OP_WRITE || op == IORING_OP_WRITE_FIXED || op == IORING_OP_SEND;
}

static __always_inline int uring_is_read(__u32 op)
{
	return op == IORING_OP_READ || op == IORING_OP_READ_FIXED || op == IORING_OP_RECV;
}

static __always_inline int uring_is_readv(__u32 op)
{
	return op == IORING_OP_READV || op == IORING_OP_READV_FIXED;
}

static __always_inline int uring_is_writev(__u32 op)
{
	return op == IORING_OP_WRITEV || op == IORING_OP_WRITEV_FIXED;
}

/* include/uapi/linux/io_uring.h opcodes whose SQE points to paths and names (io_uring/fs.c,
 * openclose.c, statx.c, xattr.c: their *_prep copy them before io_uring_submit_req) */
#define IORING_OP_OPENAT 18
#define IORING_OP_STATX 21
#define IORING_OP_OPENAT2 28
#define IORING_OP_RENAMEAT 35
#define IORING_OP_UNLINKAT 36
#define IORING_OP_MKDIRAT 37
#define IORING_OP_SYMLINKAT 38
#define IORING_OP_LINKAT 39
#define IORING_OP_FSETXATTR 41
#define IORING_OP_SETXATTR 42
#define IORING_OP_FGETXATTR 43
#define IORING_OP_GETXATTR 44
#define OPEN_HOW_SIZE 24

/* One string (or open_how) of request `serial` as an RK_URING_STR record: 1 when it could not
 * be read. */
static __noinline int uring_str(__u64 serial, __u32 tid, __u32 tgid, __u32 which, __u64 addr)
{
	struct rec_uring_data *h;
	long n;

	h = bpf_ringbuf_reserve(&rb, sizeof(*h) + URS_MAX, 0);
	if (!h)
		return 1;
	if (which == URS_HOW) {
		n = bpf_probe_read_user((void *)(h + 1), OPEN_HOW_SIZE, (void *)addr) ? -1
											: OPEN_HOW_SIZE;
	} else {
		n = bpf_probe_read_user_str((void *)(h + 1), URS_MAX, (void *)addr);
	}
	if (n <= 0) {
		bpf_ringbuf_discard(h, BPF_RB_NO_WAKEUP);
		STAT(faults, 1);
		return 1;
	}
	h->kind = RK_URING_STR;
	h->tid = tid;
	h->tgid = tgid;
	h->len = n;
	h->serial = serial;
	h->off = which;
	bpf_ringbuf_submit(h, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The strings of a path opcode's SQE (`sqe`: the kernel's copy): 1 when one was not read. */
static __noinline int uring_strs(__u64 serial, __u32 tid, __u32 tgid, __u32 op, __u64 sqe)
{
	__u64 addr = 0, addr2 = 0, addr3 = 0;
	__u32 len = 0;
	int lost = 0;

	bpf_probe_read_kernel(&addr, 8, (void *)(sqe + 16));
	bpf_probe_read_kernel(&addr2, 8, (void *)(sqe + 8));
	bpf_probe_read_kernel(&addr3, 8, (void *)(sqe + 48));
	bpf_probe_read_kernel(&len, 4, (void *)(sqe + 24));
	switch (op) {
	case IORING_OP_OPENAT:
	case IORING_OP_STATX:
	case IORING_OP_UNLINKAT:
	case IORING_OP_MKDIRAT:
		lost |= uring_str(serial, tid, tgid, URS_PATH, addr);
		break;
	case IORING_OP_OPENAT2:
		lost |= uring_str(serial, tid, tgid, URS_PATH, addr);
		if (len >= OPEN_HOW_SIZE)
			lost |= uring_str(serial, tid, tgid, URS_HOW, addr2);
		break;
	case IORING_OP_RENAMEAT:
	case IORING_OP_SYMLINKAT:
	case IORING_OP_LINKAT:
		lost |= uring_str(serial, tid, tgid, URS_PATH, addr);
		lost |= uring_str(serial, tid, tgid, URS_PATH2, addr2);
		break;
	case IORING_OP_SETXATTR:
	case IORING_OP_GETXATTR:
		lost |= uring_str(serial, tid, tgid, URS_PATH, addr3);
		lost |= uring_str(serial, tid, tgid, URS_NAME, addr);
		break;
	case IORING_OP_FSETXATTR:
	case IORING_OP_FGETXATTR:
		lost |= uring_str(serial, tid, tgid, URS_NAME, addr);
		break;
	}
	return lost;
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(on_uring_submit, struct io_kiocb *req)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tgid = t->tgid, tid = t->pid;
	struct io_ring_ctx *rctx = req->ctx;
	struct uring_flight f = {};
	struct rec_uring *r;
	struct tstate *s;
	__u64 key = (__u64)req, sqe, addr = 0, len = 0, data = 0;
	__u32 head, ring_flags, op, sqe_flags = 0, idx;
	int xset, xget;

	if (noop || !is_target(tgid))
		return 0;
	ring_flags = BPF_CORE_READ(rctx, flags);
	/* io_get_sqe: the SQE just read is the one before cached_sq_head, through sq_array
	 * unless the ring has none (IORING_SETUP_NO_SQARRAY); 128-byte SQEs take two slots. */
	head = (BPF_CORE_READ(rctx, cached_sq_head) - 1) & (BPF_CORE_READ(rctx, sq_entries) - 1);
	idx = head;
	__u32 *sq_array = BPF_CORE_READ(rctx, sq_array);
	if (sq_array)
		bpf_probe_read_kernel(&idx, sizeof(idx), sq_array + head);
	if (ring_flags & IORING_SETUP_SQE128)
		idx <<= 1;
	sqe = (__u64)BPF_CORE_READ(rctx, sq_sqes) + (__u64)idx * 64;

	f.serial = __sync_fetch_and_add(&uring_serial, 1) + 1;
	op = BPF_CORE_READ(req, opcode);
	bpf_probe_read_kernel(&sqe_flags, 1, (void *)(sqe + 1));
	bpf_probe_read_kernel(&addr, 8, (void *)(sqe + 16));
	bpf_probe_read_kernel(&len, 4, (void *)(sqe + 24));
	if (ring_flags & IORING_SETUP_SQPOLL)
		f.flags |= UF_SQPOLL;
	if (sqe_flags & IOSQE_BUFFER_SELECT)
		f.flags |= UF_BUF_SELECT;
	/* An xattr request's value is at addr2 (set: copied now; get: at completion). */
	xset = op == IORING_OP_SETXATTR || op == IORING_OP_FSETXATTR;
	xget = op == IORING_OP_GETXATTR || op == IORING_OP_FGETXATTR;
	if (xset || xget)
		bpf_probe_read_kernel(&addr, 8, (void *)(sqe + 8));
	if ((uring_is_write(op) || xset) && !(f.flags & UF_BUF_SELECT) && !data_none_in) {
		struct ucopy u = {.addr = addr, .len = len, .serial = f.serial, .tid = tid, .tgid = tgid};
		data = uring_copy(&u);
		if (u.lost)
			f.flags |= UF_DATA_LOST;
	}
	if (uring_is_writev(op) && len && !(f.flags & UF_BUF_SELECT) && !data_none_in) {
		struct ucopy u = {.iov = addr, .niov = len, .len = LEN_CAP, .serial = f.serial,
				  .tid = tid, .tgid = tgid};
		data = uring_copy(&u);
		if (u.lost)
			f.flags |= UF_DATA_LOST;
	}
	if (uring_is_read(op) || xget || uring_is_readv(op)) {
		f.addr = addr;
		f.len = len;
		f.vec = uring_is_readv(op);
	}
	if ((op >= IORING_OP_OPENAT && op <= IORING_OP_GETXATTR) &&
	    uring_strs(f.serial, tid, tgid, op, sqe))
		f.flags |= UF_STR_LOST;
	f.mm = (__u64)t->mm;

	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		account_lost(LOST_URING, data);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->kind = RK_URING_SUBMIT;
	r->tid = tid;
	r->tgid = tgid;
	r->flags = f.flags;
	r->ts = bpf_ktime_get_ns();
	r->ctx = (__u64)rctx;
	r->serial = f.serial;
	r->opcode = op;
	r->data_len = data;
	r->ring_flags = ring_flags;
	s = bpf_task_storage_get(&tstates, t, 0, 0);
	if (s && s->active && s->nr == NR_IO_URING_ENTER) {
		r->enter_tid = s->entry_tid;
		r->enter_seq = s->seq;
	}
	bpf_probe_read_kernel(r->sqe, sizeof(r->sqe), (void *)sqe);
	r->user_data = *(__u64 *)&r->sqe[32];
	bpf_ringbuf_submit(r, wakeup());
	bpf_map_update_elem(&uring_flight, &key, &f, BPF_ANY);
	return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(on_uring_complete, struct io_ring_ctx *rctx, void *reqp, struct io_uring_cqe *cqe)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct io_kiocb *req = reqp;
	__u64 key = (__u64)req, data = 0, want;
	__u32 tgid = t->tgid, tid = t->pid, flags = 0;
	struct uring_flight *f;
	struct rec_uring *r;
	struct file *file;
	__s32 res;
	__u32 cflags;

	if (noop || !req)
		return 0;
	f = bpf_map_lookup_elem(&uring_flight, &key);
	if (!f && !is_target(tgid))
		return 0;
	res = BPF_CORE_READ(cqe, res);
	cflags = BPF_CORE_READ(cqe, flags);
	if (f) {
		flags = f->flags;
		if (f->len && res > 0 && !(flags & UF_BUF_SELECT) && !data_none_out) {
			want = (__u64)res < f->len || f->vec ? (__u64)res : f->len;
			if (f->mm == (__u64)t->mm) {
				struct ucopy u = {.addr = f->addr, .len = want, .serial = f->serial,
						  .tid = tid, .tgid = tgid};
				if (f->vec) {
					u.iov = f->addr;
					u.niov = f->len;
				}
				data = uring_copy(&u);
				if (u.lost)
					flags |= UF_DATA_LOST;
			} else {
				flags |= UF_NO_MM;
			}
		}
	} else {
		flags |= UF_NO_SUBMIT;
	}
	if (cflags & IORING_CQE_F_MORE)
		flags |= UF_MORE;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		account_lost(LOST_URING, data);
		goto out;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->kind = RK_URING_COMPLETE;
	r->tid = tid;
	r->tgid = tgid;
	r->flags = flags;
	r->ts = bpf_ktime_get_ns();
	r->ctx = (__u64)rctx;
	r->serial = f ? f->serial : 0;
	r->res = res;
	r->cflags = cflags;
	r->user_data = BPF_CORE_READ(cqe, user_data);
	r->opcode = BPF_CORE_READ(req, opcode);
	r->data_len = data;
	r->ring_flags = BPF_CORE_READ(rctx, flags);
	file = BPF_CORE_READ(req, file);
	if (file) {
		r->ino = BPF_CORE_READ(file, f_inode, i_ino);
		r->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	}
	bpf_ringbuf_submit(r, wakeup());
out:
	if (f && !(cflags & IORING_CQE_F_MORE))
		bpf_map_delete_elem(&uring_flight, &key);
	return 0;
}
