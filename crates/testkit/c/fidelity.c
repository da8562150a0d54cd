/* fidelity: calls whose replay must reproduce exactly what the kernel answered, one mode per
 * finding of issue 39 (crates/cli/tests/replay_fidelity.rs records each mode under both
 * recorders and replays it with --init into an empty root: every call must match).
 *
 *   fidelity MODE [ARG]          (run in the directory it may write in)
 *
 * Modes:
 *   flags     bad flags, names and sizes together with bad paths and descriptors: the kernel
 *             refuses the flags or sizes before it looks anything up (linkat, statx, the
 *             twelve xattr calls, memfd_create).
 *   create    mknod with mode 0 and mknodat without a file type (regular files); O_TMPFILE
 *             with access mode 3 (accepted by the kernel) and with O_RDWR.
 *   locks     a parent's fcntl record locks at offsets and lengths beyond 32 bits, which a
 *             forked child's locks below and inside them meet (or not); OFD locks likewise.
 *   times     utimes, futimesat and utimensat with out-of-range microseconds/nanoseconds
 *             (EINVAL) and with the largest valid ones.
 *   xattr     getxattr/lgetxattr/fgetxattr and listxattr/llistxattr/flistxattr with size 0
 *             (a size query), a buffer too small (ERANGE) and one large enough.
 *   mmap F    maps file F (which exists, written back, and is never read with read(2))
 *             MAP_SHARED, PROT_READ after dropping it from the page cache, reads every page
 *             through the mapping and writes the sum of its bytes to F.sum.
 *   race N    a parent and a forked child race N rounds on directory race.d: the child
 *             makes and removes race.d/sub and race.d/file, the parent stats race.d, lists
 *             it and looks the names up, so that results show which call ran first.
 *   deep N [keep]
 *             a chain of N directories of 100-byte names (beyond PATH_MAX), made and entered
 *             with mkdirat/openat relative to the last one, a file written at the bottom,
 *             then stat'ed, read back and (without `keep`) removed bottom-up again with
 *             unlinkat.
 *
 * Exit status 0 when every call answered as the kernel documents it, 1 (with the call on
 * stderr) otherwise: a recorded trace is then known to hold the intended results.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failures;

/* `r` must be -1 with errno `want` (want 0: r >= 0). */
static void expect(const char *what, long r, int want)
{
	int e = errno;
	if (want == 0 ? r >= 0 : (r == -1 && e == want))
		return;
	fprintf(stderr, "fidelity: %s: returned %ld errno %d (%s), wanted %s\n", what, r,
		r < 0 ? e : 0, r < 0 ? strerror(e) : "-", want ? strerror(want) : "success");
	failures++;
}

