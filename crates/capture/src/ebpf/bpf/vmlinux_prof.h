/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel types the profiler touches beyond the capture program's (vmlinux_min.h): the
 * descriptor table, block requests, FUSE requests. CO-RE relocated by member name, like
 * vmlinux_min.h: only names and member types matter, not layouts.
 */
#ifndef RA_VMLINUX_PROF_H
#define RA_VMLINUX_PROF_H

#include "vmlinux_min.h"

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct gendisk {
	int major;
	int first_minor;
};

struct request_queue {
	struct gendisk *disk;
};

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	unsigned int __data_len;
};

struct fuse_in_header {
	unsigned int len;
	unsigned int opcode;
	unsigned long long unique;
};

struct fuse_req {
	struct {
		struct fuse_in_header h;
	} in;
};

struct dentry {
	struct dentry *d_parent;
	struct inode *d_inode;
	struct super_block *d_sb;
};

struct path {
	struct dentry *dentry;
};

/* struct file of vmlinux_min.h has f_inode only: its path is reached through this twin (the
 * same kernel type name, so CO-RE relocates against struct file). */
struct file___path {
	struct path f_path;
};

/* And its file position (--value offset, seek-distance). */
struct file___pos {
	long long f_pos;
};

struct writeback_control;

#pragma clang attribute pop

/* include/linux/blk_types.h */
#define REQ_OP_MASK 0xff

#endif
