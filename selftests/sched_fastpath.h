/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the sched_fastpath kselftests: sysfs/procfs knobs that
 * are saved and restored, CPU hogs pinned to one CPU, and the parsers for
 * /sys/kernel/debug/sched/debug and /proc/schedstat.
 */
#ifndef SCHED_FASTPATH_H
#define SCHED_FASTPATH_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCHED_DEBUG_FILE	"/sys/kernel/debug/sched/debug"
#define SCHED_FEATURES_FILE	"/sys/kernel/debug/sched/features"
#define SCHED_VERBOSE_FILE	"/sys/kernel/debug/sched/verbose"
#define SCHED_DOMAINS_DIR	"/sys/kernel/debug/sched/domains"	/* if verbose */
#define SCHEDSTAT_FILE		"/proc/schedstat"
#define CGROUP_ROOT		"/sys/fs/cgroup"
#define SFP_MAX_CPUS		256
#define SFP_MAX_DOMAINS		16	/* sched domain levels per CPU */

/*
 * A FIXTURE_SETUP() neither ASSERTs nor SKIPs once it has changed
 * something outside the test: the harness does not run the teardown of a
 * setup that did not return. It records what went wrong instead, and the
 * test reports it.
 */

static inline int sfp_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static inline int sfp_write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * The undo log. What a test changes outside itself (a knob, a CPU taken
 * offline, a cgroup it made) is entered here before it is changed, in
 * memory shared with a guard process; the teardown undoes each entry,
 * newest first, and strikes it out. When the runner kills a test on its
 * timeout, neither the test nor its teardown runs any more: the guard,
 * which sees the test's end as the end of a pipe, undoes what is left.
 */
#define SFP_UNDO_MAX	16

struct sfp_undo_entry {
	char path[128];
	char val[256];		/* written to @path; "": rmdir(@path) */
	bool pending;
};

struct sfp_undo_log {
	int n;
	struct sfp_undo_entry e[SFP_UNDO_MAX];
};

static struct sfp_undo_log *sfp_undo;

/* Undo @u now, if it is still pending. */
static inline void sfp_undo_now(struct sfp_undo_entry *u)
{
	int tries;

	if (!u || !u->pending)
		return;
	u->pending = false;
	if (u->val[0]) {
		sfp_write_file(u->path, u->val);
		return;
	}
	/* A cgroup's killed tasks may take a moment to leave it. */
	for (tries = 0; rmdir(u->path) && errno == EBUSY && tries < 100; tries++)
		usleep(10000);
}

/* Strike @u out: the change it undoes was not made, or is undone. */
static inline void sfp_undo_drop(struct sfp_undo_entry *u)
{
	if (u)
		u->pending = false;
}

/*
 * Start the guard: the first thing a FIXTURE_SETUP() does. The guard
 * leaves the test's session (the harness kills the test's process group
 * on a timeout), holds none of the test's files open (the runner waits
 * for the end of the test's output) and waits on a pipe whose write end
 * only the test and its children hold. 0, or a negative errno.
 */
static inline int sfp_undo_start(void)
{
	int fds[2], fd, i;
	pid_t pid;
	char c;

	sfp_undo = mmap(NULL, sizeof(*sfp_undo), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sfp_undo == MAP_FAILED) {
		sfp_undo = NULL;
		return -errno;
	}
	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(fds[0]);
		return 0;
	}
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	for (fd = 3; fd < 1024; fd++)
		if (fd != fds[0])
			close(fd);
	while (read(fds[0], &c, 1) < 0 && errno == EINTR)
		;
	for (i = sfp_undo->n - 1; i >= 0; i--)
		sfp_undo_now(&sfp_undo->e[i]);
	_exit(0);
}

/*
 * Enter a change before making it: writing @val to @path undoes it (""
 * removes the directory @path). NULL when the log was not started or is
 * full; the change must then not be made.
 */
