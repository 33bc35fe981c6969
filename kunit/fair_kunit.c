// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for two CFS fast paths:
 *
 *  - update_tg_load_avg() and clear_tg_load_avg() leave root_task_group
 *    alone: nothing reads its load_avg, so nothing should write it;
 *  - root_domain::overloaded: add_nr_running() sets it when a runqueue
 *    reaches two tasks, update_sd_lb_stats() recomputes it from the
 *    runqueues of the top-level domain only.
 *
 * The newly-idle balance that reads the indicator runs under the rq lock
 * inside __schedule(); it is tested from user space by the sched_fastpath
 * kselftests instead.
 *
 * This file is included at the end of kernel/sched/fair.c, as
 * fs/tests/exec_kunit.c is by fs/exec.c, so that the tests reach the
 * static functions under test while production code stays unchanged.
 *
 * Safety on a live kernel: every cfs_rq, task_group, rq, root_domain,
 * sched_domain and sched_group written here is a zeroed fake owned by the
 * test. Real runqueues are only read (cpu_of() and the clock of an active
 * CPU; nr_running and load of the CPU that the "busy" cases load). The one
 * real object the root-group cases can touch is root_task_group.load_avg,
 * and only on a kernel without the root-group skip; the cases undo their
 * own contribution there. The busy cases run two pinned kernel threads on
 * one CPU for a few milliseconds and stop them before returning.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched/isolation.h>

#ifdef CONFIG_SMP

/* A contribution of 6400 moves tg->load_avg only for changes above 100. */
#define TG_CONTRIB	6400UL
#define TG_STEP		(TG_CONTRIB / 64)

static struct cfs_rq *fake_cfs_rq(struct kunit *test, struct task_group *tg,
				  unsigned long contrib, unsigned long load)
{
	struct cfs_rq *cfs_rq = kunit_kzalloc(test, sizeof(*cfs_rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, cfs_rq);
	cfs_rq->tg = tg;
	/* Only cpu_of() and sched_clock_cpu() of this runqueue are used. */
	cfs_rq->rq = cpu_rq(cpumask_first(cpu_active_mask));
	cfs_rq->tg_load_avg_contrib = contrib;
	cfs_rq->avg.load_avg = load;
	/* Last propagated at boot: the 1 ms rate limit does not apply. */
	cfs_rq->last_update_tg_load_avg = 0;
	return cfs_rq;
}

static struct task_group *fake_tg(struct kunit *test)
{
	struct task_group *tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tg);
	atomic_long_set(&tg->load_avg, 0);
	return tg;
}

static void root_tg_update_skipped(struct kunit *test)
{
	struct cfs_rq *cfs_rq = fake_cfs_rq(test, &root_task_group, 0, 100 * TG_CONTRIB);

	update_tg_load_avg(cfs_rq);

	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 0UL,
			    "a root cfs_rq's load change was propagated to root_task_group");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&root_task_group.load_avg), 0L,
			    "root_task_group.load_avg is written, though nothing reads it");
	/* Take back what a kernel without the skip added. */
	atomic_long_sub(cfs_rq->tg_load_avg_contrib, &root_task_group.load_avg);
}

static void root_tg_clear_skipped(struct kunit *test)
{
	struct cfs_rq *cfs_rq = fake_cfs_rq(test, &root_task_group, TG_CONTRIB, TG_CONTRIB);

	clear_tg_load_avg(cfs_rq);

	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, TG_CONTRIB,
			    "clear_tg_load_avg() took a root cfs_rq's contribution out of root_task_group");
	if (cfs_rq->tg_load_avg_contrib != TG_CONTRIB)
		atomic_long_add(TG_CONTRIB, &root_task_group.load_avg);
}

static void child_tg_update_propagated(struct kunit *test)
{
	struct task_group *tg = fake_tg(test);
	struct cfs_rq *cfs_rq = fake_cfs_rq(test, tg, TG_CONTRIB, TG_CONTRIB + TG_STEP + 1);

	update_tg_load_avg(cfs_rq);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)TG_STEP + 1,
			    "a change of contrib/64 + 1 did not reach a child group's load_avg");
	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, TG_CONTRIB + TG_STEP + 1,
			    "tg_load_avg_contrib does not record what was propagated");
}

static void child_tg_below_threshold_kept(struct kunit *test)
{
	struct task_group *tg = fake_tg(test);
	struct cfs_rq *up = fake_cfs_rq(test, tg, TG_CONTRIB, TG_CONTRIB + TG_STEP);
	struct cfs_rq *down = fake_cfs_rq(test, tg, TG_CONTRIB, TG_CONTRIB - TG_STEP);

	update_tg_load_avg(up);
	update_tg_load_avg(down);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), 0L,
			    "a change of exactly contrib/64 was propagated");
	KUNIT_EXPECT_EQ_MSG(test, up->tg_load_avg_contrib, TG_CONTRIB,
			    "contrib moved on a change of +contrib/64");
	KUNIT_EXPECT_EQ_MSG(test, down->tg_load_avg_contrib, TG_CONTRIB,
			    "contrib moved on a change of -contrib/64");
}

