// SPDX-License-Identifier: GPL-2.0
/*
 * reanimator's live profiler, kernel side (`reanimator profile`): FSprof's latency histograms
 * aggregated IN THE KERNEL. Nothing per call leaves the kernel: each layer's enter/exit pair
 * adds one latency to a log2 histogram in a per-CPU hash map (`hists`), which user space reads
 * once per interval (cumulative counts: user space takes differences, so nothing is reset and
 * nothing is lost between two reads).
 *
 * Layers (each attached only when asked for):
 *   syscall  tp_btf/sys_enter + sys_exit, for the target set (a command's process tree, a PID's,
 *            a cgroup's, or every process but ours); the key is the call number, plus the
 *            group: the device of the file an fd argument (or a returned fd) names (--by fs),
 *            the process (--by pid), its name (--by comm), or the directory `path_depth`
 *            levels below the root of that file's file system (--by path).
 *   block    block_rq_issue -> block_rq_complete per request, keyed by operation and device.
 *   fuse     fuse_request_send -> fuse_request_end per request, keyed by opcode.
 *   ext4     ext4_{sync_file,truncate,unlink,fallocate}_{enter,exit}, keyed by op and device.
 *   wb       writeback_single_inode_start -> writeback_single_inode, keyed by device.
 *   cache    mm_filemap_get_pages (pages asked of the page cache by reads) and
 *            mm_filemap_add_to_page_cache (pages added, large folios counted by order), split by whether the adding thread
 *            is a target's inside a read-class call (its misses and read-ahead): counters.
 *
 * Bucket k of a histogram holds latencies 2^(k-1) <= ns < 2^k (bucket 0: 0 ns), FSprof's.
 * `calib_tgid` (set by user space during its start-up calibration only) makes our own thread a
 * target whose calls go to layer L_CALIB, with a back-to-back clock read measured beside each.
 */
#include "vmlinux_prof.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "folio.h"
#include "profile.h"

char LICENSE[] SEC("license") = "GPL";

#define TS_COMPAT 0x0002

/* Set by user space before load. */
const volatile __u32 self_tgid = 0;
const volatile __u32 use_cgroup = 0;
const volatile __u32 all_tasks = 0;
const volatile __u32 by = BY_CALL;
/* --by call: histograms in the per-CPU array `calls` indexed by epoch * MAX_NR + call number
 * (no hashing on the hot path) instead of the hash map. */
const volatile __u32 call_array = 0;
/* --by path: the directory this many levels below the file system's root. */
const volatile __u32 path_depth = 1;
/* --value: what the syscall histograms hold instead of latencies (V_*, profile.h). */
const volatile __u32 value_kind = V_LATENCY;
/* --sample N: each call of a target thread is timed with probability 1/N (random, so that a
 * periodic sequence of calls such as read, write, read, write does not alias with N). */
const volatile __u32 sample_n = 1;
/* Set by user space at run time. */
__u32 calib_tgid = 0;
/* The interval's epoch bit, part of every key (see profile.rs). */
__u32 epoch = 0;
/* Subtracted from every syscall latency (--calibrate), saturating at 0. */
__u64 self_delay_ns = 0;

/* Sized by user space from the memory budget. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hkey);
	__type(value, struct hval);
} hists SEC(".maps");

/* --by call with `call_array`: one histogram per epoch and call number. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * MAX_NR);
	__type(key, __u32);
	__type(value, struct hval);
} calls SEC(".maps");

/* One zeroed value to create histograms from (a value is larger than the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hval);
} zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* A call in progress on this thread. */
struct inflight {
	__u64 ts;
	__u64 group;
	__u64 dev;
	__u32 nr;
	__u8 active;
	/* A target thread (not re-checked at each call but with --cgroup). */
	__u8 target;
	/* --value queue-depth: this call is counted in `io_inflight`. */
	__u8 io;
	/* --value: the call's file offset (offset, seek-distance), its file, the queue depth. */
	__u64 offset;
	__u64 file;
	__u64 depth;
	/* ext4 operations in progress (they nest inside a call). */
	__u64 ext4_ts[4];
	__u64 ext4_dev[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} tasks SEC(".maps");

/* --value queue-depth: the target's I/O-class calls in flight. */
__u64 io_inflight = 0;

/* --value seek-distance: where the last read or write of each open file ended, by its
 * struct file pointer (LRU: files closed long ago fall out). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} file_ends SEC(".maps");

/* Requests in flight: issue time by pointer. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} reqs SEC(".maps");

/* Inodes being written back: start time by pointer. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} wbs SEC(".maps");

static __always_inline void count(__u32 c, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);

	if (v)
		*v += n;
}

static __always_inline __u32 bucket_of(__u64 ns)
{
	/* Bit length, by halving: at most 6 steps. */
	__u32 b = 0;

