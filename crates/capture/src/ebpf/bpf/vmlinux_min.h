/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the capture program touches, instead of a generated vmlinux.h.
 *
 * Every struct is marked preserve_access_index: clang records each field access as a CO-RE
 * relocation (by type and field NAME), and libbpf rewrites the offsets against the running
 * kernel's BTF (/sys/kernel/btf/vmlinux) at load time. So these declarations only need the
 * right member names and types, not the kernel's layout, and the object runs on any kernel
 * with BTF whatever its struct layouts. The build needs no bpftool and no kernel BTF.
 * Constants are copied from the kernel UAPI (include/uapi/linux/bpf.h); they are ABI.
 */
#ifndef RA_VMLINUX_MIN_H
#define RA_VMLINUX_MIN_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0
typedef int pid_t;

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};
enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};
enum {
	BPF_F_NO_PREALLOC = 1,
};
enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
};
enum {
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
};
enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

struct bpf_dynptr {
	__u64 __opaque[2];
} __attribute__((aligned(8)));

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct pt_regs {
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
};

typedef struct {
	unsigned int val;
} kuid_t;
typedef struct {
	unsigned int val;
} kgid_t;

struct cred {
	kuid_t uid;
	kgid_t gid;
};

struct upid {
	int nr;
};

struct pid {
	struct upid numbers[1];
};

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;
	struct pid *pids[4];
	int group_exit_code; /* signal_generate: the fatal signal that ends the group */
	unsigned int flags;  /* SIGNAL_GROUP_EXIT */
};

struct thread_info {
	unsigned int status;
};

typedef struct {
	unsigned long sig[1];
} sigset_t;

struct sigpending {
	sigset_t signal;
};

/* sched_process_exec: the name the exec was given (kernel copy). */
struct linux_binprm {
	const char *filename;
};

/* The new image's argv and envp strings, back to back (after exec). */
struct mm_struct {
	unsigned long arg_start;
	unsigned long arg_end;
	unsigned long env_start;
	unsigned long env_end;
};

struct task_struct {
	struct thread_info thread_info;
	int pid;
	int tgid;
	struct task_struct *real_parent;
	struct task_struct *group_leader;
	const struct cred *cred;
	struct signal_struct *signal;
	struct sigpending pending;
	int exit_code;
	struct mm_struct *mm;
	struct files_struct *files;
	int pagefault_disabled;
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct super_block {
	unsigned int s_dev;
	unsigned long s_magic;
};

struct inode {
	unsigned int i_flags;
	unsigned long i_ino;
	struct super_block *i_sb;
};

struct file {
	struct inode *f_inode;
	struct address_space *f_mapping;
	unsigned int f_flags;
};

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
};

/* The page cache of a file: an xarray of folios by page index (include/linux/xarray.h). */
struct xarray {
	void *xa_head;
};

struct xa_node {
	unsigned char shift;
	void *slots[64];
};

struct address_space {
	struct inode *host;
	struct xarray i_pages;
};

/* The order of a large folio (include/linux/mm.h folio_order: `_flags_1 & 0xff` when
 * PG_head is set in its flags, the first word of every folio); the file and the page index
 * of its first page. */
struct folio {
	struct address_space *mapping;
	unsigned long index;
	unsigned long _flags_1;
};

/* include/linux/mm.h. A MAP_SHARED mapping of a file opened read-only has VM_MAYSHARE
 * without VM_SHARED (do_mmap clears VM_SHARED when the file is not open for writing). */
#define VM_EXEC 0x00000004
#define VM_SHARED 0x00000008
#define VM_MAYSHARE 0x00000080
/* include/linux/fs.h: a file opened to be executed (execve's image and ELF interpreter);
 * in f_flags, not f_mode (do_open_execat passes it with the open flags). */
#define __FMODE_EXEC 0x20
/* include/linux/fs.h: an inode internal to the kernel (shmem_kernel_file_setup: shared
 * anonymous memory, /dev/zero mapped shared, System V shared memory; anonymous inodes). */
#define S_PRIVATE (1 << 9)
/* include/uapi/linux/magic.h: tmpfs and shmem (memfd), whose pages are never written back */
#define TMPFS_MAGIC 0x01021994
/* arch/x86/include/asm/trap_pf.h */
#define X86_PF_PROT 1
#define X86_PF_WRITE 2


/* io_uring (io_uring/io_uring.c, include/linux/io_uring_types.h): the request the
 * io_uring_submit_req and io_uring_complete tracepoints pass, and the ring it belongs to.
 * The members sit in anonymous structs in the kernel; CO-RE finds them by name. */
struct io_uring_sqe {
	__u8 opcode;
};

struct io_uring_cqe {
	__u64 user_data;
	__s32 res;
	__u32 flags;
};

struct io_ring_ctx {
	unsigned int flags;
	__u32 *sq_array;
	struct io_uring_sqe *sq_sqes;
	unsigned int cached_sq_head;
	unsigned int sq_entries;
};

struct io_kiocb {
	struct file *file;
	__u8 opcode;
	struct io_ring_ctx *ctx;
};

#pragma clang attribute pop

/* include/linux/page-flags.h; the value is relocated against the running kernel's. */
enum pageflags {
	PG_head = 6,
};

/* include/linux/pid.h */
enum pid_type {
	PIDTYPE_PID,
	PIDTYPE_TGID,
	PIDTYPE_PGID,
	PIDTYPE_SID,
};

#endif
