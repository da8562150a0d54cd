/* mmapread: reads a file through a mapping of a descriptor opened read-only.
 *
 *   mmapread FILE shared|private
 *
 * Opens FILE O_RDONLY, maps all of it PROT_READ with MAP_SHARED (the kernel then clears
 * VM_SHARED and keeps VM_MAYSHARE: the file is not open for writing) or MAP_PRIVATE, reads one
 * byte of every page in order (a fault each, or none where the fault-around mapped the page),
 * munmaps it and closes the descriptor.
 *
 * Prints one JSON object: {"pid":P,"fd":F,"pages":N,"sum":S}, S the sum of the bytes read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG 4096

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "shared") && strcmp(argv[2], "private"))) {
		fprintf(stderr, "usage: mmapread FILE shared|private\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		perror(argv[1]);
		return 1;
	}
	int flags = strcmp(argv[2], "shared") ? MAP_PRIVATE : MAP_SHARED;
	volatile unsigned char *m = mmap(NULL, st.st_size, PROT_READ, flags, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	long pages = (st.st_size + PG - 1) / PG;
	unsigned long sum = 0;
	for (long p = 0; p < pages; p++)
		sum += m[p * PG];
	if (munmap((void *)m, st.st_size) || close(fd)) {
		perror("munmap");
		return 1;
	}
	printf("{\"pid\":%d,\"fd\":%d,\"pages\":%ld,\"sum\":%lu}\n", getpid(), fd, pages, sum);
	return 0;
}
