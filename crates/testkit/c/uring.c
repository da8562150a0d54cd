/* uring: file I/O through io_uring, for the recorders' io_uring_op records. Raw system calls
 * (io_uring_setup, io_uring_register, io_uring_enter and the mapped rings), no liburing.
 *
 *   uring DIR [sqpoll]
 *
 * Sets up a ring of 8 entries (with an SQPOLL thread when asked), creates DIR/u.dat, registers
 * it as fixed file 0 and one 8 KiB buffer as fixed buffer 0, then submits, one batch per line,
 * and waits for every completion:
 *   1. WRITE 4096 bytes of pattern A at 0 (IOSQE_IO_LINK), FSYNC with IORING_FSYNC_DATASYNC
 *      (linked to it);
 *   2. WRITE_FIXED 4096 bytes of pattern B at 4096 from fixed buffer 0, on fixed file 0;
 *   3. READ 8192 bytes at 0, READ_FIXED 4096 bytes at 4096 into fixed buffer 0 (+4096);
 *   4. NOP, and FUTEX_WAKE of a futex nobody waits on (an opcode the recorder keeps as its SQE).
 * The user_data of the k-th request is k (1..7).
 *
 * Prints one JSON object: {"pid":P,"ring_fd":R,"file_fd":F,"ops":[{"user_data":1,
 * "res":4096},...]} in completion order. Byte j of pattern A is (uint8_t)(j * 7 + 1), of B
 * (uint8_t)(j * 11 + 3). Exits 1 (with a message) when a read does not return what was written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ENTRIES 8
#define PG 4096

static int ring_fd;
static unsigned *sq_tail, *sq_mask, *sq_array, *sq_flags, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static unsigned sqpoll;
static unsigned tail;
static char ops[4096];
static size_t ops_len;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static struct io_uring_sqe *get_sqe(void)
{
	unsigned i = tail & *sq_mask;
	struct io_uring_sqe *s = &sqes[i];
	memset(s, 0, sizeof(*s));
	sq_array[i] = i;
	tail++;
	return s;
}

/* Publish the SQEs and wait for `n` completions. */
static void submit_and_wait(unsigned n)
{
	unsigned submitted = n, flags = IORING_ENTER_GETEVENTS;
	__atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
	if (sqpoll) {
		submitted = 0;
		if (__atomic_load_n(sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP)
			flags |= IORING_ENTER_SQ_WAKEUP;
	}
	unsigned seen = 0;
	while (seen < n) {
		if (syscall(__NR_io_uring_enter, ring_fd, submitted, n - seen, flags, NULL, 0) < 0)
			die("io_uring_enter");
		submitted = 0;
		unsigned h = *cq_head;
		while (h != __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
			struct io_uring_cqe *c = &cqes[h & *cq_mask];
			ops_len += snprintf(ops + ops_len, sizeof(ops) - ops_len,
					    "%s{\"user_data\":%llu,\"res\":%d}", ops_len ? "," : "",
					    (unsigned long long)c->user_data, c->res);
			h++;
			seen++;
		}
		__atomic_store_n(cq_head, h, __ATOMIC_RELEASE);
	}
}

static void rw(struct io_uring_sqe *s, int op, int fd, void *buf, unsigned len, unsigned long long off,
	       unsigned long long ud)
{
	s->opcode = op;
	s->fd = fd;
	s->addr = (unsigned long)buf;
	s->len = len;
	s->off = off;
	s->user_data = ud;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uring DIR [sqpoll]\n");
		return 2;
	}
	sqpoll = argc > 2 && !strcmp(argv[2], "sqpoll");
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	if (sqpoll) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;
	}
	ring_fd = syscall(__NR_io_uring_setup, ENTRIES, &p);
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
	char *cq = sq; /* IORING_FEAT_SINGLE_MMAP (every kernel since 5.4) */
	sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
	if (sqes == MAP_FAILED)
		die("mmap sqes");
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	sq_flags = (unsigned *)(sq + p.sq_off.flags);
	cq_head = (unsigned *)(cq + p.cq_off.head);
	cq_tail = (unsigned *)(cq + p.cq_off.tail);
	cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	tail = *sq_tail;

	char path[4096];
	snprintf(path, sizeof(path), "%s/u.dat", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open");
	static uint8_t a[PG], b[2 * PG] __attribute__((aligned(PG))), r[2 * PG];
	for (int j = 0; j < PG; j++) {
		a[j] = (uint8_t)(j * 7 + 1);
		b[j] = (uint8_t)(j * 11 + 3);
	}
	struct iovec iov = {.iov_base = b, .iov_len = sizeof(b)};
	if (syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_BUFFERS, &iov, 1) < 0)
		die("IORING_REGISTER_BUFFERS");
	if (syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_FILES, &fd, 1) < 0)
		die("IORING_REGISTER_FILES");

	/* SQPOLL rings take registered files only on older kernels; both work since 5.11. */
	struct io_uring_sqe *s = get_sqe();
	rw(s, IORING_OP_WRITE, fd, a, PG, 0, 1);
	s->flags = IOSQE_IO_LINK;
	s = get_sqe();
	s->opcode = IORING_OP_FSYNC;
	s->fd = fd;
	s->fsync_flags = IORING_FSYNC_DATASYNC;
	s->user_data = 2;
	submit_and_wait(2);

	s = get_sqe();
	rw(s, IORING_OP_WRITE_FIXED, 0, b, PG, PG, 3);
	s->flags = IOSQE_FIXED_FILE;
	s->buf_index = 0;
	submit_and_wait(1);

	s = get_sqe();
	rw(s, IORING_OP_READ, fd, r, 2 * PG, 0, 4);
	s = get_sqe();
	rw(s, IORING_OP_READ_FIXED, fd, b + PG, PG, PG, 5);
	s->buf_index = 0;
	submit_and_wait(2);
	if (memcmp(r, a, PG) || memcmp(r + PG, b, PG) || memcmp(b + PG, b, PG)) {
		fprintf(stderr, "uring: read back other bytes than written\n");
		return 1;
	}

	static uint32_t futex;
	s = get_sqe();
	s->opcode = IORING_OP_NOP;
	s->user_data = 6;
	s = get_sqe();
	s->opcode = 52; /* IORING_OP_FUTEX_WAKE (Linux 6.7; newer than Debian 12's headers) */
	s->fd = 2; /* FUTEX2_SIZE_U32 */
	s->addr = (unsigned long)&futex;
	s->off = 1; /* wake at most one */
	s->addr3 = 0xffffffff; /* FUTEX_BITSET_MATCH_ANY */
	s->user_data = 7;
	submit_and_wait(2);

	printf("{\"pid\":%d,\"ring_fd\":%d,\"file_fd\":%d,\"ops\":[%s]}\n", getpid(), ring_fd, fd, ops);
	return 0;
}
