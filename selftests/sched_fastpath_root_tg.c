// SPDX-License-Identifier: GPL-2.0
/*
 * update_tg_load_avg() skips root_task_group: with CPU load in the root
 * task group, every root cfs_rq in /sys/kernel/debug/sched/debug keeps
 * tg_load_avg_contrib and tg_load_avg at 0 while its load_avg shows the
 * load. Positive control: the same load in a child cgroup with the cpu
 * controller makes that group's tg_load_avg non-zero, so the observable
 * works and the root group's zeros mean something.
 *
 * CPU hotplug: with a busy task of the child group on every CPU, taking
 * the last CPU offline takes that CPU's contribution out of the child
 * group's tg_load_avg (since v6.8 clear_tg_load_avg() does, before that
 * the update as its task migrates away), and putting it back online
 * brings a contribution back; the root group's stay 0 throughout; the
 * same for a group nested under a first-level one. The
 * check is that the group's tg_load_avg matches the sum of the online
 * CPUs' tg_load_avg_contrib within 10%: a contribution left behind by the
 * offline CPU is a quarter of the total on 4 CPUs. One read of
 * sched/debug is not a snapshot (each CPU's block is printed at its own
 * moment, and a vCPU that the host did not run propagates late), so each
 * step reads again, up to SETTLE_TRIES times, until the figures agree: a
 * contribution left behind never goes away, so it fails every read. A
 * task the host kept from running (its vCPU waiting) may not have joined
 * its group and CPU yet: where the figures agree but for that CPU's
 * contribution, and its task, alive, has not pinned itself there, the
 * case is skipped as a precondition not met.
 *
 * Bandwidth control and autogroups, on in distribution kernels: while a
 * child group is throttled every period (cpu.max) the root's blocks stay
 * 0, and the group's tg_load_avg is not 0 once its quota is lifted; with
 * a session in an autogroup of its own, the root's blocks stay 0 while
 * that group's tg_load_avg is not 0. These drive the throttle, unthrottle
 * and autogroup paths; what they check there is the root skip.
 *
 * Saves and restores every knob it touches (autogroup, the root cgroup's
 * cpu controller, the offlined CPU) and removes the cgroup it makes.
 */
#include "sched_fastpath.h"
#include "../kselftest_harness.h"

#define AUTOGROUP_KNOB	"/proc/sys/kernel/sched_autogroup_enabled"
#define SETTLE_S	0.6	/* PELT half-life is 32 ms: ~20 half-lives */
#define CPU_ONLINE_FMT	"/sys/devices/system/cpu/cpu%d/online"
#define SETTLE_TRIES	10	/* reads of sched/debug per step, */
#define RETRY_S		0.2	/* this far apart */

FIXTURE(root_tg) {
	struct sfp_knob autogroup;
	struct sfp_undo_entry *cpu_controller, *rm_cgroup, *online, *rm_nest, *rm_nest_child;
	char cgroup[128];
	int cpus[SFP_MAX_CPUS];
	int ncpus;
	pid_t hogs[2 * SFP_MAX_CPUS + 1];
	int nhogs;
	const char *setup_error;
	struct sfp_cfs_rq rqs[4 * SFP_MAX_CPUS];
	int nrqs;
};