static inline struct sfp_undo_entry *sfp_undo_add(const char *path, const char *val)
{
	struct sfp_undo_entry *u;

	if (!sfp_undo || sfp_undo->n == SFP_UNDO_MAX)
		return NULL;
	u = &sfp_undo->e[sfp_undo->n++];
	snprintf(u->path, sizeof(u->path), "%s", path);
	snprintf(u->val, sizeof(u->val), "%s", val);
	u->pending = true;
	return u;
}

/* A knob whose earlier value is in the undo log while a test changes it. */
struct sfp_knob {
	struct sfp_undo_entry *undo;
};

/*
 * Write @val to @path, entering @undo (NULL: the value read now) first.
 * 0, or a negative errno.
 */
static inline int sfp_knob_set_undo(struct sfp_knob *k, const char *path, const char *val,
				    const char *undo)
{
	char saved[256];
	int ret;

	if (!undo) {
		ret = sfp_read_file(path, saved, sizeof(saved));
		if (ret)
			return ret;
		undo = saved;
	}
	k->undo = sfp_undo_add(path, undo);
	if (!k->undo)
		return -ENOSPC;
	ret = sfp_write_file(path, val);
	if (ret) {
		sfp_undo_drop(k->undo);
		k->undo = NULL;
	}
	return ret;
}

static inline int sfp_knob_set(struct sfp_knob *k, const char *path, const char *val)
{
	return sfp_knob_set_undo(k, path, val, NULL);
}

static inline void sfp_knob_restore(struct sfp_knob *k)
{
	sfp_undo_now(k->undo);
	k->undo = NULL;
}

/*
 * Is @word one of the space-separated words of @list (a cgroup's
 * cgroup.controllers, say)? "cpu" is not "cpuset".
 */
static inline bool sfp_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* The CPUs this process may run on, in order. Returns how many. */
static inline int sfp_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int c, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static inline int sfp_pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static inline double sfp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void sfp_spin(double seconds)
{
	double end = sfp_now() + seconds;

	while (sfp_now() < end)
		;
}

static inline void sfp_sleep(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Fork a child pinned to @cpu that runs @fn(@arg) until killed. When
 * @cgroup is set, the child is moved there first (a cgroup v2 directory).
 */
static inline pid_t sfp_fork_pinned(int cpu, const char *cgroup,
				    void (*fn)(double), double arg)
{
	char path[512], pid[32];
	pid_t child = fork();

	if (child)
		return child;
	if (cgroup) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (sfp_write_file(path, pid))
			_exit(2);
	}
	if (sfp_pin(0, cpu))
		_exit(3);
	for (;;)
		fn(arg);
}

static inline void sfp_hog(double unused)
{
	sfp_spin(1.0);
}

static inline void sfp_kill(pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	for (i = 0; i < n; i++)
		pids[i] = 0;
}

