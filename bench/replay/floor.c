/* The floor under any faithful replay of a trace of buffered writes to one file: the trace's
 * pwrite and fadvise calls, issued back to back by a C loop, with nothing else (no other calls,
 * no verification, no scheduling, the data from one preloaded buffer).
 *
 *   floor FILE OPS [distinct]
 *                      OPS: one call per line, read into memory before the clock starts:
 *                        w OFFSET LENGTH            pwrite(fd, buf, LENGTH, OFFSET)
 *                        a OFFSET LENGTH ADVICE     posix_fadvise(fd, OFFSET, LENGTH, ADVICE)
 *
 * With `distinct`, each write takes its bytes from a buffer of its own (one arena as large as
 * all the writes together, filled before the clock starts), as a replay writes each call's
 * recorded bytes: the kernel then copies from memory no longer in the CPU's caches, not from
 * one hot buffer.
 *
 * Prints "calls=N seconds=S" (monotonic clock, first call to last return). Any call that does
 * not do what it did when recorded (a short write, an error) ends it with status 1.
 * Used by bench/replay/run.sh (fio rows: "floor"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct op {
    char kind;
    int advice;
    long long off, len;
};

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "distinct") == 0)) {
        fprintf(stderr, "usage: floor FILE OPS [distinct]\n");
        return 2;
    }
    int distinct = argc == 4;
    FILE *in = fopen(argv[2], "r");
    if (!in) {
        perror(argv[2]);
        return 2;
    }
    size_t n = 0, cap = 1 << 16;
    struct op *ops = malloc(cap * sizeof *ops);
    long long maxlen = 0, total = 0;
    char kind;
    while (ops && fscanf(in, " %c", &kind) == 1) {
        if (n == cap) {
            cap *= 2;
            ops = realloc(ops, cap * sizeof *ops);
            if (!ops)
                break;
        }
        struct op *o = &ops[n];
        o->kind = kind;
        o->advice = 0;
        int got = kind == 'a' ? fscanf(in, "%lld %lld %d", &o->off, &o->len, &o->advice)
                              : fscanf(in, "%lld %lld", &o->off, &o->len);
        if ((kind != 'w' && kind != 'a') || got != (kind == 'a' ? 3 : 2)) {
            fprintf(stderr, "floor: %s: bad line %zu\n", argv[2], n + 1);
            return 2;
        }
        if (kind == 'w' && o->len > maxlen)
            maxlen = o->len;
        if (kind == 'w')
            total += o->len;
        n++;
    }
    if (!ops) {
        fprintf(stderr, "floor: out of memory\n");
        return 2;
    }
    fclose(in);
    long long size = distinct ? total : maxlen;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        fprintf(stderr, "floor: cannot allocate %lld bytes\n", size);
        return 2;
    }
    for (long long i = 0; i < size; i++)
        buf[i] = (char)(i * 131 + 7 + i / 4096);
    long long at = 0;
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        perror(argv[1]);
        return 2;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i++) {
        struct op *o = &ops[i];
        if (o->kind == 'w') {
            ssize_t r = pwrite(fd, buf + at, o->len, o->off);
            if (distinct)
                at += o->len;
            if (r != o->len) {
                fprintf(stderr, "floor: pwrite of %lld at %lld: %s\n", o->len, o->off,
                        r < 0 ? strerror(errno) : "short write");
                return 1;
            }
        } else {
            int e = posix_fadvise(fd, o->off, o->len, o->advice);
            if (e) {
                fprintf(stderr, "floor: fadvise: %s\n", strerror(e));
                return 1;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("calls=%zu seconds=%.3f\n", n, (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