FIXTURE_SETUP(root_tg)
{
	char buf[512];
	int i;

	if (geteuid())
		SKIP(return, "needs root");
	if (access(SCHED_DEBUG_FILE, R_OK))
		SKIP(return, "no %s (debugfs not mounted, or no sched/debug)", SCHED_DEBUG_FILE);
	if (sfp_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !sfp_has_word(buf, "cpu"))
		SKIP(return, "no cgroup v2 cpu controller at %s", CGROUP_ROOT);
	self->ncpus = sfp_allowed_cpus(self->cpus, SFP_MAX_CPUS);
	ASSERT_EQ(0, sfp_undo_start()) TH_LOG("cannot start the undo log's guard");

	/* Autogroup would put our children in a group of their own. */
	if (!access(AUTOGROUP_KNOB, W_OK) && sfp_knob_set(&self->autogroup, AUTOGROUP_KNOB, "0")) {
		self->setup_error = "cannot turn autogroup off";
		return;
	}
	if (sfp_read_file(CGROUP_ROOT "/cgroup.subtree_control", buf, sizeof(buf))) {
		self->setup_error = "cannot read cgroup.subtree_control";
		return;
	}
	if (!sfp_has_word(buf, "cpu")) {
		self->cpu_controller = sfp_undo_add(CGROUP_ROOT "/cgroup.subtree_control", "-cpu");
		if (!self->cpu_controller ||
		    sfp_write_file(CGROUP_ROOT "/cgroup.subtree_control", "+cpu")) {
			sfp_undo_drop(self->cpu_controller);
			self->setup_error = "cannot enable the cpu controller";
			return;
		}
	}
	snprintf(self->cgroup, sizeof(self->cgroup), CGROUP_ROOT "/sfp_root_tg.%d", getpid());
	self->rm_cgroup = sfp_undo_add(self->cgroup, "");
	if (!self->rm_cgroup || mkdir(self->cgroup, 0755)) {
		sfp_undo_drop(self->rm_cgroup);
		self->setup_error = "cannot create a cgroup";
		return;
	}

	/* One hog per CPU in the root group, one more in the child group. */
	for (i = 0; i < self->ncpus; i++)
		self->hogs[self->nhogs++] = sfp_fork_pinned(self->cpus[i], CGROUP_ROOT, sfp_hog, 0);
	self->hogs[self->nhogs++] = sfp_fork_pinned(self->cpus[0], self->cgroup, sfp_hog, 0);
	sfp_sleep(SETTLE_S);
	for (i = 0; i < self->nhogs; i++) {
		if (waitpid(self->hogs[i], NULL, WNOHANG)) {
			self->setup_error = "a load process could not join its cgroup or CPU";
			return;
		}
	}
	self->nrqs = sfp_read_cfs_rqs(self->rqs, 4 * SFP_MAX_CPUS);
	if (self->nrqs <= 0)
		self->setup_error = "cannot parse " SCHED_DEBUG_FILE;
}

FIXTURE_TEARDOWN(root_tg)
{
	sfp_undo_now(self->online);
	sfp_kill(self->hogs, self->nhogs);
	sfp_undo_now(self->rm_nest_child);
	sfp_undo_now(self->rm_nest);
	sfp_undo_now(self->rm_cgroup);
	sfp_undo_now(self->cpu_controller);
	sfp_knob_restore(&self->autogroup);
}

TEST_F(root_tg, root_group_load_avg_untouched)
{
	long load = 0;
	int i, nroot = 0, bad = 0;

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	for (i = 0; i < self->nrqs; i++) {
		struct sfp_cfs_rq *rq = &self->rqs[i];

		if (strcmp(rq->path, "/"))
			continue;
		nroot++;
		load += rq->load_avg;
		TH_LOG("cfs_rq[%d]:/ load_avg=%ld tg_load_avg_contrib=%ld tg_load_avg=%ld",
		       rq->cpu, rq->load_avg, rq->tg_load_avg_contrib, rq->tg_load_avg);
		if (rq->tg_load_avg_contrib != 0 || rq->tg_load_avg != 0)
			bad++;
	}
	EXPECT_TRUE(nroot > 0) {
		TH_LOG("no root cfs_rq block in %s", SCHED_DEBUG_FILE);
		return;
	}
	/* The load must be visible, or the zeros below prove nothing. */
	EXPECT_TRUE(load > 0) {
		TH_LOG("root cfs_rqs show no load_avg under load");
		return;
	}
	EXPECT_EQ(0, bad) TH_LOG("%d of %d root cfs_rqs wrote root_task_group's load_avg",
				 bad, nroot);
}