static void die(const char *what)
{
	fprintf(stderr, "fidelity: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int make_file(const char *name, const char *content)
{
	int fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		die(name);
	if (write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		die("write");
	return fd;
}

/* ---- flags: the kernel's checks before any lookup -------------------------------------- */

static void mode_flags(void)
{
	const int bad_fd = 1000;
	struct statx sx;
	char v[8] = "value";
	static char big[70000];
	char name256[300];
	memset(name256, 'n', sizeof name256);
	memcpy(name256, "user.", 5);
	name256[260] = 0;

	/* linkat: unknown flags are EINVAL before either name is looked up. */
	expect("linkat bad flags", syscall(SYS_linkat, AT_FDCWD, "missing/a", AT_FDCWD, "missing/b",
					   0x1), EINVAL);
	expect("linkat bad flags, bad dirfds",
	       syscall(SYS_linkat, bad_fd, "a", bad_fd, "b", 0x8000), EINVAL);
	expect("linkat bad flags, empty name", syscall(SYS_linkat, AT_FDCWD, "", AT_FDCWD, "x", 0x2),
	       EINVAL);
	/* statx: reserved mask bits, both sync types, unknown flags; before the lookup. */
	expect("statx reserved mask",
	       syscall(SYS_statx, AT_FDCWD, "missing", 0, 0x80000000u, &sx), EINVAL);
	expect("statx both sync types",
	       syscall(SYS_statx, bad_fd, "x", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
		       STATX_BASIC_STATS, &sx), EINVAL);
	expect("statx unknown flags",
	       syscall(SYS_statx, AT_FDCWD, "missing/x", 0x10000000, STATX_BASIC_STATS, &sx),
	       EINVAL);
	/* With an empty path and AT_EMPTY_PATH the descriptor is looked up before the flags
	 * (but after the mask and the sync type). */
	expect("statx unknown flags, empty path, bad fd",
	       syscall(SYS_statx, bad_fd, "", AT_EMPTY_PATH | 0x10000000, STATX_BASIC_STATS, &sx),
	       EBADF);
	expect("statx reserved mask, empty path, bad fd",
	       syscall(SYS_statx, bad_fd, "", AT_EMPTY_PATH, 0x80000000u, &sx), EINVAL);
	expect("statx unknown flags, empty path without AT_EMPTY_PATH",
	       syscall(SYS_statx, AT_FDCWD, "", 0x10000000, STATX_BASIC_STATS, &sx), EINVAL);
	/* xattrs: flags, then the name (empty or too long: ERANGE), then the size (E2BIG),
	 * all before the path or descriptor. */
	expect("setxattr bad flags", setxattr("missing", "user.a", v, 5, 4), EINVAL);
	expect("lsetxattr empty name", lsetxattr("missing", "", v, 5, 0), ERANGE);
	expect("fsetxattr bad fd, long name", fsetxattr(bad_fd, name256, v, 5, 0), ERANGE);
	expect("setxattr too big", setxattr("missing", "user.a", big, sizeof big, 0), E2BIG);
	expect("fsetxattr bad fd, bad flags", fsetxattr(bad_fd, "user.a", v, 5, 8), EINVAL);
	expect("getxattr empty name", getxattr("missing", "", v, sizeof v), ERANGE);
	expect("lgetxattr long name", lgetxattr("missing/x", name256, v, sizeof v), ERANGE);
	expect("fgetxattr bad fd, empty name", fgetxattr(bad_fd, "", v, sizeof v), ERANGE);
	expect("removexattr empty name", removexattr("missing", ""), ERANGE);
	expect("lremovexattr long name", lremovexattr("missing", name256), ERANGE);
	expect("fremovexattr bad fd, empty name", fremovexattr(bad_fd, ""), ERANGE);
	/* The lookups themselves, for contrast: ENOENT and EBADF. */
	expect("getxattr missing", getxattr("missing", "user.a", v, sizeof v), ENOENT);
	expect("fgetxattr bad fd", fgetxattr(bad_fd, "user.a", v, sizeof v), EBADF);
	expect("listxattr missing", listxattr("missing", v, sizeof v), ENOENT);
	expect("flistxattr bad fd", flistxattr(bad_fd, v, sizeof v), EBADF);
	/* memfd_create: the flags before the name is read. */
	expect("memfd_create bad flags, null name", syscall(SYS_memfd_create, NULL, 0x100u), EINVAL);
	expect("memfd_create exec and noexec",
	       syscall(SYS_memfd_create, "m", 0x0008u | 0x0010u), EINVAL);
	expect("memfd_create bad flags", syscall(SYS_memfd_create, "m", 0x40000u), EINVAL);
}

/* ---- create: what the kernel accepts -------------------------------------------------- */

static void mode_create(void)
{
	struct stat st;
	umask(022);
	expect("mknod mode 0", mknod("plain0", 0, 0), 0);
	expect("stat plain0", stat("plain0", &st), 0);
	expect("mknodat 0644 without a type", mknodat(AT_FDCWD, "plain644", 0644, 0), 0);
	expect("stat plain644", stat("plain644", &st), 0);
	expect("mknod exists", mknod("plain0", 0, 0), EEXIST);
	int fd = open(".", O_TMPFILE | 3, 0600);
	expect("open O_TMPFILE|3", fd, 0);
	if (fd >= 0) {
		expect("fstat tmpfile", fstat(fd, &st), 0);
		char c = 'x';
		expect("write to an O_TMPFILE|3 descriptor", write(fd, &c, 1), EBADF);
		close(fd);
	}
	fd = open(".", O_TMPFILE | O_RDWR, 0640);
	expect("open O_TMPFILE|O_RDWR", fd, 0);
	if (fd >= 0) {
		expect("write tmpfile", write(fd, "tmp", 3), 0);
		expect("fstat tmpfile", fstat(fd, &st), 0);
		close(fd);
	}
	expect("open O_TMPFILE|O_RDONLY", open(".", O_TMPFILE | O_RDONLY, 0600), EINVAL);
	expect("unlink plain0", unlink("plain0"), 0);
}

/* ---- locks: offsets and lengths beyond 32 bits ---------------------------------------- */

static int lock(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	return fcntl(fd, cmd, &fl);
}

static void mode_locks(void)
{
	const off_t G = 1LL << 32;
	int fd = make_file("locked", "lock me\n");
	int ofd = make_file("ofd-locked", "lock me too\n");
	int go[2], done[2];
	if (pipe(go) || pipe(done))
		die("pipe");
	/* The parent's locks: [5G, 5G + 3G) and a second one from 40G to the end. */
	expect("F_SETLK at 5G", lock(fd, F_SETLK, F_WRLCK, 5 * G, 3 * G), 0);
	expect("F_SETLK at 40G", lock(fd, F_SETLK, F_RDLCK, 40 * G, 0), 0);
	expect("F_OFD_SETLK at 6G", lock(ofd, F_OFD_SETLK, F_WRLCK, 6 * G, 2 * G + 7), 0);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		int cfd = open("locked", O_RDWR);
		int cofd = open("ofd-locked", O_RDWR);
		/* Below and between the parent's locks: granted. */
		expect("child F_SETLK at 0", lock(cfd, F_SETLK, F_WRLCK, 0, 4096), 0);
		expect("child F_SETLK at 9G", lock(cfd, F_SETLK, F_WRLCK, 9 * G, G), 0);
		expect("child F_OFD_SETLK at 0", lock(cofd, F_OFD_SETLK, F_WRLCK, 0, 100), 0);
		/* Inside them: refused. */
		expect("child F_SETLK inside 5G", lock(cfd, F_SETLK, F_WRLCK, 6 * G, 10), EAGAIN);
		expect("child F_SETLK inside 40G", lock(cfd, F_SETLK, F_WRLCK, 50 * G, 10), EAGAIN);
		expect("child read lock inside 40G", lock(cfd, F_SETLK, F_RDLCK, 41 * G, 10), 0);
		expect("child F_OFD_SETLK inside 6G", lock(cofd, F_OFD_SETLK, F_RDLCK, 7 * G, 1),
		       EAGAIN);
		struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
		expect("child F_GETLK below", fcntl(cfd, F_GETLK, &q), 0);
		if (q.l_type != F_UNLCK) {
			fprintf(stderr, "fidelity: F_GETLK below the locks found one\n");
			failures++;
		}
		struct flock in = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 7 * G,
				    .l_len = 5 };
		expect("child F_GETLK inside 5G", fcntl(cfd, F_GETLK, &in), 0);
		if (in.l_type != F_WRLCK || in.l_start != 5 * G || in.l_len != 3 * G) {
			fprintf(stderr, "fidelity: F_GETLK inside 5G did not find the parent's lock\n");
			failures++;
		}
		if (write(done[1], "d", 1) != 1)
			_exit(1);
		_exit(failures ? 1 : 0);
	}
	if (write(go[1], "g", 1) != 1)
		die("write go");
	char c;
	if (read(done[0], &c, 1) != 1)
		die("read done");
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "fidelity: the locking child failed\n");
		failures++;
	}
	/* The parent's own locks still stand: its unlock of part of one succeeds. */
	expect("F_SETLK unlock at 5G", lock(fd, F_SETLK, F_UNLCK, 5 * G, G), 0);
	close(fd);
	close(ofd);
}