	if (ns >> 32) { b += 32; ns >>= 32; }
	if (ns >> 16) { b += 16; ns >>= 16; }
	if (ns >> 8) { b += 8; ns >>= 8; }
	if (ns >> 4) { b += 4; ns >>= 4; }
	if (ns >> 2) { b += 2; ns >>= 2; }
	if (ns >> 1) { b += 1; ns >>= 1; }
	return b + (__u32)ns;
}

static __always_inline void add(struct hval *v, __u64 ns, int failed)
{
	__u32 b = bucket_of(ns);

	if (b >= NBUCKETS)
		b = NBUCKETS - 1;
	/* Per-CPU values: this CPU's copy only, with migration disabled: plain adds. */
	v->buckets[b] += 1;
	v->count += 1;
	v->total_ns += ns;
	if (~ns > v->nmin)
		v->nmin = ~ns;
	if (ns > v->max_ns)
		v->max_ns = ns;
	v->errors += failed;
}

static __always_inline void record(struct hkey *k, __u64 ns, int failed)
{
	struct hval *v;

	k->epoch = epoch;
	v = bpf_map_lookup_elem(&hists, k);

	if (!v) {
		__u32 z = 0;
		struct hval *init = bpf_map_lookup_elem(&zero, &z);

		if (!init)
			return;
		/* Fails when another CPU created it first: then the lookup finds it. */
		bpf_map_update_elem(&hists, k, init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&hists, k);
		if (!v) {
			count(C_NO_SPACE, 1);
			return;
		}
	}
	add(v, ns, failed);
}

static __always_inline int is_target(struct task_struct *t)
{
	__u32 tgid = t->tgid;

	if (tgid == calib_tgid && tgid)
		return 1;
	if (tgid == self_tgid)
		return 0;
	if (all_tasks)
		return 1;
	if (use_cgroup)
		return bpf_current_task_under_cgroup(&cgroups, 0) == 1;
	return bpf_map_lookup_elem(&targets, &tgid) != 0;
}

/* The file behind descriptor `fd` of the current task, or 0. */
static __always_inline struct file *fd_file(struct task_struct *t, long fd)
{
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = 0;
	unsigned int max;

	if (fd < 0)
		return 0;
	fdt = BPF_CORE_READ(t, files, fdt);
	if (!fdt)
		return 0;
	max = BPF_CORE_READ(fdt, max_fds);
	if ((unsigned long)fd >= max)
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return 0;
	return f;
}

#define MAX_DEPTH 32

/* --by path: the inode number of the directory `path_depth` levels below the root of the
 * file's file system (the file's own directory when it lies shallower), and the device. */
static __always_inline __u64 file_prefix(struct file *f, __u64 *dev)
{
	struct file___path *fp = (void *)f;
	struct dentry *d = BPF_CORE_READ(fp, f_path.dentry), *p;
	__u32 depth = 0, up;

	*dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	if (!d)
		return 0;
	/* How deep is the file? */
	p = d;
	for (int i = 0; i < MAX_DEPTH; i++) {
		struct dentry *q = BPF_CORE_READ(p, d_parent);

		if (!q || q == p)
			break;
		depth++;
		p = q;
	}
	/* Climb to the prefix: depth - path_depth levels up, at least to the file's directory. */
	up = depth > path_depth ? depth - path_depth : (depth ? 1 : 0);
	for (int i = 0; i < MAX_DEPTH; i++) {
		if (i >= up)
			break;
		d = BPF_CORE_READ(d, d_parent);
	}
	return BPF_CORE_READ(d, d_inode, i_ino);
}

/* The group of a call on `fd`: its file's device (--by fs) or path prefix (--by path). */
static __always_inline void fd_group(struct task_struct *t, long fd, __u64 *group, __u64 *dev)
{
	struct file *f = fd_file(t, fd);

	if (!f)
		return;
	if (by == BY_PATH)
		*group = file_prefix(f, dev);
	else
		*group = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
}