/*
 * The child group's largest tg_load_avg in one read of sched/debug (@rqs,
 * @n blocks), each of its blocks logged; 0 when it has none.
 */
static long child_tg_load(struct __test_metadata *_metadata, const char *name,
			  struct sfp_cfs_rq *rqs, int n)
{
	long tg_load = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (strcmp(rqs[i].path, name))
			continue;
		TH_LOG("cfs_rq[%d]:%s load_avg=%ld tg_load_avg_contrib=%ld tg_load_avg=%ld",
		       rqs[i].cpu, rqs[i].path, rqs[i].load_avg, rqs[i].tg_load_avg_contrib,
		       rqs[i].tg_load_avg);
		if (rqs[i].tg_load_avg > tg_load)
			tg_load = rqs[i].tg_load_avg;
	}
	return tg_load;
}

/*
 * One read of sched/debug is not a snapshot: on an 8-vCPU NUMA guest the
 * child group's block was missing from the setup's read once in two
 * boots. The control reads again, up to SETTLE_TRIES times; a group
 * whose tg_load_avg is never written fails every read.
 */
TEST_F(root_tg, child_group_load_avg_control)
{
	static struct sfp_cfs_rq rqs[4 * SFP_MAX_CPUS];
	const char *name = strrchr(self->cgroup, '/');
	long tg_load;
	int tries, n;

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	tg_load = child_tg_load(_metadata, name, self->rqs, self->nrqs);
	for (tries = 2; !tg_load && tries <= SETTLE_TRIES; tries++) {
		TH_LOG("read %d: no tg_load_avg for %s; again", tries - 1, name);
		sfp_sleep(RETRY_S);
		n = sfp_read_cfs_rqs(rqs, 4 * SFP_MAX_CPUS);
		EXPECT_GT(n, 0) {
			TH_LOG("cannot parse %s", SCHED_DEBUG_FILE);
			return;
		}
		tg_load = child_tg_load(_metadata, name, rqs, n);
	}
	EXPECT_GT(tg_load, 0) TH_LOG("a loaded child group has no tg_load_avg: observable broken");
}

/* The child group's blocks and the root's, from one read of sched/debug. */
struct group_sum {
	int nblocks;		/* child group blocks: one per online CPU */
	long contrib;		/* their tg_load_avg_contrib, summed */
	long total;		/* the child group's tg_load_avg */
	long cpu_contrib;	/* the contribution of one CPU */
	int root_nonzero;	/* root blocks with a non-zero field */
};

static int group_sum(const char *name, int cpu, struct group_sum *g)
{
	static struct sfp_cfs_rq rqs[4 * SFP_MAX_CPUS];
	int i, n = sfp_read_cfs_rqs(rqs, 4 * SFP_MAX_CPUS);

	memset(g, 0, sizeof(*g));
	g->cpu_contrib = -1;
	for (i = 0; i < n; i++) {
		if (!strcmp(rqs[i].path, "/")) {
			g->root_nonzero += rqs[i].tg_load_avg_contrib || rqs[i].tg_load_avg;
			continue;
		}
		if (strcmp(rqs[i].path, name))
			continue;
		g->nblocks++;
		g->contrib += rqs[i].tg_load_avg_contrib;
		g->total = rqs[i].tg_load_avg;
		if (rqs[i].cpu == cpu)
			g->cpu_contrib = rqs[i].tg_load_avg_contrib;
	}
	return n;
}

/*
 * The child group's total matches its online CPUs' contributions within
 * 10% and the root blocks are 0, at one of SETTLE_TRIES reads; with
 * @need_cpu, CPU @cpu contributes too. Returns 1 if so; 0 if at the last
 * read all of it held but CPU @cpu gave nothing; -1 otherwise. Logs the
 * read that decided.
 */
