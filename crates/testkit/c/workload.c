/*
 * workload.c: reanimator's conformance workload.
 *
 *     workload SCRATCH_DIR LOG_FILE
 *
 * Makes every system call of the default capture set (every registry entry whose class is not
 * Other; crates/syscalls/src/defs.rs) at least once, directly through syscall(2) so glibc cannot
 * substitute another call, with distinctive sentinel arguments ("RA-SENTINEL-<call>" data,
 * offsets like 0x5eed, odd counts, mode 0640). It works inside SCRATCH_DIR, which it creates
 * (mkdir) and enters (chdir). A few calls also fail on purpose (ENOENT, EBADF, EEXIST, ENODATA,
 * ENOTTY) to check errno and the "no out-buffer on failure" rule.
 *
 * For every call it appends one JSON line to LOG_FILE (never stdout):
 *
 *   {"pid":P,"call":"<kernel name>","args":{"<man-page arg name>":VALUE,...},"ret":R,"errno":E}
 *
 * with VALUE, following the capture rules the recorder must implement:
 *   N                      an integer argument as the kernel saw the register (fds, flags,
 *                          counts, offsets, addresses; 32-bit arguments are passed
 *                          sign-extended, so N is the same read as int or as long)
 *   null                   a NULL pointer, or an out-buffer of a failed call (not captured)
 *   {"hex":"..."}          exact bytes: a path or C string WITH its trailing NUL, an in-buffer
 *                          (captured at entry), or a successful out-buffer/struct with the
 *                          registry's length rule (Len::Ret -> ret bytes, Len::Struct -> the
 *                          struct, Len::DerefArg -> *len after the call)
 *   {"in_hex":"...","out_hex":"..."}
 *                          an in/out struct (loff_t * of sendfile, copy_file_range, splice):
 *                          its bytes before and after the call; the trace may hold either
 *   {"iov":[{"requested":N,"hex":"..."},...]}
 *                          an iovec array: requested = iov_len; data = for IovIn the bytes
 *                          given (total truncated to ret), for IovOut the bytes filled (ret
 *                          spread over the vectors in order)
 *   {"strings":["hex",...]}
 *                          argv/envp, each string without its NUL
 *   {"contains_hex":"..."} a struct msghdr (sendmsg/recvmsg) whose encoding the registry does
 *                          not pin down: the captured value must contain these data bytes
 * "ret" is the raw return value (-1 on failure), "errno" 0 on success. Both are null for
 * exit/exit_group, which never return. execve/execveat that succeed are logged BEFORE the call
 * (ret 0, the value the kernel returns in the new image). Calls made in child processes carry
 * the child's pid; the parent logs the calls of its vfork child (which must not touch memory).
 *
 * The first line is {"log_fd":N,"pid":P,"uid":U,"gid":G}. Every log line is one write(2) to fd N,
 * so these writes appear in the trace too: the test skips writes to fd N. Before that first line
 * the program makes only glibc's startup calls and the openat of the log; after it, every
 * storage-class call it makes is logged (no stdio, no malloc: the JSON is built in a static
 * buffer). getpid/wait4/getuid are not in the storage set.
 *
 * Exclusions (calls of the storage set NOT made here; keep in sync with EXCLUDED in
 * crates/cli/tests/record_conformance.rs):
 *   mmappread, mmappwrite   Re-Animator pseudo-calls (loads/stores through a file mapping,
 *                           synthesized by a tracer): no syscall number, cannot be called.
 *   io_uring_op             an io_uring request (pseudo-call): c/uring.c makes them.
 *   signal_deliver          a delivered signal (a record, no call; the children's SIGCHLD
 *                           are recorded and left out of the comparison).
 * Everything else is made, the dangerous ones in forked children: chroot (clone child, which
 * then exits), setsid/setpgid (fork child), execve (fork child, execs /usr/bin/true; plus a
 * failing execve in the parent), execveat (clone3 child), exit (vfork child),
 * exit_group (clone child, the parent's last call).
 *
 * x86_64 only (raw syscall numbers of legacy calls such as open/stat/fork, and an inline-asm
 * vfork). Build: cc -O1 -g -Wall -D_GNU_SOURCE -pthread -o workload workload.c
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#if !defined(__x86_64__)
#include <unistd.h>
int main(void)
{
	static const char msg[] = "workload: x86_64 only\n";
	(void)!write(2, msg, sizeof msg - 1);
	return 2;
}
#else

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef FS_IOC_GETFLAGS
#define FS_IOC_GETFLAGS _IOR('f', 1, long) /* 0x80086601: bit 31 set */
#endif
#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

/* struct open_how (linux/openat2.h) and struct clone_args v2 (linux/sched.h), spelled out so
 * the program does not depend on the UAPI headers' versions. */
struct ra_open_how {
	uint64_t flags, mode, resolve;
};
struct ra_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
		set_tid, set_tid_size, cgroup;
};

/* ---- raw calls ---------------------------------------------------------------------------- */

static long g_r; /* result of the last call */
static int g_e;  /* its errno (0 on success) */

static long sc6(long nr, long a, long b, long c, long d, long e, long f)
{
	errno = 0;
	g_r = syscall(nr, a, b, c, d, e, f);
	g_e = g_r == -1 ? errno : 0;
	return g_r;
}

/* Every argument goes through (long): ints are sign-extended into the register, as glibc's
 * own wrappers do. */
#define SC0(nr) sc6(nr, 0, 0, 0, 0, 0, 0)
#define SC1(nr, a) sc6(nr, (long)(a), 0, 0, 0, 0, 0)
#define SC2(nr, a, b) sc6(nr, (long)(a), (long)(b), 0, 0, 0, 0)
#define SC3(nr, a, b, c) sc6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SC4(nr, a, b, c, d) sc6(nr, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SC5(nr, a, b, c, d, e) sc6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define SC6(nr, a, b, c, d, e, f)                                                              \
	sc6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define PTR(p) ((long)(uintptr_t)(p))

static void __attribute__((noreturn)) die(const char *what)
{
	static const char pre[] = "workload: ";
	syscall(SYS_write, 2, pre, sizeof pre - 1);
	syscall(SYS_write, 2, what, strlen(what));
	syscall(SYS_write, 2, "\n", 1);
	syscall(SYS_exit_group, 1);
	__builtin_unreachable();
}

/* ---- the JSON log ------------------------------------------------------------------------- */

static int g_log = -1;
static long g_pid;
static char jb[1 << 16];
static size_t jn;
static int jfirst;

