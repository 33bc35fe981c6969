// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_pool: a thread-pool stand-in (many threads of one process, all in
 * the root task group) for the root-group load_avg skip.
 *
 * C CPU-bound threads compute chunks of work without pause; S wake/sleep
 * threads compute one chunk and then sleep, as pool workers waiting for their next job do.
 * Every enqueue, dequeue and tick on a root cfs_rq runs update_load_avg(),
 * which, without the skip, may also add to root_task_group.load_avg.
 *
 * While they run, the main thread samples the root group's tg_load_avg
 * from /sys/kernel/debug/sched/debug (the "cfs_rq[N]:/" blocks) and counts
 * how often it changed between samples. Prints one key=value line
 * (throughput in chunks per second, sample count, changes, range) and one
 * "series" line with every sample.
 */
#include "sfp_bench.h"
#include <pthread.h>

#define MAX_SAMPLES	4096
#define MAX_THREADS	1024

static volatile int stop;
static unsigned long chunk_loops = 200000;
static double sleep_seconds = 0.002;

struct worker {
	pthread_t thread;
	int sleeps;
	unsigned long long chunks;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!stop) {
		sfp_work(chunk_loops);
		w->chunks++;
		if (w->sleeps)
			sfp_sleep(sleep_seconds);
	}
	return NULL;
}

/* The root group's tg_load_avg: every root block prints the same value. */
static long root_tg_load_avg(struct sfp_cfs_rq *rqs, int max)
{
	int i, n = sfp_read_cfs_rqs(rqs, max);

	for (i = 0; i < n; i++)
		if (!strcmp(rqs[i].path, "/"))
			return rqs[i].tg_load_avg;
	return -1;
}

static void usage(const char *prog)
{
	printf("Usage: %s [-d SECONDS] [-c CPU_BOUND] [-s SLEEPERS] [-w LOOPS] [-i INTERVAL_MS]\n\n"
	       "Run CPU_BOUND threads that compute chunks of LOOPS rounds without\n"
	       "pause and SLEEPERS threads that compute a chunk and sleep 2 ms, all\n"
	       "in the root task group, and sample the root group's tg_load_avg\n"
	       "every INTERVAL_MS. Defaults: -d 5, -c (CPUs), -s (2 x CPUs),\n"
	       "-w 200000, -i 250.\n", prog);
}

int main(int argc, char **argv)
{
	int cpus[SFP_MAX_CPUS], ncpu, ncpubound = -1, nsleepers = -1, i, opt;
	unsigned long long busy = 0, sleepy = 0;
	double dur = 5, interval_ms = 250, t0, elapsed;
	long samples[MAX_SAMPLES], lo = -1, hi = -1;
	int nsamples = 0, changes = 0, nthreads;
	struct sfp_cfs_rq *rqs;
	struct worker *w;

	while ((opt = getopt(argc, argv, "d:c:s:w:i:h")) != -1) {
		switch (opt) {
		case 'd':
			dur = sfp_arg("sfp_pool", opt, optarg);
			break;
		case 'c':
			ncpubound = sfp_arg("sfp_pool", opt, optarg);
			break;
		case 's':
			nsleepers = sfp_arg("sfp_pool", opt, optarg);
			break;
		case 'w':
			chunk_loops = sfp_arg("sfp_pool", opt, optarg);
			break;
		case 'i':
			interval_ms = sfp_arg("sfp_pool", opt, optarg);
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	ncpu = sfp_allowed_cpus(cpus, SFP_MAX_CPUS);
	if (ncpubound < 0)
		ncpubound = ncpu;
	if (nsleepers < 0)
		nsleepers = 2 * ncpu;
	nthreads = ncpubound + nsleepers;
	if (dur <= 0 || interval_ms <= 0 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "sfp_pool: bad arguments: -d %g -c %d -s %d -i %g (need -d > 0, -i > 0, 1..%d threads)\n",
			dur, ncpubound, nsleepers, interval_ms, MAX_THREADS);
		return 2;
	}
	w = calloc(nthreads, sizeof(*w));
	rqs = calloc(4 * SFP_MAX_CPUS, sizeof(*rqs));
	if (!w || !rqs)
		return 1;
	if (root_tg_load_avg(rqs, 4 * SFP_MAX_CPUS) < 0) {
		fprintf(stderr, "sfp_pool: no root cfs_rq block with tg_load_avg in %s\n",
			SCHED_DEBUG_FILE);
		return 1;
	}
	t0 = sfp_now();
	for (i = 0; i < nthreads; i++) {
		w[i].sleeps = i >= ncpubound;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			fprintf(stderr, "sfp_pool: pthread_create failed\n");
			return 1;
		}
	}
	while (sfp_now() - t0 < dur && nsamples < MAX_SAMPLES) {
		sfp_sleep(interval_ms / 1e3);
		samples[nsamples] = root_tg_load_avg(rqs, 4 * SFP_MAX_CPUS);
		if (nsamples && samples[nsamples] != samples[nsamples - 1])
			changes++;
		if (lo < 0 || samples[nsamples] < lo)
			lo = samples[nsamples];
		if (samples[nsamples] > hi)
			hi = samples[nsamples];
		nsamples++;
	}
	stop = 1;
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].sleeps)
			sleepy += w[i].chunks;
		else
			busy += w[i].chunks;
	}
	elapsed = sfp_now() - t0;
	printf("cpus=%d cpu_bound=%d sleepers=%d seconds=%.3f chunks_per_s=%.1f cpu_bound_chunks=%llu sleeper_chunks=%llu samples=%d tg_load_avg_changes=%d tg_load_avg_min=%ld tg_load_avg_max=%ld\n",
	       ncpu, ncpubound, nsleepers, elapsed, (busy + sleepy) / elapsed,
	       busy, sleepy, nsamples, changes, lo, hi);
	printf("series interval_ms=%.0f values=", interval_ms);
	for (i = 0; i < nsamples; i++)
		printf("%s%ld", i ? "," : "", samples[i]);
	printf("\n");
	return 0;
}
