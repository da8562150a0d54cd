/* Two threads that compute (no system calls) until each has used 0.6 s of CPU time, or 20 s
 * have passed. Prints one JSON line: how many CPUs each thread's affinity allowed at the end
 * and the wall time. A recorder that binds the process to one CPU and never lets go leaves
 * cpus at 1 (and the wall time at least the sum of the two). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cpus[2];

static void *spin(void *arg)
{
	int i = *(int *)arg;
	double w0 = now(CLOCK_MONOTONIC);
	volatile unsigned long x = 0;
	while (now(CLOCK_THREAD_CPUTIME_ID) < 0.6 && now(CLOCK_MONOTONIC) - w0 < 20)
		for (int k = 0; k < 100000; k++)
			x += k;
	cpu_set_t s;
	sched_getaffinity(0, sizeof s, &s);
	cpus[i] = CPU_COUNT(&s);
	return 0;
}

int main(void)
{
	pthread_t t[2];
	int ids[2] = {0, 1};
	double w0 = now(CLOCK_MONOTONIC);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], 0, spin, &ids[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], 0);
	printf("{\"cpus\":[%d,%d],\"wall\":%.3f}\n", cpus[0], cpus[1], now(CLOCK_MONOTONIC) - w0);
	return 0;
}