/* ---- times: out-of-range fractions ---------------------------------------------------- */

static void mode_times(void)
{
	close(make_file("timed", "t\n"));
	struct timeval tv[2] = { { 1000, 999999 }, { 2000, 0 } };
	/* The utimes system call itself (glibc's utimes() calls utimensat). */
	expect("utimes 999999 us", syscall(SYS_utimes, "timed", tv), 0);
	tv[0].tv_usec = 1000000;
	expect("utimes 1000000 us", syscall(SYS_utimes, "timed", tv), EINVAL);
	expect("glibc utimes 1000000 us", utimes("timed", tv), EINVAL);
	tv[0].tv_usec = 0;
	tv[1].tv_usec = -1;
	expect("utimes -1 us", syscall(SYS_utimes, "timed", tv), EINVAL);
	tv[1].tv_usec = 1000000;
	expect("futimesat 1000000 us", syscall(SYS_futimesat, AT_FDCWD, "timed", tv), EINVAL);
	tv[1].tv_usec = 5;
	expect("futimesat 5 us", syscall(SYS_futimesat, AT_FDCWD, "timed", tv), 0);
	struct timespec ts[2] = { { 3000, 999999999 }, { 4000, 1000000000 } };
	expect("utimensat 1e9 ns", utimensat(AT_FDCWD, "timed", ts, 0), EINVAL);
	ts[1].tv_nsec = 0;
	expect("utimensat 999999999 ns", utimensat(AT_FDCWD, "timed", ts, 0), 0);
	ts[0].tv_nsec = -5;
	expect("utimensat -5 ns", utimensat(AT_FDCWD, "timed", ts, 0), EINVAL);
	struct stat st;
	expect("stat timed", stat("timed", &st), 0);
}

