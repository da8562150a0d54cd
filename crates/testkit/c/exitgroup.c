/* Four threads block in read() on a pipe nobody writes; the main thread calls exit_group(7)
 * while they wait. The recorder must end (not hang) and keep every call. */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static int p[2];

static void *reader(void *arg) {
    (void)arg;
    char b[8];
    if (read(p[0], b, sizeof b) < 0) return NULL;
    return NULL;
}

int main(void) {
    if (pipe(p)) return 1;
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, reader, NULL);
    usleep(300000);
    printf("{\"pipe_read_fd\":%d}\n", p[0]);
    fflush(stdout);
    syscall(SYS_exit_group, 7);
    return 0;
}