static void child_tg_rate_limited(struct kunit *test)
{
	struct task_group *tg = fake_tg(test);
	struct cfs_rq *cfs_rq = fake_cfs_rq(test, tg, TG_CONTRIB, 2 * TG_CONTRIB);
	unsigned long flags;

	/* Both updates within far less than the 1 ms window. */
	local_irq_save(flags);
	update_tg_load_avg(cfs_rq);
	cfs_rq->avg.load_avg = 3 * TG_CONTRIB;
	update_tg_load_avg(cfs_rq);
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)TG_CONTRIB,
			    "expected the first update only; the second came within 1 ms");
	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 2 * TG_CONTRIB,
			    "tg_load_avg_contrib moved twice within 1 ms");
}

static struct kunit_case sched_fair_tg_load_avg_cases[] = {
	KUNIT_CASE(root_tg_update_skipped),
	KUNIT_CASE(root_tg_clear_skipped),
	KUNIT_CASE(child_tg_update_propagated),
	KUNIT_CASE(child_tg_below_threshold_kept),
	KUNIT_CASE(child_tg_rate_limited),
	{}
};

static struct kunit_suite sched_fair_tg_load_avg_suite = {
	.name = "sched_fair_tg_load_avg",
	.test_cases = sched_fair_tg_load_avg_cases,
};

/* ---- root_domain::overloaded, set side -------------------------------- */

/* A zeroed runqueue of our own, attached to a zeroed root domain. */
static struct rq *fake_rq(struct kunit *test)
{
	struct rq *rq = kunit_kzalloc(test, sizeof(*rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rq);
	rq->rd = kunit_kzalloc(test, sizeof(*rq->rd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rq->rd);
	/* A housekeeping CPU: no NO_HZ_FULL tick dependency is touched. */
	rq->cpu = housekeeping_any_cpu(HK_TYPE_TICK);
	return rq;
}

static void set_not_on_first_task(struct kunit *test)
{
	struct rq *rq = fake_rq(test);

	add_nr_running(rq, 1);

	KUNIT_EXPECT_FALSE_MSG(test, get_rd_overloaded(rq->rd),
			       "one task on a runqueue marked the root domain overloaded");
}

static void set_on_second_task(struct kunit *test)
{
	struct rq *rq = fake_rq(test);

	add_nr_running(rq, 1);
	add_nr_running(rq, 1);

	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "a runqueue going from 1 to 2 tasks did not mark the root domain overloaded");
}

static void set_on_two_at_once(struct kunit *test)
{
	struct rq *rq = fake_rq(test);

	add_nr_running(rq, 2);

	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "a runqueue going from 0 to 2 tasks did not mark the root domain overloaded");
}

static void set_only_on_transition(struct kunit *test)
{
	struct rq *rq = fake_rq(test);

	add_nr_running(rq, 2);
	/* A balance pass found nothing to pull and cleared the flag. */
	set_rd_overloaded(rq->rd, 0);
	add_nr_running(rq, 1);

	KUNIT_EXPECT_FALSE_MSG(test, get_rd_overloaded(rq->rd),
			       "2 -> 3 tasks set the flag again: it should be set on the <2 -> >=2 transition only");
}

static void sub_never_clears(struct kunit *test)
{
	struct rq *rq = fake_rq(test);

	add_nr_running(rq, 2);
	sub_nr_running(rq, 1);
	sub_nr_running(rq, 1);

	KUNIT_EXPECT_EQ_MSG(test, rq->nr_running, 0U, "fake runqueue count is off");
	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "sub_nr_running() cleared the flag; only a root-domain balance pass may");
}

static struct kunit_case sched_fair_overload_set_cases[] = {
	KUNIT_CASE(set_not_on_first_task),
	KUNIT_CASE(set_on_second_task),
	KUNIT_CASE(set_on_two_at_once),
	KUNIT_CASE(set_only_on_transition),
	KUNIT_CASE(sub_never_clears),
	{}
};

static struct kunit_suite sched_fair_overload_set_suite = {
	.name = "sched_fair_overload_set",
	.test_cases = sched_fair_overload_set_cases,
};

/* ---- root_domain::overloaded, recompute side ---------------------------- */

/*
 * One domain with one group spanning one CPU, as build_sched_domains()
 * would allocate them, plus a runqueue of our own whose root domain the
 * statistics pass writes. CPU_NEWLY_IDLE and a far-future next_update keep
 * update_sd_lb_stats() from updating the group capacity or the LLC scan
 * hint of the real topology.
 */