static void jraw(const char *s, size_t n)
{
	if (jn + n >= sizeof jb)
		die("log line too long");
	memcpy(jb + jn, s, n);
	jn += n;
}
static void js(const char *s) { jraw(s, strlen(s)); }
static void jint(long v)
{
	char t[24];
	int i = sizeof t;
	unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
	do {
		t[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[--i] = '-';
	jraw(t + i, sizeof t - i);
}
static void jhex(const void *p, size_t n)
{
	static const char d[] = "0123456789abcdef";
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		char t[2] = {d[b[i] >> 4], d[b[i] & 15]};
		jraw(t, 2);
	}
}
static void flush(void)
{
	long w = syscall(SYS_write, g_log, jb, jn);
	if (w != (long)jn)
		die("writing the log");
	jn = 0;
}

/* One log line: begin(call), a_*(...) per argument, then end()/end_noreturn(). */
static void begin_pid(long pid, const char *call)
{
	jn = 0;
	js("{\"pid\":");
	jint(pid);
	js(",\"call\":\"");
	js(call);
	js("\",\"args\":{");
	jfirst = 1;
}
static void begin(const char *call) { begin_pid(g_pid, call); }
static void key(const char *name)
{
	if (!jfirst)
		js(",");
	jfirst = 0;
	js("\"");
	js(name);
	js("\":");
}
static void a_int(const char *name, long v)
{
	key(name);
	jint(v);
}
static void a_ptr(const char *name, const void *p) { a_int(name, PTR(p)); }
static void a_null(const char *name)
{
	key(name);
	js("null");
}
static void a_hex(const char *name, const void *p, size_t n)
{
	key(name);
	js("{\"hex\":\"");
	jhex(p, n);
	js("\"}");
}
/* A path or C string, with its NUL; NULL pointer -> null. */
static void a_str(const char *name, const char *s)
{
	if (s)
		a_hex(name, s, strlen(s) + 1);
	else
		a_null(name);
}
/* An out-buffer: its first n bytes when the call succeeded, else null. */
static void a_out(const char *name, const void *p, size_t n)
{
	if (g_r >= 0)
		a_hex(name, p, n);
	else
		a_null(name);
}
/* An in/out struct: bytes before (saved by the caller) and after. */
static void a_inout(const char *name, const void *before, const void *after, size_t n)
{
	key(name);
	js("{\"in_hex\":\"");
	jhex(before, n);
	js("\",\"out_hex\":\"");
	jhex(after, n);
	js("\"}");
}
/* An iovec array; `total` bytes spread over the vectors in order. */
/* A struct mmsghdr array as the recorder stores it: one vector per message, `requested` = the
 * message's buffer space, data = its first msg_len bytes (0 for messages past `done_msgs`). */
static void a_mmsg(const char *name, const struct mmsghdr *mm, int vlen, long done_msgs)
{
	key(name);
	js("{\"iov\":[");
	for (int i = 0; i < vlen; i++) {
		size_t requested = 0;
		for (size_t k = 0; k < mm[i].msg_hdr.msg_iovlen; k++)
			requested += mm[i].msg_hdr.msg_iov[k].iov_len;
		size_t left = i < done_msgs ? mm[i].msg_len : 0;
		js(i ? ",{\"requested\":" : "{\"requested\":");
		jint((long)requested);
		js(",\"hex\":\"");
		for (size_t k = 0; k < mm[i].msg_hdr.msg_iovlen && left; k++) {
			size_t n = mm[i].msg_hdr.msg_iov[k].iov_len < left ? mm[i].msg_hdr.msg_iov[k].iov_len : left;
			jhex(mm[i].msg_hdr.msg_iov[k].iov_base, n);
			left -= n;
		}
		js("\"}");
	}
	js("]}");
}

static void a_iov(const char *name, const struct iovec *iov, int cnt, long total)
{
	key(name);
	js("{\"iov\":[");
	for (int i = 0; i < cnt; i++) {
		size_t n = iov[i].iov_len;
		if (total < 0)
			total = 0;
		if ((long)n > total)
			n = (size_t)total;
		total -= (long)n;
		js(i ? ",{\"requested\":" : "{\"requested\":");
		jint((long)iov[i].iov_len);
		js(",\"hex\":\"");
		jhex(iov[i].iov_base, n);
		js("\"}");
	}
	js("]}");
}
static void a_strings(const char *name, char *const *v)
{
	key(name);
	js("{\"strings\":[");
	for (int i = 0; v[i]; i++) {
		js(i ? ",\"" : "\"");
		jhex(v[i], strlen(v[i]));
		js("\"");
	}
	js("]}");
}
static void a_contains(const char *name, const void *p, size_t n)
{
	key(name);
	js("{\"contains_hex\":\"");
	jhex(p, n);
	js("\"}");
}
static void end(long ret, int err)
{
	js("},\"ret\":");
	jint(ret);
	js(",\"errno\":");
	jint(err);
	js("}\n");
	flush();
}
/* The result of the last call. */
static void done(void) { end(g_r, g_e); }
static void end_noreturn(void)
{
	js("},\"ret\":null,\"errno\":null}\n");
	flush();
}

/* ---- small helpers ------------------------------------------------------------------------ */

/* Die unless the last call succeeded (for calls later steps depend on). */
static long need(const char *what)
{
	if (g_r < 0)
		die(what);
	return g_r;
}

static socklen_t unix_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	strcpy(sa->sun_path, path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

static void reap(long pid)
{
	int st = 0;
	if (syscall(SYS_wait4, pid, &st, 0, NULL) != pid)
		die("wait4");
	if (!WIFEXITED(st))
		die("a child did not exit normally");
}

/* The simple calls with one fd. */
static void fd_call(long nr, const char *call, int fd)
{
	SC1(nr, fd);
	begin(call);
	a_int("fd", fd);
	done();
}

static void do_close(int fd)
{
	fd_call(SYS_close, "close", fd);
}

/* exit_group(status), logged first. */
static void __attribute__((noreturn)) log_exit_group(int status)
{
	begin("exit_group");
	a_int("status", status);
	end_noreturn();
	SC1(SYS_exit_group, status);
	die("exit_group returned");
}

/* vfork whose child immediately calls exit(status): the child shares our memory and stack, so
 * it runs no C code at all (two syscall instructions in this frame). Returns the child's pid,
 * or -1 with g_e set. */
static long __attribute__((noinline)) vfork_exit(long status)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_vfork) : "rcx", "r11", "memory");
	if (ret == 0) {
		__asm__ volatile("syscall" : : "a"((long)SYS_exit), "D"(status) : "rcx", "r11", "memory");
		__builtin_unreachable();
	}
	g_r = ret < 0 ? -1 : ret;
	g_e = ret < 0 ? (int)-ret : 0;
	return g_r;
}

/* ---- the calls, grouped by class ---------------------------------------------------------- */

static const char DATA[] = "ra-data.dat"; /* the main data file, fd D */
static int D;
static char buf[8192];
static uid_t owner;
static gid_t group;

/* Process state of the main process: cwd, umask, limits. */
static void process_state(const char *scratch)
{
	char cwd[4096];

	SC2(SYS_mkdir, scratch, 0750);
	begin("mkdir");
	a_str("pathname", scratch);
	a_int("mode", 0750);
	done();

	SC1(SYS_chdir, scratch);
	begin("chdir");
	a_str("path", scratch);
	done();
	need("chdir to the scratch directory");

	SC2(SYS_getcwd, cwd, 333 + 3000);
	begin("getcwd");
	a_out("buf", cwd, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 333 + 3000);
	done();

	SC1(SYS_umask, 027);
	begin("umask");
	a_int("mask", 027);
	done();

	struct rlimit rl, rl_old;
	memset(&rl, 0, sizeof rl);
	SC2(SYS_getrlimit, RLIMIT_NOFILE, &rl);
	begin("getrlimit");
	a_int("resource", RLIMIT_NOFILE);
	a_out("rlim", &rl, sizeof rl);
	done();

	SC2(SYS_setrlimit, RLIMIT_NOFILE, &rl); /* the same limits: harmless */
	begin("setrlimit");
	a_int("resource", RLIMIT_NOFILE);
	a_hex("rlim", &rl, sizeof rl);
	done();

	memset(&rl_old, 0, sizeof rl_old);
	SC4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl_old);
	begin("prlimit64");
	a_int("pid", 0);
	a_int("resource", RLIMIT_NOFILE);
	a_null("new_limit");
	a_out("old_limit", &rl_old, sizeof rl_old);
	done();

	memset(&rl_old, 0, sizeof rl_old);
	SC4(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, &rl_old);
	begin("prlimit64");
	a_int("pid", 0);
	a_int("resource", RLIMIT_NOFILE);
	a_hex("new_limit", &rl, sizeof rl);
	a_out("old_limit", &rl_old, sizeof rl_old);
	done();
}

