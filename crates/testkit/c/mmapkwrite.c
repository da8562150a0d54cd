/* mmapkwrite: the kernel writes through a shared mapping: read(2) into mapped memory.
 *
 *   mmapkwrite DIR
 *
 * Writes DIR/src.dat (2 pages of 'S') with write(2), creates DIR/dst.dat (4 pages, ftruncate),
 * maps it MAP_SHARED read-write and, without touching the mapping itself, reads src.dat into
 * pages 1 and 2 of it with one read(2): the kernel's copy to user memory takes the page
 * faults (in kernel mode). Then munmaps it.
 *
 * Prints one JSON object: {"pid":P,"read":8192,"pages":[1,2]}.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mmapkwrite DIR\n");
		return 2;
	}
	char src[4096], dst[4096], buf[2 * PG];
	snprintf(src, sizeof src, "%s/src.dat", argv[1]);
	snprintf(dst, sizeof dst, "%s/dst.dat", argv[1]);
	memset(buf, 'S', sizeof buf);
	int s = open(src, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (s < 0 || write(s, buf, sizeof buf) != (ssize_t)sizeof buf || lseek(s, 0, SEEK_SET)) {
		perror(src);
		return 1;
	}
	int d = open(dst, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (d < 0 || ftruncate(d, 4 * PG)) {
		perror(dst);
		return 1;
	}
	unsigned char *m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ssize_t n = read(s, m + PG, 2 * PG);
	if (n != 2 * PG || munmap(m, 4 * PG)) {
		perror("read");
		return 1;
	}
	printf("{\"pid\":%d,\"read\":%zd,\"pages\":[1,2]}\n", getpid(), n);
	return 0;
}