static int group_consistent(struct __test_metadata *_metadata, const char *when,
			    const char *name, int cpu, bool need_cpu)
{
	bool agree = false, ok = false;
	struct group_sum g;
	int tries;
	long d;

	for (tries = 1; !ok && tries <= SETTLE_TRIES; tries++) {
		if (tries > 1)
			sfp_sleep(RETRY_S);
		if (group_sum(name, cpu, &g) <= 0) {
			TH_LOG("%s: cannot parse %s", when, SCHED_DEBUG_FILE);
			return -1;
		}
		d = labs(g.contrib - g.total);
		agree = g.nblocks > 0 && g.total > 0 && d * 10 <= g.total && !g.root_nonzero;
		ok = agree && (!need_cpu || g.cpu_contrib > 0);
	}
	TH_LOG("%s: %d CPUs give %ld to %s (tg_load_avg %ld); CPU %d: %ld; root not 0: %d; read %d",
	       when, g.nblocks, g.contrib, name, g.total, cpu, g.cpu_contrib, g.root_nonzero,
	       tries - 1);
	return ok ? 1 : agree ? 0 : -1;
}

/*
 * Whether task @pid, alive, has not yet pinned itself to @cpu
 * (sfp_fork_pinned() joins its cgroup, then pins itself): until it has
 * run that far it is no load of its group on @cpu. The host of a
 * virtual machine can keep a vCPU, and so the task, waiting for seconds.
 */
static bool not_set_up(pid_t pid, int cpu)
{
	siginfo_t info = { 0 };
	cpu_set_t set;

	if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) || info.si_pid)
		return false;	/* exited: a failure, not a precondition */
	if (sched_getaffinity(pid, sizeof(set), &set))
		return false;
	return CPU_COUNT(&set) != 1 || !CPU_ISSET(cpu, &set);
}

/*
 * A busy task of group @cgroup (a path under CGROUP_ROOT) on every CPU;
 * the group's figures agree with all CPUs online, with the last one
 * offline, and with it back.
 */
struct offline_run {
	const int *cpus;
	int ncpus;
	pid_t *hogs;
	int *nhogs;
	struct sfp_undo_entry **online;
};

static void offline_online(struct __test_metadata *_metadata, struct offline_run *run,
			   const char *cgroup)
{
	const char *name = cgroup + strlen(CGROUP_ROOT);
	int i, cpu = run->cpus[run->ncpus - 1];
	int err, ok, offline_ok;
	double start;
	char path[64];
	pid_t last;

	snprintf(path, sizeof(path), CPU_ONLINE_FMT, cpu);
	if (run->ncpus < 2 || cpu == 0 || access(path, W_OK))
		SKIP(return, "cannot take CPU %d offline (%s)", cpu, path);

	for (i = 0; i < run->ncpus; i++)
		run->hogs[(*run->nhogs)++] = sfp_fork_pinned(run->cpus[i], cgroup, sfp_hog, 0);
	last = run->hogs[*run->nhogs - 1];
	start = sfp_now();
	sfp_sleep(SETTLE_S);
	/* Only a CPU that gave nothing, the rest agreeing, can be its precondition. */
	ok = group_consistent(_metadata, "all online", name, cpu, true);
	if (!ok && not_set_up(last, cpu))
		SKIP(return, "precondition: CPU %d's task had not pinned itself there in %.1f s",
		     cpu, sfp_now() - start);
	EXPECT_EQ(1, ok) {
		TH_LOG("all online: the figures never agreed, or CPU %d gave nothing", cpu);
		return;
	}

	*run->online = sfp_undo_add(path, "1");
	EXPECT_TRUE(*run->online && !sfp_write_file(path, "0")) {
		sfp_undo_drop(*run->online);
		TH_LOG("cannot take CPU %d offline", cpu);
		return;
	}
	sfp_sleep(SETTLE_S);
	offline_ok = group_consistent(_metadata, "one CPU offline", name, cpu, false);
	EXPECT_EQ(1, offline_ok)
		TH_LOG("CPU %d's contribution was not taken out when it went offline", cpu);

	EXPECT_TRUE(!sfp_write_file(path, "1")) {
		TH_LOG("cannot put CPU %d back online", cpu);
		return;
	}
	sfp_undo_drop(*run->online);
	/* The task that left the CPU stays where it was moved: pin it back. */
	err = sfp_pin(last, cpu) ? errno : 0;
	EXPECT_EQ(0, err) {
		TH_LOG("cannot pin the task back to CPU %d: %s", cpu, strerror(err));
		return;
	}
	/*
	 * The move attaches the task's load to the CPU's group cfs_rq, run
	 * or not: from here a contribution missing is a failure.
	 */
	sfp_sleep(SETTLE_S);
	ok = group_consistent(_metadata, "back online", name, cpu, true);
	EXPECT_EQ(1, ok)
		TH_LOG("CPU %d's contribution did not come back, or the figures never agreed", cpu);
}

