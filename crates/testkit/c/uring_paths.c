/* uring_paths: the path opcodes of io_uring, for the recorders' paths of `io_uring_op` records.
 * Raw system calls (io_uring_setup, io_uring_enter and the mapped rings), no liburing.
 *
 *   uring_paths DIR [sqpoll]
 *
 * Opens DIR (descriptor D) and submits, one request at a time (user_data k = 1..17), each
 * waited for:
 *    1. MKDIRAT(D, "sub", 0755)               2. OPENAT(D, "sub/f.txt", O_CREAT|O_WRONLY, 0640)
 *    3. WRITE(F, "hello io_uring paths\n", 21, 0)   4. CLOSE(F)
 *    5. STATX(D, "sub/f.txt", 0, STATX_SIZE)  6. RENAMEAT(D, "sub/f.txt", AT_FDCWD, "DIR/sub/g.txt")
 *    7. LINKAT(D, "sub/g.txt", D, "sub/h.txt", 0)     8. SYMLINKAT("g.txt", D, "sub/s")
 *    9. OPENAT2(D, "sub/s", {O_RDONLY, 0, RESOLVE_BENEATH})  10. READ(G, 64, 0)  11. CLOSE(G)
 *   12. SETXATTR("DIR/sub/g.txt", "user.uring", "v1", 2)  13. GETXATTR(same, 16)
 *   14. FSETXATTR(H, "user.other", "v22", 3) on H = open("DIR/sub/h.txt") (a system call)
 *   15. FGETXATTR(H, "user.other", 16)  16. UNLINKAT(D, "sub/h.txt", 0)
 *   17. UNLINKAT(D, "missing", 0): fails ENOENT
 *
 * Prints one JSON object: {"pid":P,"ring_fd":R,"dir_fd":D,"ops":[{"user_data":1,"res":0},...]}.
 * Exits 1 when a result is not the one expected (the xattr requests may fail EOPNOTSUPP on a
 * file system without user xattrs: then their results are printed as they are).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ring_fd;
static unsigned *sq_tail, *sq_mask, *sq_array, *sq_flags, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static unsigned sqpoll, tail, ud;
static char ops[4096];
static size_t ops_len;
static int failed;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static struct io_uring_sqe *get_sqe(int op, int fd, const void *addr, unsigned len,
				    unsigned long long off)
{
	unsigned i = tail & *sq_mask;
	struct io_uring_sqe *s = &sqes[i];
	memset(s, 0, sizeof(*s));
	sq_array[i] = i;
	tail++;
	s->opcode = op;
	s->fd = fd;
	s->addr = (unsigned long)addr;
	s->len = len;
	s->off = off;
	s->user_data = ++ud;
	return s;
}

/* Submit the one SQE and wait for its completion: its res (checked against `want` unless
 * `any`). */
