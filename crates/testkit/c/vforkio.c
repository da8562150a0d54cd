/* vforkio: a vfork child that does file I/O before it exits, as posix_spawn-like code and
 * shells do between vfork and exec.
 *
 *   vforkio DIR
 *
 * The child of vfork(2) creates DIR/v.dat, writes 64 lines to it and _exits; the parent is
 * suspended in vfork until then, so its vfork call returns after all of the child's calls.
 * Then the parent appends one line and reads the file back. A recorder must still put the
 * parent's vfork before the child's calls in the trace (replay needs the child's process
 * to exist, with the parent's descriptors, before its first call).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], line[64], buf[8192];
	int status = 0;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/v.dat", argv[1]);
	pid_t pid = vfork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			_exit(3);
		for (int i = 0; i < 64; i++) {
			int n = snprintf(line, sizeof(line), "child line %d\n", i);

			if (write(fd, line, n) != n)
				_exit(4);
		}
		close(fd);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 5;
	int fd = open(path, O_RDWR | O_APPEND);
	if (fd < 0)
		return 6;
	const char *last = "parent line\n";
	if (write(fd, last, strlen(last)) != (ssize_t)strlen(last))
		return 7;
	if (pread(fd, buf, sizeof(buf), 0) <= 0)
		return 8;
	close(fd);
	printf("{\"child\":%d}\n", pid);
	return 0;
}