/* Task @pid's session, from /proc/@pid/stat; -1 if it cannot be read. */
static inline pid_t sfp_task_session(pid_t pid)
{
	char path[64], buf[1024], *p;
	int sid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (sfp_read_file(path, buf, sizeof(buf)))
		return -1;
	/* After the command's ')': state ppid pgrp session. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %d", &sid) != 1)
		return -1;
	return sid;
}

/*
 * The newly-idle balance cost (max_newidle_lb_cost, ns) of each of one
 * CPU's sched domains: SCHED_DEBUG's debugfs files, kept open. Opening
 * and closing them every few milliseconds disturbs the CPUs under test
 * (more idle entries), writing to an open one does not. The values read
 * at open are written back at close.
 */
struct sfp_cost_files {
	int fd[SFP_MAX_DOMAINS];
	char saved[SFP_MAX_DOMAINS][32];
	int n;
};

/* Open @cpu's files. Returns how many (0: no such files). */
static inline int sfp_cost_open(struct sfp_cost_files *f, int cpu)
{
	char path[128];
	ssize_t len;
	int fd;

	for (f->n = 0; f->n < SFP_MAX_DOMAINS; f->n++) {
		snprintf(path, sizeof(path),
			 SCHED_DOMAINS_DIR "/cpu%d/domain%d/max_newidle_lb_cost", cpu, f->n);
		fd = open(path, O_RDWR);
		if (fd < 0)
			break;
		len = pread(fd, f->saved[f->n], sizeof(f->saved[0]) - 1, 0);
		f->saved[f->n][len > 0 ? len : 0] = '\0';
		f->fd[f->n] = fd;
	}
	return f->n;
}

/* Put back the costs read at open, and close. */
static inline void sfp_cost_close(struct sfp_cost_files *f)
{
	ssize_t ret = 0;

	while (f->n > 0) {
		f->n--;
		if (f->saved[f->n][0])
			ret |= pwrite(f->fd[f->n], f->saved[f->n], strlen(f->saved[f->n]), 0);
		close(f->fd[f->n]);
	}
	(void)ret;	/* a teardown has nothing more to do on failure */
}

/* Forget the recorded costs. Returns how many writes failed. */
static inline int sfp_cost_reset(struct sfp_cost_files *f)
{
	int i, failed = 0;

	for (i = 0; i < f->n; i++)
		failed += write(f->fd[i], "0", 1) != 1;
	return failed;
}

/* One cfs_rq block of /sys/kernel/debug/sched/debug. */
struct sfp_cfs_rq {
	int cpu;
	char path[256];
	long load_avg;
	long tg_load_avg_contrib;
	long tg_load_avg;
};

/*
 * Parse every "cfs_rq[N]:/path" block. Field names are matched exactly:
 * "tg_load_avg" is a prefix of "tg_load_avg_contrib". Returns the number
 * of blocks, or -errno.
 */
static inline int sfp_read_cfs_rqs(struct sfp_cfs_rq *rqs, int max)
{
	char line[512], name[128];
	struct sfp_cfs_rq *cur = NULL;
	long val;
	int n = 0;
	FILE *f = fopen(SCHED_DEBUG_FILE, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "cfs_rq[", 7)) {
			cur = NULL;
			if (n == max)
				continue;
			cur = &rqs[n++];
			memset(cur, 0, sizeof(*cur));
			cur->load_avg = -1;
			cur->tg_load_avg = -1;
			cur->tg_load_avg_contrib = -1;
			if (sscanf(line, "cfs_rq[%d]:%255s", &cur->cpu, cur->path) != 2)
				n--, cur = NULL;
			continue;
		}
		if (!cur)
			continue;
		if (sscanf(line, " .%127s : %ld", name, &val) != 2) {
			if (strncmp(line, "  .", 3))
				cur = NULL;	/* end of the block */
			continue;
		}
		if (!strcmp(name, "load_avg"))
			cur->load_avg = val;
		else if (!strcmp(name, "tg_load_avg_contrib"))
			cur->tg_load_avg_contrib = val;
		else if (!strcmp(name, "tg_load_avg"))
			cur->tg_load_avg = val;
	}
	fclose(f);
	return n;
}

/*
 * Read CPU @cpu's nr_running and current task in SCHED_DEBUG_FILE every
 * 10 ms, for up to @seconds, until it is read idle (curr->pid 0) with
 * nr_running 0. The two are read without the runqueue lock, so a task
 * just woken can be read beside the idle task, but not at every read.
 * Returns 1 if it was; 0 if it was read idle at least SFP_IDLE_READS
 * times, only with other counts, or read once with a count below 0
 * (printed negative, or above the kernel's limit of tasks where it is
 * printed unsigned) (*@last: the last such count); 2 if it was read idle
 * fewer times; -errno. *@reads and *@idle_reads: how often it
 * was read, and read idle.
 */
#define SFP_IDLE_READS	3
#define SFP_PID_MAX_LIMIT	(4 * 1024 * 1024)	/* the kernel's PID_MAX_LIMIT */

