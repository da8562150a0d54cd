/* mmapsync: writes through a shared mapping, msync, and writes the same pages again.
 *
 *   mmapsync FILE async|sync
 *
 * Creates FILE (4 pages, ftruncate), maps it MAP_SHARED read-write, fills pages 0 and 1 with
 * 'a', msyncs the mapping (MS_ASYNC or MS_SYNC), fills them with 'b' and munmaps it. MS_ASYNC
 * leaves the pages dirty and writable (no fault for the second fill); so does MS_SYNC on
 * tmpfs, which writes nothing back. On a file system that writes back, MS_SYNC write-protects
 * them (the second fill faults).
 *
 * Prints one JSON object: {"pid":P,"fd":F,"pages":[0,1]}.
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
	if (argc != 3 || (strcmp(argv[2], "async") && strcmp(argv[2], "sync"))) {
		fprintf(stderr, "usage: mmapsync FILE async|sync\n");
		return 2;
	}
	int fd = open(argv[1], O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || ftruncate(fd, 4 * PG)) {
		perror(argv[1]);
		return 1;
	}
	unsigned char *m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(m, 'a', 2 * PG);
	if (msync(m, 4 * PG, strcmp(argv[2], "sync") ? MS_ASYNC : MS_SYNC)) {
		perror("msync");
		return 1;
	}
	memset(m, 'b', 2 * PG);
	if (munmap(m, 4 * PG)) {
		perror("munmap");
		return 1;
	}
	printf("{\"pid\":%d,\"fd\":%d,\"pages\":[0,1]}\n", getpid(), fd);
	return 0;
}
