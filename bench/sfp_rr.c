// SPDX-License-Identifier: GPL-2.0
/*
 * sfp_rr: a request/response benchmark in the spirit of netperf TCP_RR,
 * over AF_UNIX stream sockets, for the root-domain overload indicator.
 *
 * P client/server pairs. Server i is pinned to CPU i and client i to CPU
 * P + i, so the servers keep the first half of the CPUs busy and no
 * runqueue is meant to hold two tasks. A client sends a request and
 * blocks; the server computes a fixed amount of work and replies. Each
 * client CPU goes idle once per transaction, which is where the scheduler
 * runs (or, with the overload indicator, skips) a newly-idle balance.
 *
 * With -b N it is the mixed load: N more threads, pinned nowhere, wake
 * together at the start of every period of -P ms and compute for -O ms,
 * then sleep to the next period. During a burst some runqueues hold two
 * or more runnable tasks, so a CPU that goes idle then has something
 * useful to pull; between bursts the load is the light one above. Their
 * work is counted in chunks, so a kernel that pulls less shows it as less
 * burst work done as well as fewer tasks gained.
 *
 * Prints one line of key=value pairs: transactions, transactions per
 * second, latency percentiles, the servers' mean compute time per
 * request, the burst work, and the /proc/schedstat deltas over the run
 * (idle entries and newly-idle balance attempts, summed over CPUs).
 * Times are CLOCK_MONOTONIC in the machine the program runs on.
 */
#include "sfp_bench.h"
#include <pthread.h>
#include <sys/socket.h>

struct pair {
	int sv[2];
	int server_cpu;
	int client_cpu;
	unsigned long work;
	pthread_t server;
	pthread_t client;
	double *lat;		/* latencies, seconds */
	size_t nlat;
	size_t cap;
	double work_seconds;	/* the server's time in sfp_work() */
	unsigned long long requests;
	int err;
};

struct burst {
	pthread_t thread;
	unsigned long long chunks;
};

static volatile int stop;
static double burst_period = 0.1, burst_on = 0.03, start_time;
static unsigned long burst_loops = 20000;

