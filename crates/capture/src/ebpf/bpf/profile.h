/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between profile.bpf.c and user space (crates/capture/src/ebpf/profile.rs): its
 * one definition. build.rs turns every #define below into a Rust constant; the map key and
 * value types are in the generated skeleton, whose layout profile.rs's tests compare with the
 * one it reads. The _Static_asserts at the end pin the layout.
 */
#ifndef RA_PROFILE_H
#define RA_PROFILE_H

#include "syscall_nr.h" /* MAX_NR: the call array's histograms per epoch */

#define NBUCKETS 64 /* log2 buckets of a histogram (ra_profile's BUCKETS) */

/* Layers: the `layer` of a key (user space names them). */
#define L_SYSCALL 0
#define L_BLOCK 1
#define L_FUSE 2
#define L_EXT4 3
#define L_WB 4
#define L_CALIB 5
#define L_CLOCK 6

/* --by: what the group of a syscall key is (rodata `by`). */
#define BY_CALL 0
#define BY_FS 1
#define BY_PID 2
#define BY_COMM 3
#define BY_PATH 4

/* Counters (`counters`, per-CPU array). */
#define C_GET_PAGES 0   /* pages a target's reads asked the page cache for */
#define C_ADD_READ 1    /* pages added while a target thread was in a read-class call */
#define C_NO_SPACE 2    /* a histogram that could not be created: the map was full */
#define C_ADD_OTHER 3   /* pages added otherwise (writes, mmap faults, other processes) */
#define NCOUNTERS 4

/* ext4 operations (the `op` of L_EXT4 keys). */
#define E_SYNC 0
#define E_TRUNCATE 1
#define E_UNLINK 2
#define E_FALLOCATE 3

/* --value: what the syscall histograms hold instead of latencies (rodata `value_kind`). */
#define V_LATENCY 0
#define V_SIZE 1    /* bytes a read- or write-class call moved (its return value) */
#define V_OFFSET 2  /* the file offset it moved them at (its offset argument, or f_pos) */
#define V_SEEK 3    /* bytes between that offset and the end of the previous one on the file */
#define V_QDEPTH 4  /* I/O-class calls of the target in flight when it began, itself included */

/* `fdargs` values, by call number (user space fills them from the registry). */
#define FD_RETURNED 0x80 /* the call returns a descriptor */
#define READ_CLASS 0x40
#define IO_CLASS 0x20    /* read, write, sync, async: counted by --value queue-depth */
#define WRITE_CLASS 0x10
#define FD_ARG 0x0f      /* 1 + the index of the argument that is a descriptor; 0: none */

/* A histogram's key (`hists`). */
struct hkey {
	__u16 layer;
	__u16 epoch;
	__u32 op;
	__u64 group;
	char comm[16];
};

/* A histogram (`hists`, `calls`), per CPU. */
struct hval {
	__u64 buckets[NBUCKETS];
	__u64 count;
	__u64 total_ns;
	__u64 nmin; /* ~min: zero-initialised means "none yet" */
	__u64 max_ns;
	__u64 errors;
};

#define RA_SIZE(s, n) _Static_assert(sizeof(struct s) == (n), "struct " #s ": size changed")
#define RA_AT(s, f, o) \
	_Static_assert(__builtin_offsetof(struct s, f) == (o), "struct " #s ": " #f " moved")

RA_SIZE(hkey, 32);
RA_AT(hkey, layer, 0);
RA_AT(hkey, epoch, 2);
RA_AT(hkey, op, 4);
RA_AT(hkey, group, 8);
RA_AT(hkey, comm, 16);

RA_SIZE(hval, (NBUCKETS + 5) * 8);
RA_AT(hval, buckets, 0);
RA_AT(hval, count, NBUCKETS * 8);
RA_AT(hval, total_ns, NBUCKETS * 8 + 8);
RA_AT(hval, nmin, NBUCKETS * 8 + 16);
RA_AT(hval, max_ns, NBUCKETS * 8 + 24);
RA_AT(hval, errors, NBUCKETS * 8 + 32);

#endif
