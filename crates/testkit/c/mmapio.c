/* mmapio: file I/O through shared mappings, for the mmappread / mmappwrite page records.
 *
 *   mmapio DIR
 *
 * 1. Writes DIR/r.dat (32 pages of distinct bytes) with write(2), evicts it from the page cache
 *    (fsync + POSIX_FADV_DONTNEED), maps it MAP_SHARED read-only and reads every page in order.
 * 2. Creates DIR/w.dat (16 pages, ftruncate), maps it MAP_SHARED read-write, fills pages
 *    0, 2, 4, 6, 8, 10 (bytes distinct per page), msync(MS_SYNC)s the mapping, fills pages 1 and 3
 *    and munmaps it.
 * 3. Maps DIR/w.dat again and fills page 15.
 * 4. Writes and reads 4 pages of shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS, which the
 *    kernel backs with an internal shmem file) and munmaps them, fills 2 pages of another such
 *    mapping, then exits without munmap (exit_group). No file I/O: no page record may name them.
 *
 * Prints one JSON object: {"pid":P,"read_fd":F,"read_pages":32,"write_fd":G,
 * "written_pages":[0,2,4,6,8,10,1,3],"msync_pages":[0,2,4,6,8,10],"exit_fd":H,"exit_pages":[15]}.
 * Byte j of page p of r.dat is (uint8_t)(p * 13 + j); of page p of w.dat, (uint8_t)(p * 29 + j * 3).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void fill(unsigned char *p, int page)
{
	for (int j = 0; j < PG; j++)
		p[j] = (unsigned char)(page * 29 + j * 3);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mmapio DIR\n");
		return 2;
	}
	char rpath[4096], wpath[4096];
	snprintf(rpath, sizeof rpath, "%s/r.dat", argv[1]);
	snprintf(wpath, sizeof wpath, "%s/w.dat", argv[1]);

	/* 1. reads */
	static unsigned char buf[32 * PG];
	for (int p = 0; p < 32; p++)
		for (int j = 0; j < PG; j++)
			buf[p * PG + j] = (unsigned char)(p * 13 + j);
	int rfd = open(rpath, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (rfd < 0 || write(rfd, buf, sizeof buf) != (ssize_t)sizeof buf || fsync(rfd))
		die("r.dat");
	posix_fadvise(rfd, 0, 0, POSIX_FADV_DONTNEED);
	volatile unsigned char *r = mmap(NULL, sizeof buf, PROT_READ, MAP_SHARED, rfd, 0);
	if (r == MAP_FAILED)
		die("mmap r.dat");
	unsigned sum = 0;
	for (int p = 0; p < 32; p++)
		sum += r[p * PG];
	if (munmap((void *)r, sizeof buf))
		die("munmap r.dat");

	/* 2. writes, msync, more writes, munmap */
	int wfd = open(wpath, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (wfd < 0 || ftruncate(wfd, 16 * PG))
		die("w.dat");
	unsigned char *w = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, wfd, 0);
	if (w == MAP_FAILED)
		die("mmap w.dat");
	for (int p = 0; p <= 10; p += 2)
		fill(w + p * PG, p);
	if (msync(w, 16 * PG, MS_SYNC))
		die("msync");
	fill(w + 1 * PG, 1);
	fill(w + 3 * PG, 3);
	if (munmap(w, 16 * PG))
		die("munmap w.dat");

	/* 3. a write left mapped at exit */
	int efd = open(wpath, O_RDWR);
	unsigned char *e = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, efd, 0);
	if (efd < 0 || e == MAP_FAILED)
		die("mmap w.dat again");
	fill(e + 15 * PG, 15);

	/* 4. shared memory that is no file */
	unsigned char *a = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned char *b = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		die("mmap anonymous");
	for (int p = 0; p < 4; p++)
		fill(a + p * PG, p);
	for (int p = 0; p < 4; p++)
		sum += a[p * PG + 1];
	if (munmap(a, 4 * PG))
		die("munmap anonymous");
	fill(b, 0);
	fill(b + PG, 1);
	printf("{\"pid\":%d,\"read_fd\":%d,\"read_pages\":32,\"sum\":%u,\"write_fd\":%d,"
	       "\"written_pages\":[0,2,4,6,8,10,1,3],\"msync_pages\":[0,2,4,6,8,10],"
	       "\"exit_fd\":%d,\"exit_pages\":[15]}\n",
	       getpid(), rfd, sum, wfd, efd);
	fflush(stdout);
	_exit(0);
}