struct lb_fake {
	struct sched_domain *sd;
	struct sched_group *sg;
	struct rq *dst_rq;
	struct cpumask *cpus;
	struct lb_env env;
	struct sd_lb_stats sds;
};

static struct lb_fake *lb_fake(struct kunit *test, int cpu, bool root)
{
	struct lb_fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->sd = kunit_kzalloc(test, sizeof(*f->sd) + cpumask_size(), GFP_KERNEL);
	f->sg = kunit_kzalloc(test, sizeof(*f->sg) + cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->sd);
	KUNIT_ASSERT_NOT_NULL(test, f->sg);
	f->sg->sgc = kunit_kzalloc(test, sizeof(*f->sg->sgc) + cpumask_size(), GFP_KERNEL);
	f->cpus = kunit_kzalloc(test, cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->sg->sgc);
	KUNIT_ASSERT_NOT_NULL(test, f->cpus);
	f->dst_rq = fake_rq(test);

	f->sg->next = f->sg;
	f->sg->group_weight = 1;
	f->sg->asym_prefer_cpu = cpu;
	cpumask_set_cpu(cpu, sched_group_span(f->sg));
	cpumask_set_cpu(cpu, group_balance_mask(f->sg));
	f->sg->sgc->capacity = SCHED_CAPACITY_SCALE;
	f->sg->sgc->min_capacity = SCHED_CAPACITY_SCALE;
	f->sg->sgc->max_capacity = SCHED_CAPACITY_SCALE;
	f->sg->sgc->next_update = jiffies + 1000 * HZ;

	f->sd->groups = f->sg;
	f->sd->imbalance_pct = 117;
	f->sd->span_weight = 1;
	cpumask_set_cpu(cpu, sched_domain_span(f->sd));
	if (!root) {
		/* Any parent makes this a child domain. */
		f->sd->parent = kunit_kzalloc(test, sizeof(*f->sd) + cpumask_size(), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, f->sd->parent);
	}

	f->env = (struct lb_env){
		.sd = f->sd,
		.dst_cpu = cpu,
		.dst_rq = f->dst_rq,
		.idle = CPU_NEWLY_IDLE,
		.cpus = f->cpus,
	};
	init_sd_lb_stats(&f->sds);
	return f;
}

static void lb_fake_pass(struct lb_fake *f)
{
	rcu_read_lock();
	update_sd_lb_stats(&f->env, &f->sds);
	rcu_read_unlock();
}

/* Two pinned CPU-bound kernel threads, to give one CPU two runnable tasks. */
struct busy_cpu {
	int cpu;
	struct task_struct *thread[2];
};

static int busy_fn(void *unused)
{
	while (!kthread_should_stop())
		cond_resched();
	return 0;
}

static void busy_cpu_stop(struct busy_cpu *b)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(b->thread); i++) {
		if (!IS_ERR_OR_NULL(b->thread[i]))
			kthread_stop(b->thread[i]);
		b->thread[i] = NULL;
	}
}

/* The CPU the busy cases load; pick it before allocating, start after. */
static int busy_cpu_pick(void)
{
	return cpumask_last(cpu_active_mask);
}

/*
 * The test's own thread runs on the first active CPU, never on the busy
 * one, so that the busy CPU holds exactly the two threads the case starts.
 * The suite's init skips the cases when fewer than two CPUs are active.
 */
static void busy_cpu_start(struct kunit *test, struct busy_cpu *b)
{
	int i, waited, here;

	b->cpu = busy_cpu_pick();
	here = cpumask_first(cpu_active_mask);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(here)), 0);
	KUNIT_ASSERT_NE(test, raw_smp_processor_id(), b->cpu);
	for (i = 0; i < ARRAY_SIZE(b->thread); i++) {
		b->thread[i] = kthread_create(busy_fn, NULL, "kunit_busy/%d", i);
		if (IS_ERR(b->thread[i])) {
			busy_cpu_stop(b);
			KUNIT_FAIL_AND_ABORT(test, "could not create a kernel thread");
		}
		kthread_bind(b->thread[i], b->cpu);
		wake_up_process(b->thread[i]);
	}
	for (waited = 0; READ_ONCE(cpu_rq(b->cpu)->nr_running) < 2 && waited < 500; waited++)
		usleep_range(1000, 2000);
	if (READ_ONCE(cpu_rq(b->cpu)->nr_running) < 2) {
		busy_cpu_stop(b);
		KUNIT_FAIL_AND_ABORT(test, "CPU %d did not reach two runnable tasks", b->cpu);
	}
}