/* ---- xattr: size queries and list calls ----------------------------------------------- */

static void mode_xattr(void)
{
	int fd = make_file("attrs", "x\n");
	char buf[256];
	expect("setxattr user.one", setxattr("attrs", "user.one", "first", 5, 0), 0);
	expect("fsetxattr user.second", fsetxattr(fd, "user.second", "2nd value", 9, 0), 0);
	if (symlink("attrs", "attrs.link"))
		die("symlink");
	/* Size queries: the value's size, nothing copied. */
	expect("getxattr size 0", getxattr("attrs", "user.one", NULL, 0), 0);
	expect("lgetxattr size 0 through a symlink", lgetxattr("attrs.link", "user.one", NULL, 0),
	       ENODATA);
	expect("fgetxattr size 0", fgetxattr(fd, "user.second", NULL, 0), 0);
	expect("getxattr size 0, missing name", getxattr("attrs", "user.none", NULL, 0), ENODATA);
	/* Too small, then large enough. */
	expect("getxattr too small", getxattr("attrs", "user.second", buf, 3), ERANGE);
	expect("fgetxattr", fgetxattr(fd, "user.second", buf, sizeof buf), 0);
	/* Lists: a size query, too small, large enough; each of the three forms. */
	expect("listxattr size 0", listxattr("attrs", NULL, 0), 0);
	expect("listxattr too small", listxattr("attrs", buf, 4), ERANGE);
	expect("listxattr", listxattr("attrs", buf, sizeof buf), 0);
	expect("llistxattr size 0 of a symlink", llistxattr("attrs.link", NULL, 0), 0);
	expect("llistxattr of a symlink", llistxattr("attrs.link", buf, sizeof buf), 0);
	expect("llistxattr of the file", llistxattr("attrs", buf, sizeof buf), 0);
	expect("flistxattr size 0", flistxattr(fd, NULL, 0), 0);
	expect("flistxattr too small", flistxattr(fd, buf, 1), ERANGE);
	expect("flistxattr", flistxattr(fd, buf, sizeof buf), 0);
	expect("removexattr user.one", removexattr("attrs", "user.one"), 0);
	expect("flistxattr after the removal", flistxattr(fd, buf, sizeof buf), 0);
	close(fd);
}

/* ---- mmap: content read only through a mapping ---------------------------------------- */

