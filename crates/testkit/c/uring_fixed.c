/* uring_fixed: io_uring's registered files and buffers, for the recorders' io_uring_register
 * records and the trace's resolution of IOSQE_FIXED_FILE and *_FIXED requests. Raw system
 * calls (io_uring_setup, io_uring_register, io_uring_enter and the mapped rings), no liburing.
 *
 *   uring_fixed DIR [sqpoll]
 *
 * Makes DIR/a.dat (A) and DIR/b.dat (B), registers the files [A, -1, B] and the buffers
 * {4096, 8192 bytes}, and submits, each waited for (user_data k):
 *    1. WRITE_FIXED(slot 0 = A, buf 0, 4096, 0)       2. WRITE(slot 2 = B, 1000, 0)
 *    FILES_UPDATE(offset 1, [B])                         3. WRITE_FIXED(slot 1 = B, buf 1, 8192, 1000)
 *    4. READ_FIXED(slot 0 = A, buf 1, 4096, 0)          close(A) (the slot keeps the file)
 *    5. READ(slot 0 = A, 100, 0)                          UNREGISTER_FILES
 *    REGISTER_FILES2(4 slots, IORING_RSRC_REGISTER_SPARSE), FILES_UPDATE2(offset 3, [B])
 *    6. READ(slot 3 = B, 500, 0)                          7. READ(B by descriptor, 10, 0)
 *
 * Prints one JSON object: {"pid":P,"ring_fd":R,"a":"DIR/a.dat","b":"DIR/b.dat","a_fd":FA,
 * "b_fd":FB,"ops":[{"user_data":1,"res":4096,"file":"a"},...]} (each request's result and the
 * file it was on, by the program's own knowledge). Exits 1 when a result is not the expected.
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
				fprintf(stderr, "uring_fixed: request %u: %d, not %d\n", ud, res, want);
				failed = 1;
			}
			return res;
		}
		if (syscall(__NR_io_uring_enter, ring_fd, submitted, 1, flags, NULL, 0) < 0)
			die("io_uring_enter");
		submitted = 0;
	}
}


static long reg(unsigned op, void *arg, unsigned nr)
{
	long r = syscall(__NR_io_uring_register, ring_fd, op, arg, nr);
	if (r < 0)
		die("io_uring_register");
	return r;
}

static char files_of[64][2];

static void note(char file)
{
	files_of[ud][0] = file;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uring_fixed DIR [sqpoll]\n");
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


	static char a_path[4096], b_path[4096];
	snprintf(a_path, sizeof(a_path), "%s/a.dat", argv[1]);
	snprintf(b_path, sizeof(b_path), "%s/b.dat", argv[1]);
	int a = open(a_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int b = open(b_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (a < 0 || b < 0)
		die("open");
	int files[3] = {a, -1, b};
	reg(IORING_REGISTER_FILES, files, 3);
	static char buf0[4096] __attribute__((aligned(4096)));
	static char buf1[8192] __attribute__((aligned(4096)));
	static char plain[1000];
	memset(buf0, 'a', sizeof(buf0));
	memset(buf1, 'b', sizeof(buf1));
	memset(plain, 'p', sizeof(plain));
	struct iovec iov[2] = {{buf0, sizeof(buf0)}, {buf1, sizeof(buf1)}};
	reg(IORING_REGISTER_BUFFERS, iov, 2);
	struct io_uring_sqe *s;

	s = get_sqe(IORING_OP_WRITE_FIXED, 0, buf0, 4096, 0);
	s->flags = IOSQE_FIXED_FILE;
	s->buf_index = 0;
	note('a');
	run(4096, 0);
	s = get_sqe(IORING_OP_WRITE, 2, plain, sizeof(plain), 0);
	s->flags = IOSQE_FIXED_FILE;
	note('b');
	run(sizeof(plain), 0);
	int upd[1] = {b};
	struct io_uring_files_update fu = {.offset = 1, .fds = (unsigned long)upd};
	reg(IORING_REGISTER_FILES_UPDATE, &fu, 1);
	s = get_sqe(IORING_OP_WRITE_FIXED, 1, buf1, 8192, 1000);
	s->flags = IOSQE_FIXED_FILE;
	s->buf_index = 1;
	note('b');
	run(8192, 0);
	s = get_sqe(IORING_OP_READ_FIXED, 0, buf1, 4096, 0);
	s->flags = IOSQE_FIXED_FILE;
	s->buf_index = 1;
	note('a');
	run(4096, 0);
	if (memcmp(buf1, buf0, 4096)) {
		fprintf(stderr, "uring_fixed: read other bytes than written\n");
		failed = 1;
	}
	close(a);
	s = get_sqe(IORING_OP_READ, 0, plain, 100, 0);
	s->flags = IOSQE_FIXED_FILE;
	note('a');
	run(100, 0);
	reg(IORING_UNREGISTER_FILES, NULL, 0);
	struct io_uring_rsrc_register rr = {.nr = 4, .flags = IORING_RSRC_REGISTER_SPARSE};
	reg(IORING_REGISTER_FILES2, &rr, sizeof(rr));
	struct io_uring_rsrc_update2 u2 = {.offset = 3, .data = (unsigned long)upd, .nr = 1};
	reg(IORING_REGISTER_FILES_UPDATE2, &u2, sizeof(u2));
	s = get_sqe(IORING_OP_READ, 3, plain, 500, 0);
	s->flags = IOSQE_FIXED_FILE;
	note('b');
	run(500, 0);
	get_sqe(IORING_OP_READ, b, plain, 10, 0);
	note('b');
	run(10, 0);
	static char out[8192];
	size_t n = 0;
	/* ops with the file each was on */
	char *o = ops;
	for (unsigned k = 1; k <= ud; k++) {
		char *q = strstr(o, "}");
		if (!q)
			break;
		n += snprintf(out + n, sizeof(out) - n, "%s%.*s,\"file\":\"%c\"}", k > 1 ? "," : "",
			      (int)(q - o), o, files_of[k][0]);
		o = q + 1;
		if (*o == ',')
			o++;
	}
	printf("{\"pid\":%d,\"ring_fd\":%d,\"a\":\"%s\",\"b\":\"%s\",\"a_fd\":%d,\"b_fd\":%d,"
	       "\"ops\":[%s]}\n",
	       getpid(), ring_fd, a_path, b_path, a, b, out);
	return failed;
}