static inline int sfp_cpu_count_back_to_zero(int cpu, double seconds, long *last,
					     int *reads, int *idle_reads)
{
	double end = sfp_now() + seconds;
	char line[512], name[128];
	long val, nr;
	FILE *f;
	int c;

	*reads = 0;
	*idle_reads = 0;

	do {
		f = fopen(SCHED_DEBUG_FILE, "r");
		if (!f)
			return -errno;
		c = -1;
		nr = -1;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "cpu#", 4)) {
				c = atoi(line + 4);
				continue;
			}
			if (c != cpu || sscanf(line, " .%127s : %ld", name, &val) != 2)
				continue;
			if (!strcmp(name, "nr_running")) {
				nr = val;
				if (nr < 0 || nr > SFP_PID_MAX_LIMIT) {
					fclose(f);
					*last = nr;
					return 0;
				}
			} else if (!strcmp(name, "curr->pid")) {
				(*reads)++;
				*idle_reads += !val;
				if (!val && !nr) {
					fclose(f);
					return 1;
				}
				if (!val)
					*last = nr;
				break;
			}
		}
		fclose(f);
		sfp_sleep(0.01);
	} while (sfp_now() < end);
	return *idle_reads >= SFP_IDLE_READS ? 0 : 2;
}

/*
 * Per-CPU counters from /proc/schedstat that the newidle test needs. A
 * newly-idle balance walks the CPU's domains from the lowest level up,
 * each level counting its own lb_count: the lowest level's count is the
 * number of balance attempts, the sum over levels the number of levels
 * visited.
 */
struct sfp_schedstat {
	int version;
	unsigned long long goidle[SFP_MAX_CPUS];	/* idle entries */
	unsigned long long run_delay;	/* ns tasks waited to run, all CPUs */
	unsigned long long run_delay_cpu[SFP_MAX_CPUS];	/* the same, per CPU */
	unsigned long long newidle_lb[SFP_MAX_CPUS];	/* domain0: attempts */
	unsigned long long newidle_lb_levels[SFP_MAX_CPUS];	/* sum over domains */
	int nlevels[SFP_MAX_CPUS];
};

/*
 * Versions 15 and 16 print, after "domainN <mask>", 3 x 8 load-balance
 * counters per idle type; version 15 orders the types idle, busy, newly
 * idle and 16 busy, idle, newly idle: either way lb_count of the newly
 * idle type is field 2 * 8. Version 17 adds the domain name before the
 * mask and has 11 counters per type, so it is field 2 * 11 after the mask.
 * On every version sched_goidle is the 4th number on the "cpuN" line and
 * run_delay (ns that tasks waited on the runqueue) the 8th.
 */
static inline int sfp_read_schedstat(struct sfp_schedstat *s)
{
	char line[4096], *tok, *save;
	int cpu = -1, i, per_type, skip;
	FILE *f = fopen(SCHEDSTAT_FILE, "r");

	if (!f)
		return -errno;
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "version %d", &s->version) == 1)
			continue;
		if (!strncmp(line, "cpu", 3)) {
			unsigned long long v[8];

			if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
				   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
			    cpu < 0 || cpu >= SFP_MAX_CPUS) {
				cpu = -1;
				continue;
			}
			s->goidle[cpu] = v[3];
			s->run_delay += v[7];
			s->run_delay_cpu[cpu] = v[7];
			continue;
		}
		if (strncmp(line, "domain", 6) || cpu < 0)
			continue;
		switch (s->version) {
		case 15:
		case 16:
			per_type = 8;
			skip = 2;	/* "domainN", mask */
			break;
		case 17:
			per_type = 11;
			skip = 3;	/* "domainN", name, mask */
			break;
		default:
			fclose(f);
			return -ENOTSUP;
		}
		tok = strtok_r(line, "\n\t ", &save);
		for (i = 1; tok && i < skip + 2 * per_type + 1; i++)
			tok = strtok_r(NULL, "\n\t ", &save);
		if (!tok) {
			fclose(f);
			return -EINVAL;
		}
		if (!s->nlevels[cpu]++)
			s->newidle_lb[cpu] = strtoull(tok, NULL, 10);
		s->newidle_lb_levels[cpu] += strtoull(tok, NULL, 10);
	}
	fclose(f);
	return s->version ? 0 : -EINVAL;
}

#endif /* SCHED_FASTPATH_H */
