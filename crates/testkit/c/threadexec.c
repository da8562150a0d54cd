/* A non-leader thread calls execve: the kernel kills the other threads and the exec'ing thread
 * takes over the process id. Prints its pid and the thread's tid before exec. */

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *run(void *arg) {
    (void)arg;
    printf("{\"pid\":%d,\"exec_tid\":%ld}\n", getpid(), (long)syscall(SYS_gettid));
    fflush(stdout);
    char *argv[] = {"true", NULL};
    char *envp[] = {NULL};
    execve("/bin/true", argv, envp);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, run, NULL);
    for (;;) pause(); /* killed by the exec */
}