/* Which argument of a call is a descriptor (user space fills it from the registry): 1 + the
 * argument's index (FD_ARG), or 0; and its classes (FD_RETURNED, *_CLASS: profile.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_NR);
	__type(key, __u32);
	__type(value, __u8);
} fdargs SEC(".maps");

/* --value offset, seek-distance: which argument of a call is its file offset (1 + index), 0
 * for none (the file position is used). Filled by user space from the registry. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_NR);
	__type(key, __u32);
	__type(value, __u8);
} offargs SEC(".maps");

static __always_inline long arg_of(struct pt_regs *regs, int i)
{
	switch (i) {
	case 0: return regs->di;
	case 1: return regs->si;
	case 2: return regs->dx;
	case 3: return regs->r10;
	case 4: return regs->r8;
	default: return regs->r9;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(prof_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	/* A target thread's storage says so: one lookup instead of the target-set lookup. */
	struct inflight *s = bpf_task_storage_get(&tasks, t, 0, 0);

	if (!s || !s->target || use_cgroup) {
		if (!is_target(t))
			return 0;
		if (!s)
			s = bpf_task_storage_get(&tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!s)
			return 0;
		/* Our own thread is a target only while calibrating: never remembered. */
		s->target = t->tgid != self_tgid;
	}
	if ((__u64)id >= MAX_NR || (t->thread_info.status & TS_COMPAT))
		return 0;
	if (value_kind == V_QDEPTH && s->target) {
		__u32 nr = id;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);

		s->depth = 0;
		if (fa && (*fa & IO_CLASS)) {
			s->depth = __sync_fetch_and_add(&io_inflight, 1) + 1;
			s->io = 1;
		}
	}
	if (sample_n > 1 && s->target) {
		if (bpf_get_prandom_u32() % sample_n) {
			s->active = 0;
			return 0;
		}
	}
	s->nr = id;
	s->group = 0;
	s->dev = 0;
	if (by == BY_FS || by == BY_PATH) {
		__u32 nr = id;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);

		if (fa && (*fa & FD_ARG)) {
			long fd;

			switch ((*fa & FD_ARG) - 1) {
			case 0: fd = regs->di; break;
			case 1: fd = regs->si; break;
			case 2: fd = regs->dx; break;
			case 3: fd = regs->r10; break;
			default: fd = regs->r8; break;
			}
			fd_group(t, (int)fd, &s->group, &s->dev);
		}
	}
	if (value_kind == V_OFFSET || value_kind == V_SEEK) {
		__u32 nr = id;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);
		__u8 *oa = bpf_map_lookup_elem(&offargs, &nr);

		s->file = 0;
		if (fa && (*fa & (READ_CLASS | WRITE_CLASS)) && (*fa & FD_ARG)) {
			struct file *f = fd_file(t, (int)arg_of(regs, (*fa & FD_ARG) - 1));

			if (f) {
				s->file = (__u64)f;
				if (oa && *oa)
					s->offset = arg_of(regs, *oa - 1);
				else
					s->offset = BPF_CORE_READ((struct file___pos *)f, f_pos);
			}
		}
	}
	s->active = 1;
	s->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(prof_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct task_struct *t = bpf_get_current_task_btf();
	struct inflight *s = bpf_task_storage_get(&tasks, t, 0, 0);
	struct hkey k = {};
	int failed = ret < 0 && ret >= -4095;
	__u64 ns;

	if (!s)
		return 0;
	if (s->io) {
		__sync_fetch_and_sub(&io_inflight, 1);
		s->io = 0;
	}
	if (!s->active)
		return 0;
	s->active = 0;
	ns = now - s->ts;
	if (!s->target) {
		/* Only the calibrating thread is measured without being a remembered target:
		 * this call, and a back-to-back clock read beside it. */
		__u64 a = bpf_ktime_get_ns();
		__u64 b = bpf_ktime_get_ns();
		struct hkey c = { .layer = L_CLOCK };

		k.layer = L_CALIB;
		k.op = s->nr;
		record(&k, ns, 0);
		record(&c, b - a, 0);
		return 0;
	}
	ns = ns > self_delay_ns ? ns - self_delay_ns : 0;
	if (value_kind != V_LATENCY) {
		/* A value instead of the latency; calls without one are not counted. */
		__u32 nr = s->nr;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);
		int moves = fa && (*fa & (READ_CLASS | WRITE_CLASS)) && !failed;

		switch (value_kind) {
		case V_SIZE:
			if (!moves)
				return 0;
			ns = ret;
			break;
		case V_OFFSET:
			if (!moves || !s->file)
				return 0;
			ns = s->offset;
			break;
		case V_SEEK: {
			__u64 end, *last;

			if (!moves || !s->file)
				return 0;
			last = bpf_map_lookup_elem(&file_ends, &s->file);
			ns = last ? (s->offset > *last ? s->offset - *last : *last - s->offset)
				  : s->offset;
			end = s->offset + ret;
			bpf_map_update_elem(&file_ends, &s->file, &end, BPF_ANY);
			break;
		}
		default:
			if (!s->depth)
				return 0;
			ns = s->depth;
			s->depth = 0;
		}
	}
	if (call_array && by == BY_CALL) {
		__u32 idx = (epoch & 1) * MAX_NR + (s->nr & (MAX_NR - 1));
		struct hval *v = bpf_map_lookup_elem(&calls, &idx);

		if (v)
			add(v, ns, failed);
		return 0;
	}
	k.layer = L_SYSCALL;
	k.op = s->nr;
	switch (by) {
	case BY_FS:
	case BY_PATH: {
		__u32 nr = s->nr;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);
		__u64 dev = s->dev;

		k.group = s->group;
		if (fa && (*fa & FD_RETURNED) && ret >= 0)
			fd_group(t, ret, &k.group, &dev);
		if (by == BY_PATH)
			__builtin_memcpy(k.comm, &dev, sizeof(dev));
		break;
	}
	case BY_PID:
		k.group = t->tgid;
		break;
	case BY_COMM:
		bpf_get_current_comm(k.comm, sizeof(k.comm));
		break;
	}
	record(&k, ns, failed);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(prof_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (use_cgroup || all_tasks || ctgid == ptgid)
		return 0;
	if (bpf_map_lookup_elem(&targets, &ptgid))
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(prof_exit, struct task_struct *t, bool group_dead)
{
	__u32 tgid = t->tgid;

	if (group_dead && !use_cgroup && !all_tasks)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* ---- block ---------------------------------------------------------------------------- */

SEC("tp_btf/block_rq_issue")
int BPF_PROG(prof_rq_issue, struct request *rq)
{
	__u64 key = (__u64)rq, ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&reqs, &key, &ts, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(prof_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;
	__u64 *ts = bpf_map_lookup_elem(&reqs, &key);
	struct hkey k = { .layer = L_BLOCK };
	struct gendisk *disk;

	if (!ts)
		return 0;
	__u64 ns = bpf_ktime_get_ns() - *ts;

	bpf_map_delete_elem(&reqs, &key);
	k.op = BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK;
	disk = BPF_CORE_READ(rq, q, disk);
	if (disk)
		k.group = ((__u64)BPF_CORE_READ(disk, major) << 20) |
			  (__u32)BPF_CORE_READ(disk, first_minor);
	record(&k, ns, error != 0);
	return 0;
}

/* ---- FUSE ----------------------------------------------------------------------------- */

SEC("tp_btf/fuse_request_send")
int BPF_PROG(prof_fuse_send, struct fuse_req *req)
{
	__u64 key = (__u64)req, ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&reqs, &key, &ts, BPF_ANY);
	return 0;
}

SEC("tp_btf/fuse_request_end")
int BPF_PROG(prof_fuse_end, struct fuse_req *req)
{
	__u64 key = (__u64)req;
	__u64 *ts = bpf_map_lookup_elem(&reqs, &key);
	struct hkey k = { .layer = L_FUSE };

	if (!ts)
		return 0;
	__u64 ns = bpf_ktime_get_ns() - *ts;

	bpf_map_delete_elem(&reqs, &key);
	k.op = BPF_CORE_READ(req, in.h.opcode);
	record(&k, ns, 0);
	return 0;
}

/* ---- ext4 ----------------------------------------------------------------------------- */

static __always_inline void ext4_enter(__u32 op, __u64 dev)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct inflight *s = bpf_task_storage_get(&tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!s || op >= 4)
		return;
	s->ext4_ts[op] = bpf_ktime_get_ns();
	s->ext4_dev[op] = dev;
}

static __always_inline void ext4_exit(__u32 op, int ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct inflight *s = bpf_task_storage_get(&tasks, t, 0, 0);
	struct hkey k = { .layer = L_EXT4, .op = op };

	if (!s || op >= 4 || !s->ext4_ts[op])
		return;
	__u64 ns = bpf_ktime_get_ns() - s->ext4_ts[op];

	s->ext4_ts[op] = 0;
	k.group = s->ext4_dev[op];
	record(&k, ns, ret < 0);
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(prof_ext4_sync_enter, struct file *file, int datasync)
{
	ext4_enter(E_SYNC, BPF_CORE_READ(file, f_inode, i_sb, s_dev));
	return 0;
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(prof_ext4_sync_exit, struct inode *inode, int ret)
{
	ext4_exit(E_SYNC, ret);
	return 0;
}

SEC("tp_btf/ext4_truncate_enter")
int BPF_PROG(prof_ext4_trunc_enter, struct inode *inode)
{
	ext4_enter(E_TRUNCATE, BPF_CORE_READ(inode, i_sb, s_dev));
	return 0;
}

SEC("tp_btf/ext4_truncate_exit")
int BPF_PROG(prof_ext4_trunc_exit, struct inode *inode)
{
	ext4_exit(E_TRUNCATE, 0);
	return 0;
}

SEC("tp_btf/ext4_unlink_enter")
int BPF_PROG(prof_ext4_unlink_enter, struct inode *parent, struct dentry *dentry)
{
	ext4_enter(E_UNLINK, BPF_CORE_READ(parent, i_sb, s_dev));
	return 0;
}

SEC("tp_btf/ext4_unlink_exit")
int BPF_PROG(prof_ext4_unlink_exit, struct dentry *dentry, int ret)
{
	ext4_exit(E_UNLINK, ret);
	return 0;
}

SEC("tp_btf/ext4_fallocate_enter")
int BPF_PROG(prof_ext4_falloc_enter, struct inode *inode, long long offset, long long len, int mode)
{
	ext4_enter(E_FALLOCATE, BPF_CORE_READ(inode, i_sb, s_dev));
	return 0;
}

SEC("tp_btf/ext4_fallocate_exit")
int BPF_PROG(prof_ext4_falloc_exit, struct inode *inode, long long offset, unsigned int max_blocks,
	     int ret)
{
	ext4_exit(E_FALLOCATE, ret);
	return 0;
}

/* ---- writeback ------------------------------------------------------------------------ */

SEC("tp_btf/writeback_single_inode_start")
int BPF_PROG(prof_wb_start, struct inode *inode, struct writeback_control *wbc,
	     unsigned long nr_to_write)
{
	__u64 key = (__u64)inode, ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&wbs, &key, &ts, BPF_ANY);
	return 0;
}

SEC("tp_btf/writeback_single_inode")
int BPF_PROG(prof_wb_end, struct inode *inode, struct writeback_control *wbc,
	     unsigned long nr_to_write)
{
	__u64 key = (__u64)inode;
	__u64 *ts = bpf_map_lookup_elem(&wbs, &key);
	struct hkey k = { .layer = L_WB };

	if (!ts)
		return 0;
	__u64 ns = bpf_ktime_get_ns() - *ts;

	bpf_map_delete_elem(&wbs, &key);
	k.group = BPF_CORE_READ(inode, i_sb, s_dev);
	record(&k, ns, 0);
	return 0;
}

/* ---- page cache ----------------------------------------------------------------------- */

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(prof_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	/* The target's reads only (its threads inside a call), like the pages they add. */
	struct inflight *s = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);

	if (s && s->active)
		count(C_GET_PAGES, last_index >= index ? last_index - index + 1 : 1);
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(prof_add_folio, struct folio *folio)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct inflight *s = bpf_task_storage_get(&tasks, t, 0, 0);
	__u64 pages = folio_pages(folio);

	if (s && s->active) {
		__u32 nr = s->nr;
		__u8 *fa = bpf_map_lookup_elem(&fdargs, &nr);

		if (fa && (*fa & READ_CLASS)) {
			count(C_ADD_READ, pages);
			return 0;
		}
	}
	count(C_ADD_OTHER, pages);
	return 0;
}