static int run(int want, int any)
{
	unsigned flags = IORING_ENTER_GETEVENTS, submitted = 1;
	__atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
	if (sqpoll) {
		submitted = 0;
		if (__atomic_load_n(sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP)
			flags |= IORING_ENTER_SQ_WAKEUP;
	}
	for (;;) {
		unsigned h = *cq_head;
		if (h != __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
			struct io_uring_cqe *c = &cqes[h & *cq_mask];
			int res = c->res;
			ops_len += snprintf(ops + ops_len, sizeof(ops) - ops_len,
					    "%s{\"user_data\":%llu,\"res\":%d}", ops_len ? "," : "",
					    (unsigned long long)c->user_data, res);
			__atomic_store_n(cq_head, h + 1, __ATOMIC_RELEASE);
			if (!any && res != want) {
				fprintf(stderr, "uring_paths: request %u: %d, not %d\n", ud, res, want);
				failed = 1;
			}
			return res;
		}
		if (syscall(__NR_io_uring_enter, ring_fd, submitted, 1, flags, NULL, 0) < 0)
			die("io_uring_enter");
		submitted = 0;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uring_paths DIR [sqpoll]\n");
		return 2;
	}
	sqpoll = argc > 2 && !strcmp(argv[2], "sqpoll");
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;
	}
	ring_fd = syscall(__NR_io_uring_setup, 8, &p);
	if (ring_fd < 0)
		die("io_uring_setup");
	size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (cq_sz > sq_sz)
		sq_sz = cq_sz;
	char *sq = mmap(0, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd,
			IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		die("mmap sq");
	sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
	if (sqes == MAP_FAILED)
		die("mmap sqes");
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	sq_flags = (unsigned *)(sq + p.sq_off.flags);
	cq_head = (unsigned *)(sq + p.cq_off.head);
	cq_tail = (unsigned *)(sq + p.cq_off.tail);
	cq_mask = (unsigned *)(sq + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(sq + p.cq_off.cqes);
	tail = *sq_tail;

	int dfd = open(argv[1], O_DIRECTORY | O_RDONLY);
	if (dfd < 0)
		die("open DIR");
	static char g_path[4096], h_path[4096];
	snprintf(g_path, sizeof(g_path), "%s/sub/g.txt", argv[1]);
	snprintf(h_path, sizeof(h_path), "%s/sub/h.txt", argv[1]);
	static const char text[] = "hello io_uring paths\n";
	static char buf[64], xbuf[16];
	static struct statx stx;
	struct io_uring_sqe *s;

	get_sqe(IORING_OP_MKDIRAT, dfd, "sub", 0755, 0);
	run(0, 0);
	s = get_sqe(IORING_OP_OPENAT, dfd, "sub/f.txt", 0640, 0);
	s->open_flags = O_CREAT | O_WRONLY | O_CLOEXEC;
	int f = run(0, 1);
	if (f < 0) {
		fprintf(stderr, "uring_paths: openat: %d\n", f);
		return 1;
	}
	get_sqe(IORING_OP_WRITE, f, text, sizeof(text) - 1, 0);
	run(sizeof(text) - 1, 0);
	get_sqe(IORING_OP_CLOSE, f, NULL, 0, 0);
	run(0, 0);
	s = get_sqe(IORING_OP_STATX, dfd, "sub/f.txt", STATX_SIZE, (unsigned long)&stx);
	run(0, 0);
	if (stx.stx_size != sizeof(text) - 1) {
		fprintf(stderr, "uring_paths: statx size %llu\n", (unsigned long long)stx.stx_size);
		failed = 1;
	}
	s = get_sqe(IORING_OP_RENAMEAT, dfd, "sub/f.txt", (unsigned)AT_FDCWD, (unsigned long)g_path);
	run(0, 0);
	s = get_sqe(IORING_OP_LINKAT, dfd, "sub/g.txt", dfd, (unsigned long)"sub/h.txt");
	run(0, 0);
	s = get_sqe(IORING_OP_SYMLINKAT, dfd, "g.txt", 0, (unsigned long)"sub/s");
	run(0, 0);
	static struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_BENEATH};
	s = get_sqe(IORING_OP_OPENAT2, dfd, "sub/s", sizeof(how), (unsigned long)&how);
	int g = run(0, 1);
	if (g < 0) {
		fprintf(stderr, "uring_paths: openat2: %d\n", g);
		return 1;
	}
	get_sqe(IORING_OP_READ, g, buf, sizeof(buf), 0);
	if (run(sizeof(text) - 1, 0) == sizeof(text) - 1 && memcmp(buf, text, sizeof(text) - 1)) {
		fprintf(stderr, "uring_paths: read other bytes than written\n");
		failed = 1;
	}
	get_sqe(IORING_OP_CLOSE, g, NULL, 0, 0);
	run(0, 0);
	s = get_sqe(IORING_OP_SETXATTR, 0, "user.uring", 2, (unsigned long)"v1");
	s->addr3 = (unsigned long)g_path;
	int xa = run(0, 1);
	s = get_sqe(IORING_OP_GETXATTR, 0, "user.uring", sizeof(xbuf), (unsigned long)xbuf);
	s->addr3 = (unsigned long)g_path;
	run(xa == 0 ? 2 : xa, 0);
	int h = open(h_path, O_RDWR);
	if (h < 0)
		die("open h.txt");
	get_sqe(IORING_OP_FSETXATTR, h, "user.other", 3, (unsigned long)"v22");
	xa = run(0, 1);
	get_sqe(IORING_OP_FGETXATTR, h, "user.other", sizeof(xbuf), (unsigned long)xbuf);
	run(xa == 0 ? 3 : xa, 0);
	close(h);
	get_sqe(IORING_OP_UNLINKAT, dfd, "sub/h.txt", 0, 0);
	run(0, 0);
	get_sqe(IORING_OP_UNLINKAT, dfd, "missing", 0, 0);
	run(-2, 0); /* -ENOENT */

	printf("{\"pid\":%d,\"ring_fd\":%d,\"dir_fd\":%d,\"ops\":[%s]}\n", getpid(), ring_fd, dfd,
	       ops);
	return failed;
}