TEST_F(root_tg, cpu_offline_online)
{
	struct offline_run run = {
		.cpus = self->cpus, .ncpus = self->ncpus, .hogs = self->hogs,
		.nhogs = &self->nhogs, .online = &self->online,
	};

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	offline_online(_metadata, &run, self->cgroup);
}

/*
 * The same in a group nested under a first-level one: going offline
 * must take the contribution out of the nested group too, not only out
 * of the root's children.
 */
TEST_F(root_tg, cpu_offline_online_nested)
{
	struct offline_run run = {
		.cpus = self->cpus, .ncpus = self->ncpus, .hogs = self->hogs,
		.nhogs = &self->nhogs, .online = &self->online,
	};
	char parent[112], child[120], ctl[144], online[64];
	int cpu = self->cpus[self->ncpus - 1];

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	snprintf(online, sizeof(online), CPU_ONLINE_FMT, cpu);
	if (self->ncpus < 2 || cpu == 0 || access(online, W_OK))
		SKIP(return, "cannot take CPU %d offline (%s)", cpu, online);
	snprintf(parent, sizeof(parent), "%.100s_nest", self->cgroup);
	snprintf(child, sizeof(child), "%s/c", parent);
	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", parent);
	self->rm_nest = sfp_undo_add(parent, "");
	EXPECT_TRUE(self->rm_nest && !mkdir(parent, 0755)) {
		sfp_undo_drop(self->rm_nest);
		TH_LOG("cannot create %s", parent);
		return;
	}
	self->rm_nest_child = sfp_undo_add(child, "");
	EXPECT_TRUE(!sfp_write_file(ctl, "+cpu") && self->rm_nest_child &&
		    !mkdir(child, 0755)) {
		sfp_undo_drop(self->rm_nest_child);
		TH_LOG("cannot create %s with the cpu controller", child);
		return;
	}
	offline_online(_metadata, &run, child);
}

/*
 * The root's blocks are 0 and a block of group @path has a tg_load_avg,
 * at one of SETTLE_TRIES reads: returns 1 if so, 0 if the root's blocks
 * stayed 0 but the group's tg_load_avg did too, -1 otherwise (a root
 * block written, or sched/debug not read); logs the read that decided.
 */
static int root_zero_group_loaded(struct __test_metadata *_metadata, const char *path)
{
	static struct sfp_cfs_rq rqs[4 * SFP_MAX_CPUS];
	int i, n, tries, root_nonzero = 0;
	long tg_load = 0;

	for (tries = 1; tries <= SETTLE_TRIES; tries++) {
		if (tries > 1)
			sfp_sleep(RETRY_S);
		n = sfp_read_cfs_rqs(rqs, 4 * SFP_MAX_CPUS);
		if (n <= 0) {
			TH_LOG("cannot parse %s", SCHED_DEBUG_FILE);
			return -1;
		}
		root_nonzero = 0;
		tg_load = 0;
		for (i = 0; i < n; i++) {
			if (!strcmp(rqs[i].path, "/"))
				root_nonzero += rqs[i].tg_load_avg_contrib || rqs[i].tg_load_avg;
			else if (!strcmp(rqs[i].path, path) && rqs[i].tg_load_avg > tg_load)
				tg_load = rqs[i].tg_load_avg;
		}
		if (root_nonzero)
			break;	/* a root write never goes away */
		if (tg_load > 0)
			break;
	}
	TH_LOG("%s: tg_load_avg %ld; root blocks not 0: %d; read %d", path, tg_load,
	       root_nonzero, tries);
	return root_nonzero ? -1 : tg_load > 0;
}