static int full_io(int fd, void *buf, size_t len, int write_side)
{
	char *p = buf;

	while (len) {
		ssize_t n = write_side ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static void *server_main(void *arg)
{
	struct pair *p = arg;
	unsigned long long req;

	if (sfp_pin(0, p->server_cpu)) {
		p->err = errno;
		return NULL;
	}
	while (!full_io(p->sv[1], &req, sizeof(req), 0)) {
		double t;

		if (req == ~0ULL)
			break;
		t = sfp_now();
		sfp_work(p->work);
		p->work_seconds += sfp_now() - t;
		p->requests++;
		if (full_io(p->sv[1], &req, sizeof(req), 1))
			break;
	}
	return NULL;
}

static void *client_main(void *arg)
{
	struct pair *p = arg;
	unsigned long long req = 0;
	double t0;

	if (sfp_pin(0, p->client_cpu)) {
		p->err = errno;
		return NULL;
	}
	while (!stop) {
		t0 = sfp_now();
		if (full_io(p->sv[0], &req, sizeof(req), 1) ||
		    full_io(p->sv[0], &req, sizeof(req), 0)) {
			p->err = EPIPE;
			break;
		}
		if (p->nlat == p->cap) {
			double *n;

			p->cap = p->cap ? 2 * p->cap : 4096;
			n = realloc(p->lat, p->cap * sizeof(*n));
			if (!n) {
				p->err = ENOMEM;
				break;
			}
			p->lat = n;
		}
		p->lat[p->nlat++] = sfp_now() - t0;
		req++;
	}
	req = ~0ULL;
	full_io(p->sv[0], &req, sizeof(req), 1);
	return NULL;
}

/*
 * A burst thread: from the start of each period, compute chunks of
 * burst_loops rounds until burst_on seconds into it, then sleep to the
 * next period. All of them wake at the same moments.
 */
static void *burst_main(void *arg)
{
	struct burst *b = arg;
	double t, next;

	while (!stop) {
		t = sfp_now() - start_time;
		next = (long)(t / burst_period) * burst_period;
		while (!stop && sfp_now() - start_time < next + burst_on) {
			sfp_work(burst_loops);
			b->chunks++;
		}
		t = sfp_now() - start_time;
		next = ((long)(t / burst_period) + 1) * burst_period;
		if (!stop && next > t)
			sfp_sleep(next - t);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double q)
{
	size_t i = (size_t)(q * (n - 1) + 0.5);

	return n ? v[i] : 0;
}

static void usage(const char *prog)
{
	printf("Usage: %s [-d SECONDS] [-w LOOPS] [-p PAIRS] [-b BURSTERS [-P MS] [-O MS]]\n\n"
	       "Request/response over AF_UNIX socket pairs: PAIRS servers pinned\n"
	       "to CPUs 0..PAIRS-1 run LOOPS rounds of work per request for clients\n"
	       "pinned to CPUs PAIRS..2*PAIRS-1. Defaults: -d 5, -w 1000000,\n"
	       "-p (CPUs / 2).\n"
	       "-b adds BURSTERS unpinned threads that all compute for -O ms at the\n"
	       "start of every -P ms period (defaults 30 and 100) and sleep in\n"
	       "between: bursts of real overload between light phases.\n"
	       "Prints one key=value line with throughput, latency percentiles,\n"
	       "burst work and the /proc/schedstat deltas (needs\n"
	       "kernel.sched_schedstats=1).\n",
	       prog);
}

int main(int argc, char **argv)
{
	struct sfp_schedstat *before, *after;
	int cpus[SFP_MAX_CPUS], ncpu, npairs = 0, nburst = 0, i, opt;
	unsigned long long burst_chunks = 0, requests = 0;
	double work_seconds = 0;
	struct burst *bursts;
	unsigned long long goidle = 0, newidle = 0;
	double dur = 5, t0, elapsed;
	unsigned long work = 1000000;
	struct pair *pairs;
	double *all;
	size_t n = 0;

	while ((opt = getopt(argc, argv, "d:w:p:b:P:O:h")) != -1) {
		switch (opt) {
		case 'd':
			dur = sfp_arg("sfp_rr", opt, optarg);
			break;
		case 'w':
			work = sfp_arg("sfp_rr", opt, optarg);
			break;
		case 'p':
			npairs = sfp_arg("sfp_rr", opt, optarg);
			break;
		case 'b':
			nburst = sfp_arg("sfp_rr", opt, optarg);
			break;
		case 'P':
			burst_period = sfp_arg("sfp_rr", opt, optarg) / 1e3;
			break;
		case 'O':
			burst_on = sfp_arg("sfp_rr", opt, optarg) / 1e3;
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
	if (!npairs)
		npairs = ncpu / 2;
	if (dur <= 0 || npairs < 1 || 2 * npairs > ncpu || nburst < 0 || nburst > 1024 ||
	    burst_period <= 0 || burst_on <= 0 || burst_on > burst_period) {
		fprintf(stderr, "sfp_rr: bad arguments: -d %g -p %d -b %d -P %g -O %g with %d CPUs (need -d > 0, 1 <= -p <= CPUs / 2, 0 <= -b <= 1024, 0 < -O <= -P)\n",
			dur, npairs, nburst, burst_period * 1e3, burst_on * 1e3, ncpu);
		return 2;
	}
	pairs = calloc(npairs, sizeof(*pairs));
	bursts = calloc(nburst ? nburst : 1, sizeof(*bursts));
	before = malloc(sizeof(*before));
	after = malloc(sizeof(*after));
	if (!pairs || !bursts || !before || !after)
		return 1;
	for (i = 0; i < npairs; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i].sv)) {
			perror("sfp_rr: socketpair");
			return 1;
		}
		pairs[i].server_cpu = cpus[i];
		pairs[i].client_cpu = cpus[npairs + i];
		pairs[i].work = work;
	}
	if (sfp_read_schedstat(before)) {
		fprintf(stderr, "sfp_rr: cannot parse %s\n", SCHEDSTAT_FILE);
		return 1;
	}
	t0 = sfp_now();
	start_time = t0;
	for (i = 0; i < nburst; i++) {
		if (pthread_create(&bursts[i].thread, NULL, burst_main, &bursts[i])) {
			fprintf(stderr, "sfp_rr: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < npairs; i++) {
		if (pthread_create(&pairs[i].server, NULL, server_main, &pairs[i]) ||
		    pthread_create(&pairs[i].client, NULL, client_main, &pairs[i])) {
			fprintf(stderr, "sfp_rr: pthread_create failed\n");
			return 1;
		}
	}
	sfp_sleep(dur);
	stop = 1;
	for (i = 0; i < npairs; i++) {
		pthread_join(pairs[i].client, NULL);
		pthread_join(pairs[i].server, NULL);
	}
	for (i = 0; i < nburst; i++) {
		pthread_join(bursts[i].thread, NULL);
		burst_chunks += bursts[i].chunks;
	}
	elapsed = sfp_now() - t0;
	if (sfp_read_schedstat(after)) {
		fprintf(stderr, "sfp_rr: cannot parse %s\n", SCHEDSTAT_FILE);
		return 1;
	}
	for (i = 0; i < SFP_MAX_CPUS; i++) {
		goidle += after->goidle[i] - before->goidle[i];
		newidle += after->newidle_lb[i] - before->newidle_lb[i];
	}
	for (i = 0; i < npairs; i++) {
		if (pairs[i].err) {
			fprintf(stderr, "sfp_rr: pair %d: %s\n", i, strerror(pairs[i].err));
			return 1;
		}
		n += pairs[i].nlat;
		requests += pairs[i].requests;
		work_seconds += pairs[i].work_seconds;
	}
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return 1;
	n = 0;
	for (i = 0; i < npairs; i++) {
		memcpy(all + n, pairs[i].lat, pairs[i].nlat * sizeof(*all));
		n += pairs[i].nlat;
	}
	qsort(all, n, sizeof(*all), cmp_double);
	printf("cpus=%d pairs=%d work_loops=%lu seconds=%.3f transactions=%zu tps=%.1f work_us=%.1f bursters=%d burst_period_ms=%.0f burst_on_ms=%.0f burst_chunks=%llu burst_chunks_per_s=%.1f lat_p50_us=%.0f lat_p90_us=%.0f lat_p99_us=%.0f idle_entries=%llu newidle_lb=%llu newidle_per_idle=%.4f",
	       ncpu, npairs, work, elapsed, n, n / elapsed,
	       requests ? work_seconds / requests * 1e6 : 0, nburst, burst_period * 1e3,
	       burst_on * 1e3, burst_chunks, burst_chunks / elapsed,
	       pct(all, n, 0.50) * 1e6, pct(all, n, 0.90) * 1e6,
	       pct(all, n, 0.99) * 1e6, goidle, newidle,
	       goidle ? (double)newidle / goidle : 0);
	/* Per CPU, "idle entries/newly-idle attempts": servers first. */
	printf(" per_cpu=");
	for (i = 0; i < ncpu; i++)
		printf("%s%llu/%llu", i ? "," : "",
		       after->goidle[cpus[i]] - before->goidle[cpus[i]],
		       after->newidle_lb[cpus[i]] - before->newidle_lb[cpus[i]]);
	printf("\n");
	return 0;
}
