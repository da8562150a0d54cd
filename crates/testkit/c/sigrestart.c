/* Blocking reads interrupted by signals. Case 1: SIGALRM with SA_RESTART interrupts a pipe
 * read, the kernel restarts it, and it later returns the 4 bytes "late". Case 2: without
 * SA_RESTART the read fails with EINTR. Prints one JSON line with what it saw. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_alarm(int sig) { (void)sig; }

static void arm(int restart) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 100000}}; /* 100 ms */
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void) {
    int p[2];
    if (pipe(p)) return 1;
    pid_t c = fork();
    if (c == 0) {
        usleep(400000); /* after the alarm */
        if (write(p[1], "late", 4) != 4) _exit(1);
        _exit(0);
    }
    char buf[16];
    arm(1);
    ssize_t n1 = read(p[0], buf, sizeof buf);   /* interrupted, restarted, then "late" */
    int p2[2];
    if (pipe(p2)) return 1;
    arm(0);
    ssize_t n2 = read(p2[0], buf + 8, 8);       /* interrupted: EINTR */
    int e2 = errno;
    waitpid(c, NULL, 0);
    printf("{\"read_fd\":%d,\"restarted_ret\":%zd,\"eintr_fd\":%d,\"eintr_ret\":%zd,\"eintr_errno\":%d}\n",
           p[0], n1, p2[0], n2, e2);
    return n1 == 4 && n2 == -1 && e2 == EINTR ? 0 : 2;
}