/*
 * Give the child group 10 ms in each 100 ms period, so that it is
 * throttled and unthrottled every period, with a second runnable task of
 * it on the first CPU (unthrottling puts two back), for SETTLE_S. A
 * shorter period can overrun on a slow (debug, emulated) kernel, whose
 * period timer then scales it up with a printk under cfs_b->lock.
 * Returns whether the group was throttled; if not, the test has been
 * skipped (a kernel without CONFIG_CFS_BANDWIDTH) or has failed. *@hog
 * is the new task, or 0.
 */
static bool throttle_child(struct __test_metadata *_metadata, const char *cgroup, int cpu,
			   pid_t *hog)
{
	const char *name = strrchr(cgroup, '/');
	char path[160], buf[512], *p;
	long throttled = -1;

	snprintf(path, sizeof(path), "%s/cpu.max", cgroup);
	*hog = 0;
	if (access(path, W_OK))
		SKIP(return false, "no %s (a kernel without CONFIG_CFS_BANDWIDTH)", path);
	EXPECT_TRUE(!sfp_write_file(path, "10000 100000")) {
		TH_LOG("cannot write %s", path);
		return false;
	}
	*hog = sfp_fork_pinned(cpu, cgroup, sfp_hog, 0);
	sfp_sleep(SETTLE_S);
	snprintf(path, sizeof(path), "%s/cpu.stat", cgroup);
	if (!sfp_read_file(path, buf, sizeof(buf))) {
		p = strstr(buf, "nr_throttled ");
		if (p)
			throttled = strtol(p + strlen("nr_throttled "), NULL, 10);
	}
	TH_LOG("%s: throttled %ld times", name, throttled);
	EXPECT_GT(throttled, 0) {
		TH_LOG("the group was never throttled: bandwidth control untested");
		return false;
	}
	return true;
}

/* How long throttled_count_restored reads the CPU for its count. */
#define COUNT_WATCH_S	2.0

TEST_F(root_tg, throttled_child_group)
{
	static struct sfp_cfs_rq rqs[4 * SFP_MAX_CPUS];
	const char *name = strrchr(self->cgroup, '/');
	int i, n, root_nonzero = 0;
	char path[160];

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	if (!throttle_child(_metadata, self->cgroup, self->cpus[0], &self->hogs[self->nhogs++]))
		return;
	/*
	 * While throttled, the root's blocks stay 0. The group's own blocks
	 * come and go (with per-task throttling, since v6.18, its tasks leave
	 * the runqueue while throttled): the control reads them after the
	 * quota is lifted.
	 */
	n = sfp_read_cfs_rqs(rqs, 4 * SFP_MAX_CPUS);
	for (i = 0; i < n; i++)
		root_nonzero += !strcmp(rqs[i].path, "/") &&
				(rqs[i].tg_load_avg_contrib || rqs[i].tg_load_avg);
	EXPECT_TRUE(n > 0 && !root_nonzero) {
		TH_LOG("throttled: %d root blocks not 0 (of a read of %d blocks)", root_nonzero, n);
		return;
	}
	snprintf(path, sizeof(path), "%s/cpu.max", self->cgroup);
	EXPECT_TRUE(!sfp_write_file(path, "max")) {
		TH_LOG("cannot lift the quota (%s)", path);
		return;
	}
	sfp_sleep(SETTLE_S);
	EXPECT_EQ(1, root_zero_group_loaded(_metadata, name))
		TH_LOG("after %s was throttled: a root block written, or the group's not", name);
}