static void mode_mmap(const char *path)
{
	/* O_RDWR: the eBPF recorder sees faults on shared mappings of descriptors opened
	 * read-only only since issue 39's item 15. */
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	struct stat st;
	if (fstat(fd, &st))
		die("fstat");
	size_t len = (size_t)st.st_size;
	/* Out of the page cache first (the caller wrote it back): each page is then faulted in
	 * on its own, which the eBPF recorder sees. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	unsigned char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	unsigned long sum = 0;
	for (size_t i = 0; i < len; i += 4096)
		for (size_t j = i; j < i + 4096 && j < len; j++)
			sum += p[j];
	munmap(p, len);
	close(fd);
	char out[4096], line[64];
	snprintf(out, sizeof out, "%s.sum", path);
	int o = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (o < 0)
		die(out);
	int n = snprintf(line, sizeof line, "%lu\n", sum);
	if (write(o, line, (size_t)n) != n)
		die("write sum");
	close(o);
}

/* ---- race: two processes on one directory --------------------------------------------- */

static void lister(const char *dir)
{
	char buf[4096];
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	if (d < 0)
		die("open dir");
	while (syscall(SYS_getdents64, d, buf, sizeof buf) > 0) {
	}
	close(d);
}

static void mode_race(int rounds)
{
	struct stat st;
	if (mkdir("race.d", 0755))
		die("mkdir race.d");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (int i = 0; i < rounds; i++) {
			mkdir("race.d/sub", 0755);
			close(open("race.d/file", O_CREAT | O_WRONLY, 0644));
			rmdir("race.d/sub");
			unlink("race.d/file");
		}
		_exit(0);
	}
	for (int i = 0; i < rounds; i++) {
		/* (Not a stat of race.d/sub: one made while the child's rmdir ran shows the
		 * link count and size the directory has between its lookup and its removal.) */
		stat("race.d", &st);
		access("race.d/sub", F_OK);
		lister("race.d");
		access("race.d/file", F_OK);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fidelity: the racing child failed\n");
		failures++;
	}
	expect("stat race.d at the end", stat("race.d", &st), 0);
}

/* ---- deep: a tree deeper than PATH_MAX ------------------------------------------------ */

static void mode_deep(int depth, int keep)
{
	char name[101];
	memset(name, 'd', 100);
	name[100] = 0;
	int *fds = calloc((size_t)depth + 1, sizeof *fds);
	if (!fds)
		die("calloc");
	fds[0] = open(".", O_RDONLY | O_DIRECTORY);
	if (fds[0] < 0)
		die("open .");
	for (int i = 0; i < depth; i++) {
		snprintf(name, sizeof name, "%03d", i);
		name[3] = 'd';
		memset(name + 3, 'd', 97);
		name[100] = 0;
		expect("mkdirat", mkdirat(fds[i], name, 0755), 0);
		fds[i + 1] = openat(fds[i], name, O_RDONLY | O_DIRECTORY);
		expect("openat", fds[i + 1], 0);
		if (fds[i + 1] < 0)
			die("openat");
	}
	int f = openat(fds[depth], "bottom.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	expect("openat bottom.txt", f, 0);
	expect("write bottom.txt", write(f, "at the bottom\n", 14), 0);
	close(f);
	struct stat st;
	expect("fstatat bottom.txt", fstatat(fds[depth], "bottom.txt", &st, 0), 0);
	char buf[64];
	f = openat(fds[depth], "bottom.txt", O_RDONLY);
	expect("openat bottom.txt to read", f, 0);
	expect("read bottom.txt", read(f, buf, sizeof buf), 0);
	close(f);
	if (keep) {
		for (int i = 0; i <= depth; i++)
			close(fds[i]);
		free(fds);
		return;
	}
	expect("unlinkat bottom.txt", unlinkat(fds[depth], "bottom.txt", 0), 0);
	for (int i = depth - 1; i >= 0; i--) {
		snprintf(name, sizeof name, "%03d", i);
		memset(name + 3, 'd', 97);
		name[100] = 0;
		close(fds[i + 1]);
		expect("unlinkat dir", unlinkat(fds[i], name, AT_REMOVEDIR), 0);
	}
	close(fds[0]);
	free(fds);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: fidelity flags|create|locks|times|xattr|mmap F|race N|deep N [keep]\n");
		return 2;
	}
	const char *m = argv[1];
	if (!strcmp(m, "flags"))
		mode_flags();
	else if (!strcmp(m, "create"))
		mode_create();
	else if (!strcmp(m, "locks"))
		mode_locks();
	else if (!strcmp(m, "times"))
		mode_times();
	else if (!strcmp(m, "xattr"))
		mode_xattr();
	else if (!strcmp(m, "mmap") && argc == 3)
		mode_mmap(argv[2]);
	else if (!strcmp(m, "race") && argc == 3)
		mode_race(atoi(argv[2]));
	else if (!strcmp(m, "deep") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "keep"))))
		mode_deep(atoi(argv[2]), argc == 4);
	else {
		fprintf(stderr, "fidelity: unknown mode %s\n", m);
		return 2;
	}
	return failures ? 1 : 0;
}
