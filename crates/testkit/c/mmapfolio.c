/* mmapfolio: writes through shared mappings to pages of large folios, which one fault maps
 * together (Linux 6.18 maps a whole folio at a fault), so that most writes take no fault.
 *
 *   mmapfolio DIR
 *
 * 1. Writes DIR/a.dat (256 pages of 'a') with write(2): the page cache then holds it in large
 *    folios. Maps it MAP_SHARED read-write at a 2 MiB boundary (a folio is mapped whole only
 *    within one page table) and fills pages 0, 1, 2, ... 63, 100, 101, 255 in that order (byte
 *    j of page p: (uint8_t)(p * 7 + j)), then munmaps it.
 * 2. Creates DIR/b.dat, 32 MiB by ftruncate, maps 4 KiB of it, fills page 0, grows the mapping
 *    to 32 MiB with mremap and fills one page per MiB (pages 1, 257, 513, ...), then munmaps it
 *    (what the mremap_grow reproducer does).
 *
 * Prints one JSON object: {"pid":P,"a_fd":F,"a_pages":[...],"a_faults":N,"b_fd":G,
 * "b_pages":[...],"b_faults":M}: the pages filled, and the page faults the fills took
 * (getrusage): fewer faults than pages means that faults mapped neighbours in large folios.
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
#include <sys/resource.h>
#include <unistd.h>

#define PG 4096
#define A_PAGES 256
#define B_BYTES (32L << 20)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long faults(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return r.ru_minflt + r.ru_majflt;
}

static void fill(unsigned char *p, long page)
{
	for (int j = 0; j < PG; j++)
		p[j] = (unsigned char)(page * 7 + j);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mmapfolio DIR\n");
		return 2;
	}
	char apath[4096], bpath[4096];
	snprintf(apath, sizeof apath, "%s/a.dat", argv[1]);
	snprintf(bpath, sizeof bpath, "%s/b.dat", argv[1]);

	/* 1. a file written with write(2), then through a mapping */
	static unsigned char buf[A_PAGES * PG];
	memset(buf, 'a', sizeof buf);
	int afd = open(apath, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (afd < 0 || write(afd, buf, sizeof buf) != (ssize_t)sizeof buf)
		die("a.dat");
	/* At a 2 MiB boundary: a fault maps a folio whole only within one page table. */
	unsigned char *hole = mmap(NULL, 4L << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap");
	unsigned char *at = (unsigned char *)(((uintptr_t)hole + (2L << 20) - 1) & ~((2UL << 20) - 1));
	munmap(hole, 4L << 20);
	unsigned char *a =
		mmap(at, sizeof buf, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, afd, 0);
	if (a == MAP_FAILED)
		die("mmap a.dat");
	long apages[A_PAGES];
	int na = 0;
	for (long p = 0; p < 64; p++)
		apages[na++] = p;
	apages[na++] = 100;
	apages[na++] = 101;
	apages[na++] = 255;
	long f0 = faults();
	for (int i = 0; i < na; i++)
		fill(a + apages[i] * PG, apages[i]);
	long afaults = faults() - f0;
	if (munmap(a, sizeof buf))
		die("munmap a.dat");

	/* 2. a sparse file, its mapping grown by mremap */
	int bfd = open(bpath, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (bfd < 0 || ftruncate(bfd, B_BYTES))
		die("b.dat");
	unsigned char *b = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	if (b == MAP_FAILED)
		die("mmap b.dat");
	fill(b, 0);
	unsigned char *g = mremap(b, PG, B_BYTES, MREMAP_MAYMOVE);
	if (g == MAP_FAILED)
		die("mremap b.dat");
	long bpages[64];
	int nb = 0;
	bpages[nb++] = 0;
	f0 = faults();
	for (long off = PG; off < B_BYTES; off += 1 << 20) {
		fill(g + off, off / PG);
		bpages[nb++] = off / PG;
	}
	long bfaults = faults() - f0;
	if (munmap(g, B_BYTES))
		die("munmap b.dat");

	printf("{\"pid\":%d,\"a_fd\":%d,\"a_pages\":[", getpid(), afd);
	for (int i = 0; i < na; i++)
		printf("%s%ld", i ? "," : "", apages[i]);
	printf("],\"a_faults\":%ld,\"b_fd\":%d,\"b_pages\":[", afaults, bfd);
	for (int i = 0; i < nb; i++)
		printf("%s%ld", i ? "," : "", bpages[i]);
	printf("],\"b_faults\":%ld}\n", bfaults);
	return 0;
}
