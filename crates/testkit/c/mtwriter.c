/* mtwriter: a multi-threaded writer whose output the record tests can check byte for byte.
 *
 *   mtwriter DIR [THREADS [BLOCKS [BLOCK_SIZE]]]      (defaults: 4 threads, 16 blocks, 4096)
 *
 * Thread i (0-based) creates DIR/mt-<i>.dat (O_CREAT|O_TRUNC|O_WRONLY), then writes BLOCKS
 * blocks of BLOCK_SIZE bytes with one pwrite64 each, in DESCENDING block order (block b at
 * offset b * BLOCK_SIZE), then fsyncs and closes the file. Byte j of block b of thread i is
 *
 *     (uint8_t)((i + 1) * 37 + b * 11 + j)
 *
 * so every thread, every block and every offset has its own content. All threads start their
 * writes together (a barrier) so their calls interleave.
 *
 * On success it prints one JSON object on stdout:
 *   {"pid":P,"block_size":4096,"threads":[{"index":0,"tid":T,"file":"DIR/mt-0.dat",
 *    "fd":F,"blocks":16,"bytes":65536,"pwrites":16,"fsyncs":1}, ...]}
 * and exits 0; on any error it prints the reason on stderr and exits 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

struct job {
    int index;
    const char *dir;
    long blocks;
    long block_size;
    pid_t tid;
    int fd;
    long pwrites;
    long long bytes;
    int fsyncs;
    char file[4096];
    char error[4400];
};

static pthread_barrier_t start;

static void *run(void *arg) {
    struct job *j = arg;
    j->tid = gettid();
    snprintf(j->file, sizeof j->file, "%s/mt-%d.dat", j->dir, j->index);
    unsigned char *buf = malloc((size_t)j->block_size);
    if (!buf) {
        snprintf(j->error, sizeof j->error, "malloc: %s", strerror(errno));
        pthread_barrier_wait(&start);
        return NULL;
    }
    j->fd = open(j->file, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    pthread_barrier_wait(&start);
    if (j->fd < 0) {
        snprintf(j->error, sizeof j->error, "open %s: %s", j->file, strerror(errno));
        free(buf);
        return NULL;
    }
    for (long b = j->blocks - 1; b >= 0; b--) {
        for (long k = 0; k < j->block_size; k++)
            buf[k] = (unsigned char)((j->index + 1) * 37 + b * 11 + k);
        off_t off = (off_t)b * j->block_size;
        ssize_t n = pwrite(j->fd, buf, (size_t)j->block_size, off);
        if (n != j->block_size) {
            snprintf(j->error, sizeof j->error, "pwrite block %ld: %s", b,
                     n < 0 ? strerror(errno) : "short write");
            free(buf);
            return NULL;
        }
        j->pwrites++;
        j->bytes += n;
    }
    if (fsync(j->fd) != 0) {
        snprintf(j->error, sizeof j->error, "fsync: %s", strerror(errno));
        free(buf);
        return NULL;
    }
    j->fsyncs++;
    if (close(j->fd) != 0)
        snprintf(j->error, sizeof j->error, "close: %s", strerror(errno));
    free(buf);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: %s DIR [THREADS [BLOCKS [BLOCK_SIZE]]]\n", argv[0]);
        return 2;
    }
    long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
    long blocks = argc > 3 ? strtol(argv[3], NULL, 10) : 16;
    long block_size = argc > 4 ? strtol(argv[4], NULL, 10) : 4096;
    if (threads < 1 || threads > 256 || blocks < 1 || block_size < 1) {
        fprintf(stderr, "mtwriter: bad arguments\n");
        return 2;
    }
    struct job *jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (!jobs || !ids) {
        fprintf(stderr, "mtwriter: out of memory\n");
        return 1;
    }
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (long i = 0; i < threads; i++) {
        jobs[i].index = (int)i;
        jobs[i].dir = argv[1];
        jobs[i].blocks = blocks;
        jobs[i].block_size = block_size;
        jobs[i].fd = -1;
        int e = pthread_create(&ids[i], NULL, run, &jobs[i]);
        if (e != 0) {
            fprintf(stderr, "mtwriter: pthread_create: %s\n", strerror(e));
            return 1;
        }
    }
    int failed = 0;
    for (long i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        if (jobs[i].error[0]) {
            fprintf(stderr, "mtwriter: thread %ld: %s\n", i, jobs[i].error);
            failed = 1;
        }
    }
    if (failed)
        return 1;
    printf("{\"pid\":%d,\"block_size\":%ld,\"threads\":[", (int)getpid(), block_size);
    for (long i = 0; i < threads; i++) {
        struct job *j = &jobs[i];
        printf("%s{\"index\":%d,\"tid\":%d,\"file\":\"%s\",\"fd\":%d,\"blocks\":%ld,"
               "\"bytes\":%lld,\"pwrites\":%ld,\"fsyncs\":%d}",
               i ? "," : "", j->index, (int)j->tid, j->file, j->fd, j->blocks, j->bytes,
               j->pwrites, j->fsyncs);
    }
    printf("]}\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