/*
 * One update_sd_lb_stats() pass, at a root or a child domain, with the
 * fake root domain's flag first set to @flag; returns the flag after it.
 * With @busy the domain covers a CPU running two tasks, otherwise no CPU
 * at all (so no runqueue can have more than one task).
 */
static bool overload_after_pass(struct kunit *test, bool root, bool busy, bool flag)
{
	struct lb_fake *f = lb_fake(test, busy_cpu_pick(), root);
	struct busy_cpu b = {};
	bool overloaded;

	set_rd_overloaded(f->dst_rq->rd, flag);
	if (!busy) {
		lb_fake_pass(f);
		return get_rd_overloaded(f->dst_rq->rd);
	}
	cpumask_set_cpu(busy_cpu_pick(), f->cpus);
	busy_cpu_start(test, &b);
	lb_fake_pass(f);
	overloaded = get_rd_overloaded(f->dst_rq->rd);
	busy_cpu_stop(&b);
	return overloaded;
}

static void recompute_root_clears(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, overload_after_pass(test, true, false, true),
			       "a root-domain pass that saw no overloaded runqueue left the flag set");
}

static void recompute_root_sets(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, overload_after_pass(test, true, true, false),
			      "a root-domain pass over a CPU with two tasks did not set the flag");
}

static void recompute_child_keeps_set(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, overload_after_pass(test, false, false, true),
			      "a child-domain pass cleared the flag: it sees only part of the root domain");
}

static void recompute_child_keeps_clear(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, overload_after_pass(test, false, true, false),
			       "a child-domain pass wrote the flag; only the root domain pass may");
}

/* update_sg_lb_stats() on the fake group: is it reported overloaded? */
static bool sg_reports_overloaded(struct kunit *test, bool busy, unsigned int *nr_running)
{
	struct lb_fake *f = lb_fake(test, busy_cpu_pick(), true);
	bool sg_overloaded = false, sg_overutilized = false;
	struct busy_cpu b = {};
	struct sg_lb_stats sgs;

	f->sds.local = f->sg;
	if (busy) {
		cpumask_set_cpu(busy_cpu_pick(), f->cpus);
		busy_cpu_start(test, &b);
	}
	update_sg_lb_stats(&f->env, &f->sds, f->sg, &sgs, &sg_overloaded, &sg_overutilized);
	busy_cpu_stop(&b);
	*nr_running = sgs.sum_nr_running;
	return sg_overloaded;
}

static void pick_group_with_two_tasks(struct kunit *test)
{
	unsigned int nr_running;
	bool overloaded = sg_reports_overloaded(test, true, &nr_running);

	KUNIT_EXPECT_GE_MSG(test, nr_running, 2U,
			    "the group statistics did not count the busy CPU's two tasks");
	KUNIT_EXPECT_TRUE_MSG(test, overloaded,
			      "a group whose CPU has two tasks was not reported overloaded");
}

static void pick_idle_group(struct kunit *test)
{
	unsigned int nr_running;

	KUNIT_EXPECT_FALSE_MSG(test, sg_reports_overloaded(test, false, &nr_running),
			       "a group with no runnable task was reported overloaded");
}

static struct kunit_case sched_fair_overload_recompute_cases[] = {
	KUNIT_CASE(recompute_root_clears),
	KUNIT_CASE(recompute_root_sets),
	KUNIT_CASE(recompute_child_keeps_set),
	KUNIT_CASE(recompute_child_keeps_clear),
	KUNIT_CASE(pick_group_with_two_tasks),
	KUNIT_CASE(pick_idle_group),
	{}
};

/* The busy cases need a second CPU besides the test's own. */
static int sched_fair_overload_recompute_init(struct kunit *test)
{
	if (num_active_cpus() < 2)
		kunit_skip(test, "needs 2 active CPUs, %u active", num_active_cpus());
	return 0;
}

static struct kunit_suite sched_fair_overload_recompute_suite = {
	.name = "sched_fair_overload_recompute",
	.init = sched_fair_overload_recompute_init,
	.test_cases = sched_fair_overload_recompute_cases,
};

kunit_test_suites(&sched_fair_tg_load_avg_suite,
		  &sched_fair_overload_set_suite,
		  &sched_fair_overload_recompute_suite);

#else /* !CONFIG_SMP */

/*
 * Without SMP there is no load tracking of task groups and no root
 * domain: nothing here to test, which a run says rather than passing.
 */
static void needs_smp(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_SMP: no tg load tracking or root domain without it");
}

static struct kunit_case sched_fair_fastpaths_cases[] = {
	KUNIT_CASE(needs_smp),
	{}
};

static struct kunit_suite sched_fair_fastpaths_suite = {
	.name = "sched_fair_fastpaths",
	.test_cases = sched_fair_fastpaths_cases,
};

kunit_test_suite(sched_fair_fastpaths_suite);

#endif /* CONFIG_SMP */
