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
 *
 * With -g NAME the process first moves itself into the cgroup v2 group
 * /sys/fs/cgroup/NAME (which must exist, with the cpu controller), so all
 * its threads run in a child task group, and it samples that group's
 * tg_load_avg (the "cfs_rq[N]:/NAME" blocks) as well: the root-group skip
 * must leave a child group's load_avg updates alone.
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

/*
 * A group's tg_load_avg, read from the first of its per-CPU blocks (they
 * all print the same value): @path "/" is the root group.
 */
static long group_tg_load_avg(struct sfp_cfs_rq *rqs, int max, const char *path)
{
	int i, n = sfp_read_cfs_rqs(rqs, max);

	for (i = 0; i < n; i++)
		if (!strcmp(rqs[i].path, path))
			return rqs[i].tg_load_avg;
	return -1;
}

/* Changes between successive samples and the range of a sample series. */
struct series {
	long v[MAX_SAMPLES];
	int n, changes;
	long lo, hi;
};

static void series_add(struct series *s, long v)
{
	if (s->n == MAX_SAMPLES)
		return;
	if (s->n && v != s->v[s->n - 1])
		s->changes++;
	if (!s->n || v < s->lo)
		s->lo = v;
	if (!s->n || v > s->hi)
		s->hi = v;
	s->v[s->n++] = v;
}

static void usage(const char *prog)
{
	printf("Usage: %s [-d SECONDS] [-c CPU_BOUND] [-s SLEEPERS] [-w LOOPS] [-i INTERVAL_MS] [-g GROUP]\n\n"
	       "Run CPU_BOUND threads that compute chunks of LOOPS rounds without\n"
	       "pause and SLEEPERS threads that compute a chunk and sleep 2 ms, all\n"
	       "in the root task group, and sample the root group's tg_load_avg\n"
	       "every INTERVAL_MS. Defaults: -d 5, -c (CPUs), -s (2 x CPUs),\n"
	       "-w 200000, -i 250.\n"
	       "-g GROUP: run in the cgroup /sys/fs/cgroup/GROUP and sample its\n"
	       "tg_load_avg too (group_* keys).\n", prog);
}

int main(int argc, char **argv)
{
	int cpus[SFP_MAX_CPUS], ncpu, ncpubound = -1, nsleepers = -1, i, opt;
	unsigned long long busy = 0, sleepy = 0;
	double dur = 5, interval_ms = 250, t0, elapsed;
	static struct series root, group;
	char gpath[160] = "", procs[256];
	const char *gname = NULL;
	struct sfp_cfs_rq *rqs;
	struct worker *w;
	int nthreads, ret;

	while ((opt = getopt(argc, argv, "d:c:s:w:i:g:h")) != -1) {
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
		case 'g':
			gname = optarg;
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
	if (gname) {
		if (!*gname || strchr(gname, '/') || strlen(gname) > 100) {
			fprintf(stderr, "sfp_pool: -g wants a group name under %s, not '%s'\n",
				CGROUP_ROOT, gname);
			return 2;
		}
		snprintf(procs, sizeof(procs), "%s/%s/cgroup.procs", CGROUP_ROOT, gname);
		ret = sfp_write_file(procs, "0");
		if (ret) {
			fprintf(stderr, "sfp_pool: cannot move into %s: %s\n", procs, strerror(-ret));
			return 1;
		}
		snprintf(gpath, sizeof(gpath), "/%s", gname);
		if (group_tg_load_avg(rqs, 4 * SFP_MAX_CPUS, gpath) < 0) {
			fprintf(stderr, "sfp_pool: no cfs_rq block of %s with tg_load_avg in %s\n",
				gpath, SCHED_DEBUG_FILE);
			return 1;
		}
	}
	if (group_tg_load_avg(rqs, 4 * SFP_MAX_CPUS, "/") < 0) {
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
	while (sfp_now() - t0 < dur && root.n < MAX_SAMPLES) {
		sfp_sleep(interval_ms / 1e3);
		series_add(&root, group_tg_load_avg(rqs, 4 * SFP_MAX_CPUS, "/"));
		if (gname)
			series_add(&group, group_tg_load_avg(rqs, 4 * SFP_MAX_CPUS, gpath));
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
	printf("cpus=%d cpu_bound=%d sleepers=%d seconds=%.3f chunks_per_s=%.1f cpu_bound_chunks=%llu sleeper_chunks=%llu samples=%d tg_load_avg_changes=%d tg_load_avg_min=%ld tg_load_avg_max=%ld",
	       ncpu, ncpubound, nsleepers, elapsed, (busy + sleepy) / elapsed,
	       busy, sleepy, root.n, root.changes, root.lo, root.hi);
	if (gname)
		printf(" group=%s group_tg_load_avg_changes=%d group_tg_load_avg_min=%ld group_tg_load_avg_max=%ld",
		       gpath, group.changes, group.lo, group.hi);
	printf("\nseries interval_ms=%.0f values=", interval_ms);
	for (i = 0; i < root.n; i++)
		printf("%s%ld", i ? "," : "", root.v[i]);
	printf("\n");
	return 0;
}
