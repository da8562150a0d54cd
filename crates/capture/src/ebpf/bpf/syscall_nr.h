/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both programs (capture.bpf.c, profile.bpf.c) and user space size by the system call
 * number. build.rs turns these #defines into Rust constants (layout.rs): this is their one
 * definition.
 */
#ifndef RA_SYSCALL_NR_H
#define RA_SYSCALL_NR_H

#define MAX_NR 512 /* x86_64 system call numbers below this: rule table, call histograms */

#endif