/* Opening files, and file data: read/write family, sizes, sync, locks, ioctl, copies. */
static void file_data(void)
{
	int fd;

	/* open: success, then EEXIST. */
	SC3(SYS_open, "ra-open.dat", O_WRONLY | O_CREAT | O_TRUNC, 0640);
	begin("open");
	a_str("pathname", "ra-open.dat");
	a_int("flags", O_WRONLY | O_CREAT | O_TRUNC);
	a_int("mode", 0640);
	done();
	fd = (int)need("open");
	do_close(fd);

	SC3(SYS_open, "ra-open.dat", O_WRONLY | O_CREAT | O_EXCL, 0600);
	begin("open");
	a_str("pathname", "ra-open.dat");
	a_int("flags", O_WRONLY | O_CREAT | O_EXCL);
	a_int("mode", 0600);
	done();

	/* openat: the data file; then ENOENT. */
	SC4(SYS_openat, AT_FDCWD, DATA, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	begin("openat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", DATA);
	a_int("flags", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
	a_int("mode", 0640);
	done();
	D = (int)need("openat the data file");

	SC4(SYS_openat, AT_FDCWD, "ra-missing.dat", O_RDONLY, 0);
	begin("openat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-missing.dat");
	a_int("flags", O_RDONLY);
	a_int("mode", 0);
	done();

	struct ra_open_how how = {O_RDONLY | O_CLOEXEC, 0, RESOLVE_NO_MAGICLINKS};
	SC4(SYS_openat2, AT_FDCWD, DATA, &how, sizeof how);
	begin("openat2");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", DATA);
	a_hex("how", &how, sizeof how);
	a_int("size", sizeof how);
	done();
	if (g_r >= 0)
		do_close((int)g_r);

	SC2(SYS_creat, "ra-creat.dat", 0640);
	begin("creat");
	a_str("pathname", "ra-creat.dat");
	a_int("mode", 0640);
	done();
	if (g_r >= 0)
		do_close((int)g_r);

	SC2(SYS_memfd_create, "ra-memfd", MFD_CLOEXEC);
	begin("memfd_create");
	a_str("name", "ra-memfd");
	a_int("flags", MFD_CLOEXEC);
	done();
	if (g_r >= 0)
		do_close((int)g_r);

	/* Asynchronous I/O: an io_uring and a Linux AIO context, set up, entered with nothing to
	 * submit, and taken down (unregistering buffers never registered: ENXIO; cancelling a
	 * NULL iocb: EFAULT). A kernel without io_uring fails the ring's calls: logged as such. */
	{
		static unsigned char params[120], params0[120]; /* struct io_uring_params */
		SC2(SYS_io_uring_setup, 4, params);
		begin("io_uring_setup");
		a_int("entries", 4);
		a_inout("p", params0, params, sizeof params); /* (recorded: the struct) */
		done();
		long ring = g_r;
		SC6(SYS_io_uring_enter, ring, 0, 0, 0, 0, 0);
		begin("io_uring_enter");
		a_int("fd", ring);
		a_int("to_submit", 0);
		a_int("min_complete", 0);
		a_int("flags", 0);
		a_int("argp", 0);
		a_int("argsz", 0);
		done();
		SC4(SYS_io_uring_register, ring, 1 /* IORING_UNREGISTER_BUFFERS */, 0, 0);
		begin("io_uring_register");
		a_int("fd", ring);
		a_int("opcode", 1);
		a_null("arg"); /* (NULL: no registration data) */
		a_int("nr_args", 0);
		done();
		if (ring >= 0)
			do_close((int)ring);
		static unsigned long ctx;
		SC2(SYS_io_setup, 8, &ctx);
		begin("io_setup");
		a_int("nr_events", 8);
		a_ptr("ctx_idp", &ctx);
		done();
		SC3(SYS_io_submit, ctx, 0, 0);
		begin("io_submit");
		a_int("ctx_id", (long)ctx);
		a_int("nr", 0);
		a_int("iocbpp", 0);
		done();
		SC5(SYS_io_getevents, ctx, 0, 0, 0, 0);
		begin("io_getevents");
		a_int("ctx_id", (long)ctx);
		a_int("min_nr", 0);
		a_int("nr", 0);
		a_int("events", 0);
		a_int("timeout", 0);
		done();
		SC6(SYS_io_pgetevents, ctx, 0, 0, 0, 0, 0);
		begin("io_pgetevents");
		a_int("ctx_id", (long)ctx);
		a_int("min_nr", 0);
		a_int("nr", 0);
		a_int("events", 0);
		a_int("timeout", 0);
		a_int("usig", 0);
		done();
		SC3(SYS_io_cancel, ctx, 0, 0);
		begin("io_cancel");
		a_int("ctx_id", (long)ctx);
		a_int("iocb", 0);
		a_int("result", 0);
		done();
		SC1(SYS_io_destroy, ctx);
		begin("io_destroy");
		a_int("ctx_id", (long)ctx);
		done();
	}

	/* Writes. */
	static const char w[] = "RA-SENTINEL-write-0123456789abcdefg\n"; /* 36 bytes */
	SC3(SYS_write, D, w, sizeof w - 2); /* 35: an odd count, the '\n' stays behind */
	begin("write");
	a_int("fd", D);
	a_hex("buf", w, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", sizeof w - 2);
	done();

	static const char pw[] = "RA-SENTINEL-pwrite64-at-0x5eed";
	SC4(SYS_pwrite64, D, pw, sizeof pw - 1, 0x5eed);
	begin("pwrite64");
	a_int("fd", D);
	a_hex("buf", pw, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", sizeof pw - 1);
	a_int("offset", 0x5eed);
	done();

	struct iovec wv[3] = {
		{(void *)"RA-SENTINEL-writev-a|", 21},
		{(void *)"b-second-vector|", 16},
		{(void *)"c-third\n", 8},
	};
	SC3(SYS_writev, D, wv, 3);
	begin("writev");
	a_int("fd", D);
	a_iov("iov", wv, 3, g_r);
	a_int("iovcnt", 3);
	done();

	struct iovec pv[2] = {
		{(void *)"RA-SENTINEL-pwritev-a|", 22},
		{(void *)"b-at-0x6eed\n", 12},
	};
	SC4(SYS_pwritev, D, pv, 2, 0x6eed);
	begin("pwritev");
	a_int("fd", D);
	a_iov("iov", pv, 2, g_r);
	a_int("iovcnt", 2);
	a_int("offset", 0x6eed);
	done();

	struct iovec pv2[2] = {
		{(void *)"RA-SENTINEL-pwritev2-a|", 23},
		{(void *)"b-at-0x7eed-dsync\n", 18},
	};
	SC6(SYS_pwritev2, D, pv2, 2, 0x7eed, 0, RWF_DSYNC);
	begin("pwritev2");
	a_int("fd", D);
	a_iov("iov", pv2, 2, g_r);
	a_int("iovcnt", 2);
	a_int("offset", 0x7eed);
	a_int("offset_high", 0);
	a_int("flags", RWF_DSYNC);
	done();

	/* Reads. */
	SC3(SYS_lseek, D, 0, SEEK_SET);
	begin("lseek");
	a_int("fd", D);
	a_int("offset", 0);
	a_int("whence", SEEK_SET);
	done();

	memset(buf, 0, sizeof buf);
	SC3(SYS_read, D, buf, 333);
	begin("read");
	a_int("fd", D);
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 333);
	done();

	SC3(SYS_read, 0x3eed, buf, 333); /* EBADF: no such fd */
	begin("read");
	a_int("fd", 0x3eed);
	a_out("buf", buf, 0);
	a_int("count", 333);
	done();

	memset(buf, 0, sizeof buf);
	SC4(SYS_pread64, D, buf, 77, 0x5eed);
	begin("pread64");
	a_int("fd", D);
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 77);
	a_int("offset", 0x5eed);
	done();

	/* readv of the last 100 bytes into 5 + 11 + 4001: the third vector is filled partly. */
	SC3(SYS_lseek, D, -100, SEEK_END);
	begin("lseek");
	a_int("fd", D);
	a_int("offset", -100);
	a_int("whence", SEEK_END);
	done();

	memset(buf, 0, sizeof buf);
	struct iovec rv[3] = {{buf, 5}, {buf + 5, 11}, {buf + 16, 4001}};
	SC3(SYS_readv, D, rv, 3);
	begin("readv");
	a_int("fd", D);
	a_iov("iov", rv, 3, g_r);
	a_int("iovcnt", 3);
	done();

	memset(buf, 0, sizeof buf);
	struct iovec prv[2] = {{buf, 7}, {buf + 7, 13}};
	SC4(SYS_preadv, D, prv, 2, 0x6eed);
	begin("preadv");
	a_int("fd", D);
	a_iov("iov", prv, 2, g_r);
	a_int("iovcnt", 2);
	a_int("offset", 0x6eed);
	done();

	memset(buf, 0, sizeof buf);
	SC6(SYS_preadv2, D, prv, 2, 0x7eed, 0, RWF_HIPRI);
	begin("preadv2");
	a_int("fd", D);
	a_iov("iov", prv, 2, g_r);
	a_int("iovcnt", 2);
	a_int("offset", 0x7eed);
	a_int("offset_high", 0);
	a_int("flags", RWF_HIPRI);
	done();

	/* Sizes and space. */
	SC2(SYS_truncate, "ra-creat.dat", 0x5eed);
	begin("truncate");
	a_str("path", "ra-creat.dat");
	a_int("length", 0x5eed);
	done();

	SC2(SYS_ftruncate, D, 0x9eed);
	begin("ftruncate");
	a_int("fd", D);
	a_int("length", 0x9eed);
	done();

	SC4(SYS_fallocate, D, FALLOC_FL_KEEP_SIZE, 0xa000, 0x3eed);
	begin("fallocate");
	a_int("fd", D);
	a_int("mode", FALLOC_FL_KEEP_SIZE);
	a_int("offset", 0xa000);
	a_int("len", 0x3eed);
	done();

	SC4(SYS_fadvise64, D, 0x1000, 0x2eed, POSIX_FADV_WILLNEED);
	begin("fadvise64");
	a_int("fd", D);
	a_int("offset", 0x1000);
	a_int("len", 0x2eed);
	a_int("advice", POSIX_FADV_WILLNEED);
	done();

	SC3(SYS_readahead, D, 0x100, 0x4eed);
	begin("readahead");
	a_int("fd", D);
	a_int("offset", 0x100);
	a_int("count", 0x4eed);
	done();

	/* Sync. */
	fd_call(SYS_fsync, "fsync", D);
	fd_call(SYS_fdatasync, "fdatasync", D);

	SC4(SYS_sync_file_range, D, 0x1000, 0x1eed, SYNC_FILE_RANGE_WRITE);
	begin("sync_file_range");
	a_int("fd", D);
	a_int("offset", 0x1000);
	a_int("nbytes", 0x1eed);
	a_int("flags", SYNC_FILE_RANGE_WRITE);
	done();

	SC0(SYS_sync);
	begin("sync");
	done();

	fd_call(SYS_syncfs, "syncfs", D);

	/* Locks. */
	SC2(SYS_flock, D, LOCK_EX | LOCK_NB);
	begin("flock");
	a_int("fd", D);
	a_int("operation", LOCK_EX | LOCK_NB);
	done();
	SC2(SYS_flock, D, LOCK_UN);
	begin("flock");
	a_int("fd", D);
	a_int("operation", LOCK_UN);
	done();

	/* ioctl: FIONREAD (works on regular files), FS_IOC_GETFLAGS (request with bit 31 set,
	 * passed zero-extended like glibc's ioctl() does; the kernel's cmd is an unsigned int and
	 * Re-Animator's ioctl `request` column is int32, so the trace holds it sign-extended), and
	 * TCGETS (ENOTTY). argp is recorded as the pointer value. */
	int nread = 0;
	SC3(SYS_ioctl, D, FIONREAD, &nread);
	begin("ioctl");
	a_int("fd", D);
	a_int("request", FIONREAD);
	a_ptr("argp", &nread);
	done();

	long iflags = 0;
	SC3(SYS_ioctl, D, (unsigned long)FS_IOC_GETFLAGS, &iflags);
	begin("ioctl");
	a_int("fd", D);
	a_int("request", (int)FS_IOC_GETFLAGS);
	a_ptr("argp", &iflags);
	done();

	struct termios tio;
	SC3(SYS_ioctl, D, TCGETS, &tio);
	begin("ioctl");
	a_int("fd", D);
	a_int("request", TCGETS);
	a_ptr("argp", &tio);
	done();

	/* Copies between files. */
	SC4(SYS_openat, AT_FDCWD, "ra-copy.dat", O_RDWR | O_CREAT | O_TRUNC, 0640);
	begin("openat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-copy.dat");
	a_int("flags", O_RDWR | O_CREAT | O_TRUNC);
	a_int("mode", 0640);
	done();
	int cp = (int)need("openat ra-copy.dat");

	int64_t off = 0x5eed, off0 = off;
	SC4(SYS_sendfile, cp, D, &off, 99);
	begin("sendfile");
	a_int("out_fd", cp);
	a_int("in_fd", D);
	a_inout("offset", &off0, &off, sizeof off);
	a_int("count", 99);
	done();

	int64_t oin = 0x6eed, oin0 = oin, oout = 0x1000, oout0 = oout;
	SC6(SYS_copy_file_range, D, &oin, cp, &oout, 123, 0);
	begin("copy_file_range");
	a_int("fd_in", D);
	a_inout("off_in", &oin0, &oin, sizeof oin);
	a_int("fd_out", cp);
	a_inout("off_out", &oout0, &oout, sizeof oout);
	a_int("len", 123);
	a_int("flags", 0);
	done();

	do_close(cp);
}

/* File namespace and metadata: stat family, access, directories, links, renames, modes,
 * owners, times, extended attributes. */
static void file_meta(void)
{
	struct stat st;
	struct statx stx;
	struct statfs sfs;
	int dd, dd2;

	/* Directories. */
	SC2(SYS_mkdir, "ra-dir", 0750);
	begin("mkdir");
	a_str("pathname", "ra-dir");
	a_int("mode", 0750);
	done();
	SC2(SYS_mkdir, "ra-dir", 0750); /* EEXIST */
	begin("mkdir");
	a_str("pathname", "ra-dir");
	a_int("mode", 0750);
	done();
	SC3(SYS_mkdirat, AT_FDCWD, "ra-dirat", 0705);
	begin("mkdirat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-dirat");
	a_int("mode", 0705);
	done();

	SC4(SYS_openat, AT_FDCWD, "ra-dir", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	begin("openat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-dir");
	a_int("flags", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a_int("mode", 0);
	done();
	dd = (int)need("openat ra-dir");

	SC3(SYS_mkdirat, dd, "ra-sub", 0700);
	begin("mkdirat");
	a_int("dirfd", dd);
	a_str("pathname", "ra-sub");
	a_int("mode", 0700);
	done();

	/* fchdir into ra-dir and chdir back. */
	fd_call(SYS_fchdir, "fchdir", dd);
	SC1(SYS_chdir, "..");
	begin("chdir");
	a_str("path", "..");
	done();
	need("chdir ..");

	/* Links. */
	SC2(SYS_symlink, DATA, "ra-symlink");
	begin("symlink");
	a_str("target", DATA);
	a_str("linkpath", "ra-symlink");
	done();
	SC3(SYS_symlinkat, "RA-SENTINEL-symlinkat-target", dd, "ra-symlinkat");
	begin("symlinkat");
	a_str("target", "RA-SENTINEL-symlinkat-target");
	a_int("newdirfd", dd);
	a_str("linkpath", "ra-symlinkat");
	done();
	SC2(SYS_link, DATA, "ra-hardlink");
	begin("link");
	a_str("oldpath", DATA);
	a_str("newpath", "ra-hardlink");
	done();
	SC5(SYS_linkat, AT_FDCWD, "ra-symlink", dd, "ra-hardlinkat", AT_SYMLINK_FOLLOW);
	begin("linkat");
	a_int("olddirfd", AT_FDCWD);
	a_str("oldpath", "ra-symlink");
	a_int("newdirfd", dd);
	a_str("newpath", "ra-hardlinkat");
	a_int("flags", AT_SYMLINK_FOLLOW);
	done();

	memset(buf, 0, sizeof buf);
	SC3(SYS_readlink, "ra-symlink", buf, 111);
	begin("readlink");
	a_str("pathname", "ra-symlink");
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("bufsiz", 111);
	done();
	memset(buf, 0, sizeof buf);
	SC4(SYS_readlinkat, dd, "ra-symlinkat", buf, 99);
	begin("readlinkat");
	a_int("dirfd", dd);
	a_str("pathname", "ra-symlinkat");
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("bufsiz", 99);
	done();

	/* Special files. mknod ignores dev for FIFOs: a sentinel is safe. */
	SC3(SYS_mknod, "ra-fifo", S_IFIFO | 0640, 0x5eed);
	begin("mknod");
	a_str("pathname", "ra-fifo");
	a_int("mode", S_IFIFO | 0640);
	a_int("dev", 0x5eed);
	done();
	SC4(SYS_mknodat, dd, "ra-fifoat", S_IFIFO | 0604, 0);
	begin("mknodat");
	a_int("dirfd", dd);
	a_str("pathname", "ra-fifoat");
	a_int("mode", S_IFIFO | 0604);
	a_int("dev", 0);
	done();

	/* The stat family: success, ENOENT (no out-buffer), AT_EMPTY_PATH with "" . */
	memset(&st, 0, sizeof st);
	SC2(SYS_stat, DATA, &st);
	begin("stat");
	a_str("pathname", DATA);
	a_out("statbuf", &st, sizeof st);
	done();
	SC2(SYS_stat, "ra-missing.dat", &st);
	begin("stat");
	a_str("pathname", "ra-missing.dat");
	a_out("statbuf", &st, sizeof st);
	done();
	memset(&st, 0, sizeof st);
	SC2(SYS_lstat, "ra-symlink", &st);
	begin("lstat");
	a_str("pathname", "ra-symlink");
	a_out("statbuf", &st, sizeof st);
	done();
	memset(&st, 0, sizeof st);
	SC2(SYS_fstat, D, &st);
	begin("fstat");
	a_int("fd", D);
	a_out("statbuf", &st, sizeof st);
	done();
	memset(&st, 0, sizeof st);
	SC4(SYS_newfstatat, AT_FDCWD, "ra-symlink", &st, AT_SYMLINK_NOFOLLOW);
	begin("newfstatat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-symlink");
	a_out("statbuf", &st, sizeof st);
	a_int("flags", AT_SYMLINK_NOFOLLOW);
	done();
	memset(&st, 0, sizeof st);
	SC4(SYS_newfstatat, D, "", &st, AT_EMPTY_PATH);
	begin("newfstatat");
	a_int("dirfd", D);
	a_str("pathname", "");
	a_out("statbuf", &st, sizeof st);
	a_int("flags", AT_EMPTY_PATH);
	done();
	memset(&stx, 0, sizeof stx);
	SC5(SYS_statx, AT_FDCWD, DATA, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &stx);
	begin("statx");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", DATA);
	a_int("flags", AT_SYMLINK_NOFOLLOW);
	a_int("mask", STATX_BASIC_STATS | STATX_BTIME);
	a_out("statxbuf", &stx, sizeof stx);
	done();
	memset(&sfs, 0, sizeof sfs);
	SC2(SYS_statfs, ".", &sfs);
	begin("statfs");
	a_str("path", ".");
	a_out("buf", &sfs, sizeof sfs);
	done();
	memset(&sfs, 0, sizeof sfs);
	SC2(SYS_fstatfs, D, &sfs);
	begin("fstatfs");
	a_int("fd", D);
	a_out("buf", &sfs, sizeof sfs);
	done();

	/* access family (the kernel's faccessat has no flags). */
	SC2(SYS_access, DATA, R_OK | W_OK);
	begin("access");
	a_str("pathname", DATA);
	a_int("mode", R_OK | W_OK);
	done();
	SC2(SYS_access, "ra-missing.dat", F_OK);
	begin("access");
	a_str("pathname", "ra-missing.dat");
	a_int("mode", F_OK);
	done();
	SC3(SYS_faccessat, AT_FDCWD, DATA, R_OK);
	begin("faccessat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", DATA);
	a_int("mode", R_OK);
	done();
	SC4(SYS_faccessat2, dd, "../ra-data.dat", W_OK, AT_EACCESS);
	begin("faccessat2");
	a_int("dirfd", dd);
	a_str("pathname", "../ra-data.dat");
	a_int("mode", W_OK);
	a_int("flags", AT_EACCESS);
	done();

	/* Directory listings, each from a fresh fd (ra-dir holds ra-sub, ra-symlinkat,
	 * ra-hardlinkat, ra-fifoat). */
	memset(buf, 0, sizeof buf);
	SC3(SYS_getdents, dd, buf, 3333);
	begin("getdents");
	a_int("fd", dd);
	a_out("dirp", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 3333);
	done();

	SC4(SYS_openat, AT_FDCWD, "ra-dir", O_RDONLY | O_DIRECTORY, 0);
	begin("openat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-dir");
	a_int("flags", O_RDONLY | O_DIRECTORY);
	a_int("mode", 0);
	done();
	dd2 = (int)need("openat ra-dir again");
	memset(buf, 0, sizeof buf);
	SC3(SYS_getdents64, dd2, buf, 2999);
	begin("getdents64");
	a_int("fd", dd2);
	a_out("dirp", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 2999);
	done();
	do_close(dd2);

	/* Renames. */
	SC2(SYS_rename, "ra-creat.dat", "ra-renamed.dat");
	begin("rename");
	a_str("oldpath", "ra-creat.dat");
	a_str("newpath", "ra-renamed.dat");
	done();
	SC4(SYS_renameat, AT_FDCWD, "ra-renamed.dat", dd, "ra-renamedat.dat");
	begin("renameat");
	a_int("olddirfd", AT_FDCWD);
	a_str("oldpath", "ra-renamed.dat");
	a_int("newdirfd", dd);
	a_str("newpath", "ra-renamedat.dat");
	done();
	SC5(SYS_renameat2, dd, "ra-renamedat.dat", AT_FDCWD, "ra-renamed2.dat", RENAME_NOREPLACE);
	begin("renameat2");
	a_int("olddirfd", dd);
	a_str("oldpath", "ra-renamedat.dat");
	a_int("newdirfd", AT_FDCWD);
	a_str("newpath", "ra-renamed2.dat");
	a_int("flags", RENAME_NOREPLACE);
	done();

	/* Modes. */
	SC2(SYS_chmod, DATA, 0640);
	begin("chmod");
	a_str("pathname", DATA);
	a_int("mode", 0640);
	done();
	SC2(SYS_fchmod, D, 0604);
	begin("fchmod");
	a_int("fd", D);
	a_int("mode", 0604);
	done();
	SC3(SYS_fchmodat, AT_FDCWD, "ra-renamed2.dat", 0600);
	begin("fchmodat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-renamed2.dat");
	a_int("mode", 0600);
	done();

	/* Owners: as root, sentinel ids (so swapped arguments show); otherwise our own. -1 means
	 * "unchanged" and is passed sign-extended. */
	SC3(SYS_chown, DATA, owner, group);
	begin("chown");
	a_str("pathname", DATA);
	a_int("owner", owner);
	a_int("group", group);
	done();
	SC3(SYS_lchown, "ra-symlink", owner, -1);
	begin("lchown");
	a_str("pathname", "ra-symlink");
	a_int("owner", owner);
	a_int("group", -1);
	done();
	SC3(SYS_fchown, D, -1, group);
	begin("fchown");
	a_int("fd", D);
	a_int("owner", -1);
	a_int("group", group);
	done();
	SC5(SYS_fchownat, AT_FDCWD, "ra-symlink", owner, group, AT_SYMLINK_NOFOLLOW);
	begin("fchownat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-symlink");
	a_int("owner", owner);
	a_int("group", group);
	a_int("flags", AT_SYMLINK_NOFOLLOW);
	done();

	/* Times (values that survive Re-Animator's decoded time columns: whole microseconds for
	 * timeval, and seconds 0 beside UTIME_OMIT). */
	struct utimbuf ub = {0x5eed0000, 0x6eed0000};
	SC2(SYS_utime, DATA, &ub);
	begin("utime");
	a_str("filename", DATA);
	a_hex("times", &ub, sizeof ub);
	done();
	struct timeval tv[2] = {{0x5eed1000, 123457}, {0x6eed1000, 7}};
	SC2(SYS_utimes, DATA, tv);
	begin("utimes");
	a_str("filename", DATA);
	a_hex("times", tv, sizeof tv);
	done();
	struct timeval tv2[2] = {{0x5eed1100, 1}, {0x6eed1100, 999999}};
	SC3(SYS_futimesat, dd, "../ra-data.dat", tv2);
	begin("futimesat");
	a_int("dirfd", dd);
	a_str("pathname", "../ra-data.dat");
	a_hex("times", tv2, sizeof tv2);
	done();
	struct timespec ts[2] = {{0x5eed2000, 123456789}, {0, UTIME_OMIT}};
	SC4(SYS_utimensat, AT_FDCWD, "ra-symlink", ts, AT_SYMLINK_NOFOLLOW);
	begin("utimensat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-symlink");
	a_hex("times", ts, sizeof ts);
	a_int("flags", AT_SYMLINK_NOFOLLOW);
	done();
	SC4(SYS_utimensat, D, NULL, NULL, 0); /* futimens(D, NULL): NULL path, NULL times */
	begin("utimensat");
	a_int("dirfd", D);
	a_null("pathname");
	a_null("times");
	a_int("flags", 0);
	done();

	/* Extended attributes (user.*: needs a file system that has them, e.g. ext4, tmpfs). */
	static const char xv[] = "RA-SENTINEL-setxattr-value";
	static const char lxv[] = "RA-SENTINEL-lsetxattr";
	static const char fxv[] = "RA-SENTINEL-fsetxattr-v";
	SC5(SYS_setxattr, DATA, "user.ra.set", xv, sizeof xv - 1, XATTR_CREATE);
	begin("setxattr");
	a_str("path", DATA);
	a_str("name", "user.ra.set");
	a_hex("value", xv, sizeof xv - 1);
	a_int("size", sizeof xv - 1);
	a_int("flags", XATTR_CREATE);
	done();
	SC5(SYS_lsetxattr, "ra-renamed2.dat", "user.ra.lset", lxv, sizeof lxv - 1, 0);
	begin("lsetxattr");
	a_str("path", "ra-renamed2.dat");
	a_str("name", "user.ra.lset");
	a_hex("value", lxv, sizeof lxv - 1);
	a_int("size", sizeof lxv - 1);
	a_int("flags", 0);
	done();
	SC5(SYS_fsetxattr, D, "user.ra.fset", fxv, sizeof fxv - 1, XATTR_CREATE);
	begin("fsetxattr");
	a_int("fd", D);
	a_str("name", "user.ra.fset");
	a_hex("value", fxv, sizeof fxv - 1);
	a_int("size", sizeof fxv - 1);
	a_int("flags", XATTR_CREATE);
	done();

	memset(buf, 0, sizeof buf);
	SC4(SYS_getxattr, DATA, "user.ra.set", buf, 99);
	begin("getxattr");
	a_str("path", DATA);
	a_str("name", "user.ra.set");
	a_out("value", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 99);
	done();
	SC4(SYS_getxattr, DATA, "user.ra.missing", buf, 99); /* ENODATA */
	begin("getxattr");
	a_str("path", DATA);
	a_str("name", "user.ra.missing");
	a_out("value", buf, 0);
	a_int("size", 99);
	done();
	memset(buf, 0, sizeof buf);
	SC4(SYS_lgetxattr, "ra-renamed2.dat", "user.ra.lset", buf, 97);
	begin("lgetxattr");
	a_str("path", "ra-renamed2.dat");
	a_str("name", "user.ra.lset");
	a_out("value", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 97);
	done();
	memset(buf, 0, sizeof buf);
	SC4(SYS_fgetxattr, D, "user.ra.fset", buf, 95);
	begin("fgetxattr");
	a_int("fd", D);
	a_str("name", "user.ra.fset");
	a_out("value", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 95);
	done();

	memset(buf, 0, sizeof buf);
	SC3(SYS_listxattr, DATA, buf, 199);
	begin("listxattr");
	a_str("path", DATA);
	a_out("list", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 199);
	done();
	memset(buf, 0, sizeof buf);
	SC3(SYS_llistxattr, "ra-renamed2.dat", buf, 197);
	begin("llistxattr");
	a_str("path", "ra-renamed2.dat");
	a_out("list", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 197);
	done();
	memset(buf, 0, sizeof buf);
	SC3(SYS_flistxattr, D, buf, 195);
	begin("flistxattr");
	a_int("fd", D);
	a_out("list", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("size", 195);
	done();

	SC2(SYS_removexattr, DATA, "user.ra.set");
	begin("removexattr");
	a_str("path", DATA);
	a_str("name", "user.ra.set");
	done();
	SC2(SYS_lremovexattr, "ra-renamed2.dat", "user.ra.lset");
	begin("lremovexattr");
	a_str("path", "ra-renamed2.dat");
	a_str("name", "user.ra.lset");
	done();
	SC2(SYS_fremovexattr, D, "user.ra.fset");
	begin("fremovexattr");
	a_int("fd", D);
	a_str("name", "user.ra.fset");
	done();

	/* Removal. */
	SC1(SYS_unlink, "ra-hardlink");
	begin("unlink");
	a_str("pathname", "ra-hardlink");
	done();
	SC1(SYS_unlink, "ra-missing.dat"); /* ENOENT */
	begin("unlink");
	a_str("pathname", "ra-missing.dat");
	done();
	SC3(SYS_unlinkat, dd, "ra-hardlinkat", 0);
	begin("unlinkat");
	a_int("dirfd", dd);
	a_str("pathname", "ra-hardlinkat");
	a_int("flags", 0);
	done();
	SC3(SYS_unlinkat, AT_FDCWD, "ra-dirat", AT_REMOVEDIR);
	begin("unlinkat");
	a_int("dirfd", AT_FDCWD);
	a_str("pathname", "ra-dirat");
	a_int("flags", AT_REMOVEDIR);
	done();
	SC1(SYS_rmdir, "ra-dir/ra-sub");
	begin("rmdir");
	a_str("pathname", "ra-dir/ra-sub");
	done();

	do_close(dd);
}

/* Descriptors: dup family, fcntl, close_range, close, pipes, vmsplice/tee/splice. */
static void descriptors(void)
{
	int d1, d3;

	SC1(SYS_dup, D);
	begin("dup");
	a_int("oldfd", D);
	done();
	d1 = (int)need("dup");
	SC2(SYS_dup2, D, 200);
	begin("dup2");
	a_int("oldfd", D);
	a_int("newfd", 200);
	done();
	SC3(SYS_dup3, D, 201, O_CLOEXEC);
	begin("dup3");
	a_int("oldfd", D);
	a_int("newfd", 201);
	a_int("flags", O_CLOEXEC);
	done();

	SC3(SYS_fcntl, D, F_GETFL, 0);
	begin("fcntl");
	a_int("fd", D);
	a_int("cmd", F_GETFL);
	a_int("arg", 0);
	done();
	SC3(SYS_fcntl, 200, F_SETFD, FD_CLOEXEC);
	begin("fcntl");
	a_int("fd", 200);
	a_int("cmd", F_SETFD);
	a_int("arg", FD_CLOEXEC);
	done();
	SC3(SYS_fcntl, D, F_DUPFD_CLOEXEC, 0x5e);
	begin("fcntl");
	a_int("fd", D);
	a_int("cmd", F_DUPFD_CLOEXEC);
	a_int("arg", 0x5e);
	done();
	d3 = (int)need("fcntl F_DUPFD_CLOEXEC");
	/* F_SETLK: arg is a struct flock *. The registry records fcntl's arg as an integer and
	 * Re-Animator's `argument_value` column is int32, so the trace holds the pointer's low 32
	 * bits, sign-extended (the lock itself is not captured: see the report). */
	struct flock fl;
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0x5eed;
	fl.l_len = 0x1eed;
	SC3(SYS_fcntl, D, F_SETLK, &fl);
	begin("fcntl");
	a_int("fd", D);
	a_int("cmd", F_SETLK);
	a_int("arg", (int32_t)(uint32_t)(uintptr_t)&fl);
	done();

	SC3(SYS_close_range, 200, 201, 0);
	begin("close_range");
	a_int("first", 200);
	a_int("last", 201);
	a_int("flags", 0);
	done();
	do_close(d1);
	do_close(d3);
	do_close(0x3eed); /* EBADF */

	/* Pipes: vmsplice into p, tee p -> q, splice q -> file, read p. */
	int p[2] = {-1, -1}, q[2] = {-1, -1};
	SC1(SYS_pipe, p);
	begin("pipe");
	a_out("pipefd", p, sizeof p);
	done();
	need("pipe");
	SC2(SYS_pipe2, q, O_CLOEXEC | O_NONBLOCK);
	begin("pipe2");
	a_out("pipefd", q, sizeof q);
	a_int("flags", O_CLOEXEC | O_NONBLOCK);
	done();
	need("pipe2");

	struct iovec vv[2] = {
		{(void *)"RA-SENTINEL-vmsplice-a|", 23},
		{(void *)"b-tail\n", 7},
	};
	SC4(SYS_vmsplice, p[1], vv, 2, 0);
	begin("vmsplice");
	a_int("fd", p[1]);
	a_iov("iov", vv, 2, g_r);
	a_int("nr_segs", 2);
	a_int("flags", 0);
	done();

	SC4(SYS_tee, p[0], q[1], 777, SPLICE_F_NONBLOCK);
	begin("tee");
	a_int("fd_in", p[0]);
	a_int("fd_out", q[1]);
	a_int("len", 777);
	a_int("flags", SPLICE_F_NONBLOCK);
	done();

	int64_t so = 0x2000, so0 = so;
	SC6(SYS_splice, q[0], NULL, D, &so, 555, SPLICE_F_MOVE);
	begin("splice");
	a_int("fd_in", q[0]);
	a_null("off_in");
	a_int("fd_out", D);
	a_inout("off_out", &so0, &so, sizeof so);
	a_int("len", 555);
	a_int("flags", SPLICE_F_MOVE);
	done();

	memset(buf, 0, sizeof buf);
	SC3(SYS_read, p[0], buf, 999);
	begin("read");
	a_int("fd", p[0]);
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 999);
	done();

	do_close(p[0]);
	do_close(p[1]);
	do_close(q[0]);
	do_close(q[1]);
}

/* Memory: a shared file mapping (never touched, so no page-fault I/O) and an anonymous one. */
static void memory(void)
{
	long m, m2, a;

	m = SC6(SYS_mmap, NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, D, 4096);
	begin("mmap");
	a_int("addr", 0);
	a_int("length", 8192);
	a_int("prot", PROT_READ | PROT_WRITE);
	a_int("flags", MAP_SHARED);
	a_int("fd", D);
	a_int("offset", 4096);
	done();
	need("mmap the data file");

	SC3(SYS_mprotect, m, 8192, PROT_READ); /* the whole mapping: mremap needs one vma */
	begin("mprotect");
	a_int("addr", m);
	a_int("len", 8192);
	a_int("prot", PROT_READ);
	done();
	SC3(SYS_madvise, m, 8192, MADV_WILLNEED);
	begin("madvise");
	a_int("addr", m);
	a_int("length", 8192);
	a_int("advice", MADV_WILLNEED);
	done();
	SC3(SYS_msync, m, 8192, MS_SYNC);
	begin("msync");
	a_int("addr", m);
	a_int("length", 8192);
	a_int("flags", MS_SYNC);
	done();
	m2 = SC5(SYS_mremap, m, 8192, 12288, MREMAP_MAYMOVE, 0);
	begin("mremap");
	a_int("old_address", m);
	a_int("old_size", 8192);
	a_int("new_size", 12288);
	a_int("flags", MREMAP_MAYMOVE);
	a_int("new_address", 0);
	done();
	if (m2 == -1)
		m2 = m;
	SC2(SYS_munmap, m2, m2 == m ? 8192 : 12288);
	begin("munmap");
	a_int("addr", m2);
	a_int("length", m2 == m ? 8192 : 12288);
	done();

	a = SC6(SYS_mmap, NULL, 0x5000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	begin("mmap");
	a_int("addr", 0);
	a_int("length", 0x5000);
	a_int("prot", PROT_READ | PROT_WRITE);
	a_int("flags", MAP_PRIVATE | MAP_ANONYMOUS);
	a_int("fd", -1);
	a_int("offset", 0);
	done();
	need("mmap anonymous");
	SC2(SYS_munmap, a, 0x5000);
	begin("munmap");
	a_int("addr", a);
	a_int("length", 0x5000);
	done();
}

static int do_socket(int domain, int type)
{
	SC3(SYS_socket, domain, type, 0);
	begin("socket");
	a_int("domain", domain);
	a_int("type", type);
	a_int("protocol", 0);
	done();
	return (int)need("socket");
}

static void do_bind_or_connect(long nr, const char *call, int fd, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = unix_addr(&sa, path);
	SC3(nr, fd, &sa, len);
	begin(call);
	a_int("sockfd", fd);
	a_hex("addr", &sa, len);
	a_int("addrlen", len);
	done();
	need(call);
}

/* Sockets (AF_UNIX in the scratch directory), epoll and eventfd. */
static void sockets(void)
{
	struct sockaddr_un sa;
	socklen_t len;
	int ls, c1, c2, a1, a2, ds, dc, sv[2] = {-1, -1}, v;

	/* Stream: listener, a bound client and an unbound one. */
	ls = do_socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC);
	do_bind_or_connect(SYS_bind, "bind", ls, "ra-sock-listen");
	SC2(SYS_listen, ls, 7);
	begin("listen");
	a_int("sockfd", ls);
	a_int("backlog", 7);
	done();
	c1 = do_socket(AF_UNIX, SOCK_STREAM);
	do_bind_or_connect(SYS_bind, "bind", c1, "ra-sock-client");
	do_bind_or_connect(SYS_connect, "connect", c1, "ra-sock-listen");
	c2 = do_socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK);
	do_bind_or_connect(SYS_connect, "connect", c2, "ra-sock-listen");

	/* accept: addr is *addrlen bytes after the call; addrlen is recorded dereferenced. */
	memset(&sa, 0, sizeof sa);
	len = sizeof sa;
	SC3(SYS_accept, ls, &sa, &len);
	begin("accept");
	a_int("sockfd", ls);
	a_out("addr", &sa, len);
	a_int("addrlen", len);
	done();
	a1 = (int)need("accept");
	memset(&sa, 0, sizeof sa);
	len = sizeof sa;
	SC4(SYS_accept4, ls, &sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
	begin("accept4");
	a_int("sockfd", ls);
	a_out("addr", &sa, len); /* the unbound client: just the family */
	a_int("addrlen", len);
	a_int("flags", SOCK_CLOEXEC | SOCK_NONBLOCK);
	done();
	a2 = (int)need("accept4");

	memset(&sa, 0, sizeof sa);
	len = sizeof sa;
	SC3(SYS_getsockname, ls, &sa, &len);
	begin("getsockname");
	a_int("sockfd", ls);
	a_out("addr", &sa, len);
	a_int("addrlen", len);
	done();
	memset(&sa, 0, sizeof sa);
	len = sizeof sa;
	SC3(SYS_getpeername, c1, &sa, &len);
	begin("getpeername");
	a_int("sockfd", c1);
	a_out("addr", &sa, len);
	a_int("addrlen", len);
	done();

	v = 0x5eed0;
	SC5(SYS_setsockopt, c1, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
	begin("setsockopt");
	a_int("sockfd", c1);
	a_int("level", SOL_SOCKET);
	a_int("optname", SO_SNDBUF);
	a_hex("optval", &v, sizeof v);
	a_int("optlen", sizeof v);
	done();
	v = 0;
	len = sizeof v;
	SC5(SYS_getsockopt, c1, SOL_SOCKET, SO_TYPE, &v, &len);
	begin("getsockopt");
	a_int("sockfd", c1);
	a_int("level", SOL_SOCKET);
	a_int("optname", SO_TYPE);
	a_out("optval", &v, len);
	a_int("optlen", len);
	done();

	/* sendto without an address on the connected stream; read it on the accepted end. */
	static const char st[] = "RA-SENTINEL-sendto-stream";
	SC6(SYS_sendto, c1, st, sizeof st - 1, MSG_NOSIGNAL, NULL, 0);
	begin("sendto");
	a_int("sockfd", c1);
	a_hex("buf", st, g_r > 0 ? (size_t)g_r : 0);
	a_int("len", sizeof st - 1);
	a_int("flags", MSG_NOSIGNAL);
	a_null("dest_addr");
	a_int("addrlen", 0);
	done();
	memset(buf, 0, sizeof buf);
	SC3(SYS_read, a1, buf, 333);
	begin("read");
	a_int("fd", a1);
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("count", 333);
	done();

	SC2(SYS_shutdown, c1, SHUT_WR);
	begin("shutdown");
	a_int("sockfd", c1);
	a_int("how", SHUT_WR);
	done();

	/* Datagrams between two bound sockets: recvfrom reports the sender's address. */
	ds = do_socket(AF_UNIX, SOCK_DGRAM);
	do_bind_or_connect(SYS_bind, "bind", ds, "ra-dgram-srv");
	dc = do_socket(AF_UNIX, SOCK_DGRAM);
	do_bind_or_connect(SYS_bind, "bind", dc, "ra-dgram-cli");
	static const char dg[] = "RA-SENTINEL-sendto-dgram";
	struct sockaddr_un to;
	socklen_t tolen = unix_addr(&to, "ra-dgram-srv");
	SC6(SYS_sendto, dc, dg, sizeof dg - 1, 0, &to, tolen);
	begin("sendto");
	a_int("sockfd", dc);
	a_hex("buf", dg, g_r > 0 ? (size_t)g_r : 0);
	a_int("len", sizeof dg - 1);
	a_int("flags", 0);
	a_hex("dest_addr", &to, tolen);
	a_int("addrlen", tolen);
	done();
	memset(buf, 0, sizeof buf);
	memset(&sa, 0, sizeof sa);
	len = sizeof sa;
	SC6(SYS_recvfrom, ds, buf, 333, MSG_DONTWAIT, &sa, &len);
	begin("recvfrom");
	a_int("sockfd", ds);
	a_out("buf", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("len", 333);
	a_int("flags", MSG_DONTWAIT);
	a_out("src_addr", &sa, len);
	a_int("addrlen", len);
	done();

	/* A datagram socketpair for the msghdr calls. */
	SC4(SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv);
	begin("socketpair");
	a_int("domain", AF_UNIX);
	a_int("type", SOCK_DGRAM | SOCK_CLOEXEC);
	a_int("protocol", 0);
	a_out("sv", sv, sizeof sv);
	done();
	need("socketpair");

	static const char m1[] = "RA-SENTINEL-sendmsg-a|", m2[] = "b-second\n";
	struct iovec mv[2] = {{(void *)m1, sizeof m1 - 1}, {(void *)m2, sizeof m2 - 1}};
	struct msghdr mh;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = mv;
	mh.msg_iovlen = 2;
	SC3(SYS_sendmsg, sv[0], &mh, 0);
	begin("sendmsg");
	a_int("sockfd", sv[0]);
	a_contains("msg", "RA-SENTINEL-sendmsg-a|b-second\n", sizeof m1 - 1 + sizeof m2 - 1);
	a_int("flags", 0);
	done();
	memset(buf, 0, sizeof buf);
	struct iovec rmv[2] = {{buf, 7}, {buf + 7, 100}};
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = rmv;
	mh.msg_iovlen = 2;
	SC3(SYS_recvmsg, sv[1], &mh, MSG_DONTWAIT);
	begin("recvmsg");
	a_int("sockfd", sv[1]);
	a_contains("msg", buf, g_r > 0 ? (size_t)g_r : 0);
	a_int("flags", MSG_DONTWAIT);
	done();

	struct iovec s1 = {(void *)"RA-SENTINEL-sendmmsg-1", 22}, s2 = {(void *)"RA-SENTINEL-sendmmsg-2!", 23};
	struct mmsghdr mm[2];
	memset(mm, 0, sizeof mm);
	mm[0].msg_hdr.msg_iov = &s1;
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1].msg_hdr.msg_iov = &s2;
	mm[1].msg_hdr.msg_iovlen = 1;
	SC4(SYS_sendmmsg, sv[0], mm, 2, 0);
	begin("sendmmsg");
	a_int("sockfd", sv[0]);
	a_mmsg("msgvec", mm, 2, g_r);
	a_int("vlen", 2);
	a_int("flags", 0);
	done();
	memset(buf, 0, sizeof buf);
	struct iovec r1 = {buf, 100}, r2 = {buf + 100, 100};
	memset(mm, 0, sizeof mm);
	mm[0].msg_hdr.msg_iov = &r1;
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1].msg_hdr.msg_iov = &r2;
	mm[1].msg_hdr.msg_iovlen = 1;
	SC5(SYS_recvmmsg, sv[1], mm, 2, MSG_DONTWAIT, NULL);
	begin("recvmmsg");
	a_int("sockfd", sv[1]);
	a_mmsg("msgvec", mm, 2, g_r);
	a_int("vlen", 2);
	a_int("flags", MSG_DONTWAIT);
	a_int("timeout", 0);
	done();

	/* epoll and eventfd. */
	int ep, ep1, efd;
	SC1(SYS_epoll_create, 7);
	begin("epoll_create");
	a_int("size", 7);
	done();
	ep = (int)need("epoll_create");
	SC1(SYS_epoll_create1, EPOLL_CLOEXEC);
	begin("epoll_create1");
	a_int("flags", EPOLL_CLOEXEC);
	done();
	ep1 = (int)need("epoll_create1");
	SC2(SYS_eventfd2, 0x5eed, EFD_CLOEXEC | EFD_NONBLOCK);
	begin("eventfd2");
	a_int("initval", 0x5eed);
	a_int("flags", EFD_CLOEXEC | EFD_NONBLOCK);
	done();
	efd = (int)need("eventfd2");

	struct epoll_event ev, evs[5];
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u64 = 0x5eed5eed5eedULL;
	SC4(SYS_epoll_ctl, ep1, EPOLL_CTL_ADD, efd, &ev);
	begin("epoll_ctl");
	a_int("epfd", ep1);
	a_int("op", EPOLL_CTL_ADD);
	a_int("fd", efd);
	a_hex("event", &ev, sizeof ev);
	done();
	SC4(SYS_epoll_wait, ep1, evs, 5, 0);
	begin("epoll_wait");
	a_int("epfd", ep1);
	a_hex("events", evs, g_r > 0 ? (size_t)g_r * sizeof(struct epoll_event) : 0);
	a_int("maxevents", 5);
	a_int("timeout", 0);
	done();
	SC6(SYS_epoll_pwait, ep1, evs, 5, 0, NULL, 8);
	begin("epoll_pwait");
	a_int("epfd", ep1);
	a_hex("events", evs, g_r > 0 ? (size_t)g_r * sizeof(struct epoll_event) : 0);
	a_int("maxevents", 5);
	a_int("timeout", 0);
	a_int("sigmask", 0);
	a_int("sigsetsize", 8);
	done();
	struct timespec zero = {0, 0};
	SC6(SYS_epoll_pwait2, ep1, evs, 5, &zero, NULL, 8);
	begin("epoll_pwait2");
	a_int("epfd", ep1);
	a_hex("events", evs, g_r > 0 ? (size_t)g_r * sizeof(struct epoll_event) : 0);
	a_int("maxevents", 5);
	a_ptr("timeout", &zero);
	a_int("sigmask", 0);
	a_int("sigsetsize", 8);
	done();

	/* More descriptor makers (simulated by replay, captured for the fd numbers). */
	int e0, tfd, sfd, ifd, pfd;
	SC1(SYS_eventfd, 0x5eee);
	begin("eventfd");
	a_int("initval", 0x5eee);
	done();
	e0 = (int)need("eventfd");
	SC2(SYS_timerfd_create, CLOCK_MONOTONIC, O_CLOEXEC | O_NONBLOCK);
	begin("timerfd_create");
	a_int("clockid", CLOCK_MONOTONIC);
	a_int("flags", O_CLOEXEC | O_NONBLOCK);
	done();
	tfd = (int)need("timerfd_create");
	uint64_t sigs = 1ULL << (SIGUSR2 - 1);
	SC4(SYS_signalfd4, -1, &sigs, 8, O_CLOEXEC);
	begin("signalfd4");
	a_int("fd", -1);
	a_ptr("mask", &sigs);
	a_int("sizemask", 8);
	a_int("flags", O_CLOEXEC);
	done();
	sfd = (int)need("signalfd4");
	SC1(SYS_inotify_init1, O_CLOEXEC);
	begin("inotify_init1");
	a_int("flags", O_CLOEXEC);
	done();
	ifd = (int)need("inotify_init1");
	SC2(SYS_pidfd_open, g_pid, 0);
	begin("pidfd_open");
	a_int("pid", g_pid);
	a_int("flags", 0);
	done();
	pfd = (int)need("pidfd_open");

	int fds[] = {pfd, ifd, sfd, tfd, e0, efd, ep1, ep, sv[0], sv[1], dc, ds, a2, a1, c2, c1, ls};
	for (unsigned i = 0; i < sizeof fds / sizeof fds[0]; i++)
		do_close(fds[i]);
}

/* Processes: fork, vfork, clone, clone3 and what their children do. */
static void processes(void)
{
	static char *const argv_true[] = {"true", "RA-SENTINEL-argv-1", "two words", NULL};
	static char *const envp_true[] = {"RA_SENTINEL=execve", "LANG=C", NULL};
	long child;

	/* execve that fails (ENOENT) in this process. */
	SC3(SYS_execve, "ra-no-such-program", argv_true, envp_true);
	begin("execve");
	a_str("pathname", "ra-no-such-program");
	a_strings("argv", argv_true);
	a_strings("envp", envp_true);
	done();

	/* fork: the child changes session and group, then execs /usr/bin/true. */
	child = SC0(SYS_fork);
	if (child == 0) {
		g_pid = syscall(SYS_getpid);
		SC0(SYS_setsid);
		begin("setsid");
		done();
		SC2(SYS_setpgid, 0, 0); /* EPERM: a session leader cannot change group */
		begin("setpgid");
		a_int("pid", 0);
		a_int("pgid", 0);
		done();
		begin("execve");
		a_str("pathname", "/usr/bin/true");
		a_strings("argv", argv_true);
		a_strings("envp", envp_true);
		end(0, 0);
		SC3(SYS_execve, "/usr/bin/true", argv_true, envp_true);
		die("execve /usr/bin/true");
	}
	begin("fork");
	done();
	need("fork");
	reap(child);

	/* vfork: the child calls exit(0x5e) at once; we log both. */
	child = vfork_exit(0x5e);
	begin("vfork");
	done();
	need("vfork");
	reap(child);
	begin_pid(child, "exit");
	a_int("status", 0x5e);
	end_noreturn();

	/* clone, fork-like: the child chroots into the scratch directory and exits. */
	child = SC5(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (child == 0) {
		g_pid = syscall(SYS_getpid);
		SC1(SYS_chroot, ".");
		begin("chroot");
		a_str("path", ".");
		done();
		log_exit_group(0x2d);
	}
	begin("clone");
	a_int("flags", SIGCHLD);
	a_int("stack", 0);
	a_int("parent_tid", 0);
	a_int("child_tid", 0);
	a_int("tls", 0);
	done();
	need("clone");
	reap(child);

	/* clone3, fork-like: the child execveat()s true from a /usr/bin fd. */
	struct ra_clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.exit_signal = SIGCHLD;
	child = SC2(SYS_clone3, &ca, sizeof ca);
	if (child == 0) {
		int bin;
		g_pid = syscall(SYS_getpid);
		SC4(SYS_openat, AT_FDCWD, "/usr/bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		begin("openat");
		a_int("dirfd", AT_FDCWD);
		a_str("pathname", "/usr/bin");
		a_int("flags", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		a_int("mode", 0);
		done();
		bin = (int)need("openat /usr/bin");
		begin("execveat");
		a_int("dirfd", bin);
		a_str("pathname", "true");
		a_strings("argv", argv_true);
		a_strings("envp", envp_true);
		a_int("flags", AT_SYMLINK_NOFOLLOW);
		end(0, 0);
		SC5(SYS_execveat, bin, "true", argv_true, envp_true, AT_SYMLINK_NOFOLLOW);
		die("execveat true");
	}
	begin("clone3");
	a_hex("cl_args", &ca, sizeof ca);
	a_int("size", sizeof ca);
	done();
	need("clone3");
	reap(child);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		die("usage: workload SCRATCH_DIR LOG_FILE");
	g_pid = syscall(SYS_getpid);
	owner = getuid() == 0 ? 0x5eed : getuid();
	group = getuid() == 0 ? 0x6eed : getgid();

	g_log = (int)syscall(SYS_openat, (long)AT_FDCWD, argv[2],
			     (long)(O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC), 0644L);
	if (g_log < 0)
		die("cannot open the log file");
	js("{\"log_fd\":");
	jint(g_log);
	js(",\"pid\":");
	jint(g_pid);
	js(",\"uid\":");
	jint((long)getuid());
	js(",\"gid\":");
	jint((long)getgid());
	js("}\n");
	flush();

	process_state(argv[1]);
	file_data();
	file_meta();
	descriptors();
	memory();
	sockets();
	processes();

	do_close(D);
	SC1(SYS_umask, 022);
	begin("umask");
	a_int("mask", 022);
	done();
	log_exit_group(0);
}

#endif /* __x86_64__ */
