/* stress: threads issuing large writes and small reads as fast as they can, counting them, so a
 * recording can be checked call for call and byte for byte (the eBPF backend's loss policies).
 *
 *   stress DIR [THREADS [SECONDS [WRITE_SIZE [READ_SIZE]]]]   (defaults: 8, 2, 65536, 4096)
 *
 * Thread i creates DIR/stress-<i>.dat (O_CREAT|O_TRUNC|O_RDWR) and, until SECONDS have passed,
 * alternates one pwrite64 of WRITE_SIZE bytes at slot (n % 64) * WRITE_SIZE and one pread64 of
 * READ_SIZE bytes at offset (n % 64) * WRITE_SIZE (the start of what it just wrote). Byte j of
 * write n of thread i is (uint8_t)(j ^ (i * 31 + n * 7)), so every call's data is distinct. The
 * time is read with clock_gettime (vDSO: no system call), so the file calls are the only calls
 * in the loop.
 *
 * On success it prints one JSON object on stdout:
 *   {"pid":P,"write_size":65536,"read_size":4096,"threads":[{"index":0,"tid":T,"fd":F,
 *    "pwrites":N,"pwrite_bytes":B,"preads":M,"pread_bytes":C}, ...]}
 * (bytes = the sum of the calls' return values) and exits 0; on any error it prints the reason
 * on stderr and exits 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct job {
	int index;
	const char *dir;
	double seconds;
	long wsize, rsize;
	pid_t tid;
	int fd;
	long pwrites, preads;
	long long wbytes, rbytes;
	char error[4200];
};

static pthread_barrier_t start;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct job *j = arg;
	char path[4096];
	j->tid = gettid();
	snprintf(path, sizeof path, "%s/stress-%d.dat", j->dir, j->index);
	/* Whole words (WRITE_SIZE is rounded up to 8 for the buffer only). */
	uint64_t *w = malloc(((size_t)j->wsize + 7) & ~(size_t)7);
	unsigned char *r = malloc((size_t)j->rsize);
	j->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	pthread_barrier_wait(&start);
	if (!w || !r || j->fd < 0) {
		snprintf(j->error, sizeof j->error, "setup of %s: %s", path, strerror(errno));
		return NULL;
	}
	double end = now() + j->seconds;
	for (long n = 0; now() < end; n++) {
		uint64_t c = (uint8_t)(j->index * 31 + n * 7) * 0x0101010101010101ull;
		for (long k = 0; k < (j->wsize + 7) / 8; k++)
			w[k] = (0x0706050403020100ull + (uint64_t)(k * 8 % 256) * 0x0101010101010101ull) ^ c;
		off_t off = (off_t)(n % 64) * j->wsize;
		ssize_t got = pwrite(j->fd, w, (size_t)j->wsize, off);
		if (got < 0) {
			snprintf(j->error, sizeof j->error, "pwrite: %s", strerror(errno));
			return NULL;
		}
		j->pwrites++;
		j->wbytes += got;
		got = pread(j->fd, r, (size_t)j->rsize, off);
		if (got < 0) {
			snprintf(j->error, sizeof j->error, "pread: %s", strerror(errno));
			return NULL;
		}
		j->preads++;
		j->rbytes += got;
	}
	free(w);
	free(r);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: stress DIR [THREADS [SECONDS [WRITE_SIZE [READ_SIZE]]]]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 8;
	double seconds = argc > 3 ? atof(argv[3]) : 2;
	long wsize = argc > 4 ? atol(argv[4]) : 65536, rsize = argc > 5 ? atol(argv[5]) : 4096;
	if (threads < 1 || threads > 256 || seconds <= 0 || wsize < 1 || rsize < 1 || rsize > wsize) {
		fprintf(stderr, "stress: bad arguments\n");
		return 2;
	}
	struct job *jobs = calloc((size_t)threads, sizeof *jobs);
	pthread_t *t = calloc((size_t)threads, sizeof *t);
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){.index = i, .dir = argv[1], .seconds = seconds, .wsize = wsize, .rsize = rsize, .fd = -1};
		pthread_create(&t[i], NULL, run, &jobs[i]);
	}
	int bad = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].error[0]) {
			fprintf(stderr, "stress: thread %d: %s\n", i, jobs[i].error);
			bad = 1;
		}
	}
	if (bad)
		return 1;
	printf("{\"pid\":%d,\"write_size\":%ld,\"read_size\":%ld,\"threads\":[", getpid(), wsize, rsize);
	for (int i = 0; i < threads; i++)
		printf("%s{\"index\":%d,\"tid\":%d,\"fd\":%d,\"pwrites\":%ld,\"pwrite_bytes\":%lld,"
		       "\"preads\":%ld,\"pread_bytes\":%lld}",
		       i ? "," : "", i, jobs[i].tid, jobs[i].fd, jobs[i].pwrites, jobs[i].wbytes,
		       jobs[i].preads, jobs[i].rbytes);
	printf("]}\n");
	return 0;
}
