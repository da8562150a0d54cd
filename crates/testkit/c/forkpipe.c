/* forkpipe: a parent and a child talking through a pipe, each writing a file, so the record
 * tests can check process following (fork, ppid) and data on both ends of a pipe.
 *
 *   forkpipe DIR [STATUS]        (STATUS: the parent's exit status on success, default 0)
 *
 * The parent creates a pipe and forks. The child closes the read end, writes MESSAGE_LINES
 * lines "forkpipe line NNNNN\n" (20 bytes each, 100,000 bytes in all: more than a pipe holds,
 * so the child blocks and the parent needs several reads) to the pipe in writes of at most
 * 8,000 bytes, closes it, writes CHILD_TEXT to DIR/child.txt and exits 0. The parent closes
 * the write end, reads the pipe to EOF, writes exactly what it read to DIR/parent.txt, waits
 * for the child and prints one JSON object on stdout:
 *   {"parent_pid":P,"child_pid":C,"pipe_read_fd":R,"pipe_write_fd":W,
 *    "pipe_bytes_written":100000,"pipe_bytes_read":100000,"pipe_reads":N,
 *    "child_file":"DIR/child.txt","child_file_bytes":B,
 *    "parent_file":"DIR/parent.txt","parent_file_bytes":100000,"child_status":0}
 * then exits STATUS (1 on any error, with the reason on stderr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MESSAGE_LINES 5000
#define LINE_BYTES 20
#define CHUNK 8000
#define CHILD_TEXT "written by the child of forkpipe\n"

static int die(const char *what) {
    fprintf(stderr, "forkpipe: %s: %s\n", what, strerror(errno));
    return 1;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int child(int wfd, const char *dir) {
    static char msg[MESSAGE_LINES * LINE_BYTES + 1];
    for (int i = 0; i < MESSAGE_LINES; i++)
        snprintf(msg + i * LINE_BYTES, LINE_BYTES + 1, "forkpipe line %05d\n", i);
    size_t total = (size_t)MESSAGE_LINES * LINE_BYTES;
    for (size_t off = 0; off < total; off += CHUNK) {
        size_t n = total - off < CHUNK ? total - off : CHUNK;
        if (write_all(wfd, msg + off, n) != 0)
            return die("child: write pipe");
    }
    if (close(wfd) != 0)
        return die("child: close pipe");
    char path[4096];
    snprintf(path, sizeof path, "%s/child.txt", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return die("child: open child.txt");
    if (write_all(fd, CHILD_TEXT, strlen(CHILD_TEXT)) != 0)
        return die("child: write child.txt");
    if (close(fd) != 0)
        return die("child: close child.txt");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s DIR [STATUS]\n", argv[0]);
        return 2;
    }
    int status_on_success = argc > 2 ? atoi(argv[2]) : 0;
    int p[2];
    if (pipe(p) != 0)
        return die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return die("fork");
    if (pid == 0) {
        close(p[0]);
        _exit(child(p[1], argv[1]));
    }
    close(p[1]);
    size_t cap = 1 << 20, got = 0;
    char *buf = malloc(cap);
    if (!buf)
        return die("malloc");
    long reads = 0;
    for (;;) {
        if (got == cap) {
            fprintf(stderr, "forkpipe: pipe sent more than %zu bytes\n", cap);
            return 1;
        }
        ssize_t n = read(p[0], buf + got, cap - got < 4096 ? cap - got : 4096);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return die("read pipe");
        }
        if (n == 0)
            break;
        reads++;
        got += (size_t)n;
    }
    close(p[0]);
    char path[4096];
    snprintf(path, sizeof path, "%s/parent.txt", argv[1]);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return die("open parent.txt");
    if (write_all(fd, buf, got) != 0)
        return die("write parent.txt");
    if (close(fd) != 0)
        return die("close parent.txt");
    int ws = 0;
    if (waitpid(pid, &ws, 0) != pid)
        return die("waitpid");
    int child_status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    printf("{\"parent_pid\":%d,\"child_pid\":%d,\"pipe_read_fd\":%d,\"pipe_write_fd\":%d,"
           "\"pipe_bytes_written\":%d,\"pipe_bytes_read\":%zu,\"pipe_reads\":%ld,"
           "\"child_file\":\"%s/child.txt\",\"child_file_bytes\":%zu,"
           "\"parent_file\":\"%s\",\"parent_file_bytes\":%zu,\"child_status\":%d}\n",
           (int)getpid(), (int)pid, p[0], p[1], MESSAGE_LINES * LINE_BYTES, got, reads, argv[1],
           strlen(CHILD_TEXT), path, got, child_status);
    if (fflush(stdout) != 0)
        return 1;
    if (child_status != 0) {
        fprintf(stderr, "forkpipe: child exited with %d\n", child_status);
        return 1;
    }
    return status_on_success;
}