/*
 * Each throttle takes the group's tasks out of their CPU's nr_running,
 * which sets and clears the overload indicator, and each unthrottle puts
 * them back: once every task of the test has exited, the first CPU, read
 * idle in sched/debug, is read with nr_running 0 (an idle CPU with
 * another count is one that was left wrong).
 */
TEST_F(root_tg, throttled_count_restored)
{
	int r, reads, idle_reads;
	long last = 0;

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	if (!throttle_child(_metadata, self->cgroup, self->cpus[0], &self->hogs[self->nhogs++]))
		return;
	/* This process reads the first CPU from another, where there is one. */
	if (self->ncpus > 1) {
		EXPECT_EQ(0, sfp_pin(0, self->cpus[1]))
			return;
	}
	sfp_kill(self->hogs, self->nhogs);
	self->nhogs = 0;
	r = sfp_cpu_count_back_to_zero(self->cpus[0], COUNT_WATCH_S, &last, &reads, &idle_reads);
	TH_LOG("CPU %d read %d times, %d of them idle", self->cpus[0], reads, idle_reads);
	EXPECT_LE(0, r)
		TH_LOG("cannot read %s: %s", SCHED_DEBUG_FILE, strerror(-r));
	if (r < 0)
		return;
	if (r == 2)
		SKIP(return, "precondition: CPU %d was read idle fewer than %d times in %.1f s",
		     self->cpus[0], SFP_IDLE_READS, COUNT_WATCH_S);
	EXPECT_EQ(1, r)
		TH_LOG("CPU %d had nr_running %ld, read idle never 0 or below 0, %s",
		       self->cpus[0], last, "after the throttled group's tasks exited");
}

/* A new session (so an autogroup of its own), then busy. */
static void session_hog(double unused)
{
	if (getsid(0) != getpid() && setsid() < 0)
		_exit(4);
	sfp_hog(0);
}

TEST_F(root_tg, autogroup_session)
{
	char path[64], buf[128], group[64];
	pid_t child, session = -1;
	double start;
	int tries;

	EXPECT_TRUE(!self->setup_error) {
		TH_LOG("setup: %s", self->setup_error);
		return;
	}
	if (access(AUTOGROUP_KNOB, W_OK))
		SKIP(return, "no %s (a kernel without CONFIG_SCHED_AUTOGROUP)", AUTOGROUP_KNOB);
	/* The fixture saved the knob and turned it off; its teardown restores it. */
	EXPECT_TRUE(!sfp_write_file(AUTOGROUP_KNOB, "1")) {
		TH_LOG("cannot turn autogroup on");
		return;
	}
	/* Autogroups apply to tasks of the root cgroup: move there, then a new session. */
	child = sfp_fork_pinned(self->cpus[0], CGROUP_ROOT, session_hog, 0);
	self->hogs[self->nhogs++] = child;
	start = sfp_now();
	/* Its autogroup is its session's: wait for the session. */
	for (tries = 1; tries <= SETTLE_TRIES; tries++) {
		sfp_sleep(RETRY_S);
		session = sfp_task_session(child);
		if (session < 0 || session == child)
			break;
	}
	EXPECT_TRUE(session >= 0 && !waitpid(child, NULL, WNOHANG)) {
		TH_LOG("the session's task exited, or /proc/%d/stat cannot be read", child);
		return;
	}
	if (session != child)
		SKIP(return, "precondition: the task had not made its session in %.1f s",
		     sfp_now() - start);
	/* setsid() attached its load to its autogroup: from here, no precondition. */
	sfp_sleep(SETTLE_S);
	snprintf(path, sizeof(path), "/proc/%d/autogroup", child);
	EXPECT_TRUE(!sfp_read_file(path, buf, sizeof(buf)) && sscanf(buf, "%63s", group) == 1) {
		TH_LOG("cannot read %s", path);
		return;
	}
	EXPECT_EQ(1, root_zero_group_loaded(_metadata, group))
		TH_LOG("with a session in %s, a root block was written or its was not", group);
}

TEST_HARNESS_MAIN
