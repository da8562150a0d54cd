/* 32-bit arguments with garbage in the upper half of their registers, as a caller that does
 * not clear them passes them (raw syscall(2) with 64-bit values). The kernel reads only the
 * low half, so every call succeeds; a recorder must record what the kernel read.
 * Prints one JSON line: {"lock_ok":..., "dents":..., "end":..., "mode":...}. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HI(x) ((uint64_t)0xdead5a5a00000000ULL | (uint64_t)(uint32_t)(x))

int main(void)
{
	char buf[4096];
	/* openat: flags (int) and mode (umode_t, 16 bits) with high garbage. */
	long fd = syscall(SYS_openat, HI(AT_FDCWD), "data", HI(O_CREAT | O_RDWR | O_TRUNC),
			  (uint64_t)0x5a5a0000ULL | 0640);
	if (fd < 0) {
		perror("openat");
		return 1;
	}
	if (write((int)fd, "0123456789", 10) != 10)
		return 1;
	/* fcntl: F_SETLK with a struct flock. */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2, .l_len = 3};
	long lock = syscall(SYS_fcntl, HI(fd), HI(F_SETLK), &fl);
	/* lseek: whence (unsigned int). */
	long end = syscall(SYS_lseek, HI(fd), 0L, HI(SEEK_END));
	/* getdents64: count (unsigned int). */
	long dfd = syscall(SYS_openat, HI(AT_FDCWD), ".", HI(O_RDONLY | O_DIRECTORY), 0);
	long dents = syscall(SYS_getdents64, HI(dfd), buf, HI(sizeof buf));
	struct stat st;
	fstat((int)fd, &st);
	close((int)dfd);
	close((int)fd);
	printf("{\"lock_ok\":%d,\"dents\":%ld,\"end\":%ld,\"mode\":%d}\n", lock == 0, dents, end,
	       (int)(st.st_mode & 07777));
	return lock == 0 && dents > 0 && end == 10 ? 0 : 1;
}
