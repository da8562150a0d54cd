/* memfdname: memfd_create with a name in a page nothing has touched yet.
 *
 *   memfdname
 *
 * The name is a string alone in a read-only array of 64 KiB, aligned to 64 KiB (the kernel's
 * fault-around window), so its page is not mapped until something reads it. The first call passes a flag the kernel refuses
 * (EINVAL) before it reads the name: the page is still not mapped when the call returns. The
 * second call (MFD_CLOEXEC) succeeds; the program writes 5 bytes to the memfd and closes it.
 *
 * Prints one JSON object: {"name":"ra-untouched-memfd","bad_flags":256,"fd":F}.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((aligned(65536))) static const char name[65536] = "ra-untouched-memfd";

int main(void)
{
	long bad = syscall(SYS_memfd_create, name, 0x100);
	long fd = syscall(SYS_memfd_create, name, MFD_CLOEXEC);
	if (bad != -1 || fd < 0) {
		perror("memfd_create");
		return 1;
	}
	if (write((int)fd, "hello", 5) != 5 || close((int)fd)) {
		perror("write");
		return 1;
	}
	printf("{\"name\":\"%s\",\"bad_flags\":256,\"fd\":%ld}\n", name, fd);
	return 0;
}
