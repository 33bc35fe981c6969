// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for two fast paths of the fair scheduler, on fake objects:
 *
 *  - update_tg_load_avg() and clear_tg_load_avg() leave root_task_group
 *    alone, since nothing uses its load_avg; a child group's load_avg
 *    follows its cfs_rqs when their load changes, when a task is attached
 *    or detached and when a cfs_rq's load decays;
 *  - the root domain's overload indicator: add_nr_running() sets it when
 *    a runqueue reaches two tasks, and the statistics pass of a top-level
 *    domain writes it while a pass below does not.
 *
 * Every cfs_rq, runqueue, root domain, sched domain and group here, and
 * every task group but root_task_group, is a zeroed fake owned by the
 * case; the live runqueues are not touched. The one live object a case
 * can write is root_task_group.load_avg, and only on a kernel that lacks
 * the root-group skip the case is there to catch; it then takes its own
 * contribution back out. Tracepoints on the functions see the fakes. No
 * case waits for anything, retries or depends on the load of the
 * machine; the cases that update a group's load_avg need sched_clock to
 * be 1 ms past boot, since a fake cfs_rq last propagated its load at 0
 * (they skip, saying so, before).
 *
 * This file is included at the end of kernel/sched/fair.c, as
 * fs/tests/exec_kunit.c is by fs/exec.c, so that the tests reach the
 * static functions under test while production code stays unchanged.
 * Its functions and types start with sched_fair_test_, its macros with
 * SFT_, its suites and their case arrays with sched_fair_.
 */
#include <kunit/test.h>

#if SFT_BACKPORT
/* What differs on this older kernel line: fair_kunit.h. */
#include "fair_kunit.h"
#endif

#if SFT_NEEDS_SMP && !defined(CONFIG_SMP)

/*
 * Without SMP (no load tracking of task groups and no root domain) the
 * suites are not built, which a run says rather than passing.
 */
static void sched_fair_test_needs_smp(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_SMP: the suites are built for SMP kernels only");
}

static struct kunit_case sched_fair_fastpaths_cases[] = {
	{ .run_case = sched_fair_test_needs_smp, .name = "needs_smp" },
	{}
};

static struct kunit_suite sched_fair_fastpaths_suite = {
	.name = "sched_fair_fastpaths",
	.test_cases = sched_fair_fastpaths_cases,
};

kunit_test_suite(sched_fair_fastpaths_suite);

#else

/* KUNIT_CASE(), named without the prefix that the functions carry. */
#if SFT_HAVE_CASE_MODULE
#define SFT_CASE(test_name)						\
	{ .run_case = sched_fair_test_##test_name, .name = #test_name,	\
	  .module_name = KBUILD_MODNAME }
#else
#define SFT_CASE(test_name)						\
	{ .run_case = sched_fair_test_##test_name, .name = #test_name }
#endif

/* A cfs_rq's load, and its contribution to its group's load_avg. */
#define SFT_CONTRIB	6400UL

#ifdef CONFIG_FAIR_GROUP_SCHED

/*
 * A fake runqueue whose PELT clock stands at SFT_PELT_NOW, so that nothing
 * decays but what a case asks to. Its CPU number, for cpu_of() and
 * sched_clock_cpu(), is an active CPU's, set again under the hotplug lock
 * by sched_fair_test_rq_lock().
 */
#define SFT_PELT_NOW	NSEC_PER_SEC

static struct rq *sched_fair_test_pelt_rq(struct kunit *test)
{
	struct rq *rq = kunit_kzalloc(test, sizeof(*rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rq);
	raw_spin_lock_init(&rq->__lock);
	INIT_LIST_HEAD(&rq->leaf_cfs_rq_list);
	rq->tmp_alone_branch = &rq->leaf_cfs_rq_list;
	rq->cpu = cpumask_first(cpu_active_mask);
	rq->clock_pelt = SFT_PELT_NOW;
	/* As if update_rq_clock() had run under the lock. */
	rq->clock_update_flags = RQCF_UPDATED;
	return rq;
}

/*
 * Lock @rq as the callers of the functions under test do, and hold CPU
 * hotplug off so that @rq's CPU, made an active one, stays active:
 * update_tg_load_avg() leaves an inactive CPU's cfs_rqs alone.
 */
static void sched_fair_test_rq_lock(struct rq *rq)
	__acquires(__rq_lockp(rq))
{
	cpus_read_lock();
	rq->cpu = cpumask_first(cpu_active_mask);
	raw_spin_rq_lock_irq(rq);
}

static void sched_fair_test_rq_unlock(struct rq *rq)
	__releases(__rq_lockp(rq))
{
	raw_spin_rq_unlock_irq(rq);
	cpus_read_unlock();
}

/*
 * A cfs_rq of @tg on @rq whose load is @load, of which @contrib was last
 * propagated to the group (at time 0).
 */
static struct cfs_rq *sched_fair_test_cfs_rq_on(struct kunit *test, struct rq *rq,
						struct task_group *tg, unsigned long contrib,
						unsigned long load)
{
	struct cfs_rq *cfs_rq = kunit_kzalloc(test, sizeof(*cfs_rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, cfs_rq);
	cfs_rq->rq = rq;
	cfs_rq->tg = tg;
	cfs_rq->tg_load_avg_contrib = contrib;
	cfs_rq->avg.load_avg = load;
	return cfs_rq;
}

/* The same on a fake runqueue of its own. */
static struct cfs_rq *sched_fair_test_cfs_rq(struct kunit *test, struct task_group *tg,
					     unsigned long contrib, unsigned long load)
{
	return sched_fair_test_cfs_rq_on(test, sched_fair_test_pelt_rq(test), tg, contrib, load);
}

/* update_tg_load_avg() of @cfs_rq, under its runqueue's lock. */
static void sched_fair_test_update(struct cfs_rq *cfs_rq)
{
	sched_fair_test_rq_lock(cfs_rq->rq);
	update_tg_load_avg(cfs_rq);
	sched_fair_test_rq_unlock(cfs_rq->rq);
}

#if SFT_HAVE_RATE_LIMIT
/*
 * A fake cfs_rq last propagated its load at 0: an update passes the 1 ms
 * rate limit once sched_clock does, long before KUnit runs at boot.
 */
static void sched_fair_test_need_rate_limit_past(struct kunit *test)
{
	u64 now = sched_clock_cpu(cpumask_first(cpu_active_mask));

	if (now < NSEC_PER_MSEC)
		kunit_skip(test, "sched_clock is %llu ns, not yet past the 1 ms rate limit", now);
}
#else
static void sched_fair_test_need_rate_limit_past(struct kunit *test) { }
#endif

static struct task_group *sched_fair_test_tg(struct kunit *test, long load_avg)
{
	struct task_group *tg = kunit_kzalloc(test, sizeof(*tg), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tg);
	atomic_long_set(&tg->load_avg, load_avg);
	return tg;
}

static void sched_fair_test_root_tg_update_skipped(struct kunit *test)
{
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, &root_task_group, 0,
						       100 * SFT_CONTRIB);

	sched_fair_test_need_rate_limit_past(test);
	sched_fair_test_update(cfs_rq);

	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 0UL,
			    "a root cfs_rq's load change was propagated to root_task_group");
	/* Take back what a kernel without the skip added. */
	atomic_long_sub(cfs_rq->tg_load_avg_contrib, &root_task_group.load_avg);
}

#if SFT_HAVE_CLEAR
static void sched_fair_test_root_tg_clear_skipped(struct kunit *test)
{
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, &root_task_group,
						       SFT_CONTRIB, SFT_CONTRIB);

	sched_fair_test_rq_lock(cfs_rq->rq);
	clear_tg_load_avg(cfs_rq);
	sched_fair_test_rq_unlock(cfs_rq->rq);

	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, SFT_CONTRIB,
			    "clear_tg_load_avg() took a root cfs_rq's contribution out of root_task_group");
	if (cfs_rq->tg_load_avg_contrib != SFT_CONTRIB)
		atomic_long_add(SFT_CONTRIB, &root_task_group.load_avg);
}
#endif

static void sched_fair_test_child_tg_update_propagated(struct kunit *test)
{
	struct task_group *tg = sched_fair_test_tg(test, 0);
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, tg, SFT_CONTRIB, 2 * SFT_CONTRIB);

	sched_fair_test_need_rate_limit_past(test);
	sched_fair_test_update(cfs_rq);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)SFT_CONTRIB,
			    "a cfs_rq whose load doubled did not pass the change to a child group's load_avg");
	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 2 * SFT_CONTRIB,
			    "tg_load_avg_contrib does not record what was propagated");
}

#if SFT_HAVE_CLEAR
/* What a CPU going offline does to each of its cfs_rqs, for a child group. */
static void sched_fair_test_child_tg_clear_taken_out(struct kunit *test)
{
	struct task_group *tg = sched_fair_test_tg(test, 3 * SFT_CONTRIB);
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, tg, SFT_CONTRIB, SFT_CONTRIB);

	sched_fair_test_rq_lock(cfs_rq->rq);
	clear_tg_load_avg(cfs_rq);
	sched_fair_test_rq_unlock(cfs_rq->rq);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), 2 * (long)SFT_CONTRIB,
			    "an offline CPU's contribution stayed in a child group's load_avg");
	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 0UL,
			    "the cleared cfs_rq still records a contribution");
}
#endif

/*
 * The callers of update_tg_load_avg() that change a cfs_rq's load: a task
 * attached to or detached from a group's cfs_rq, an update that finds the
 * load decayed, and the decay of an idle group's blocked load.
 */

/* A group's cfs_rq on @rq, its averages last updated at SFT_PELT_NOW. */
static struct cfs_rq *sched_fair_test_group_cfs_rq(struct kunit *test, struct rq *rq,
						   struct task_group *tg, unsigned long load)
{
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq_on(test, rq, tg, load, load);

	cfs_rq->avg.load_sum = load * get_pelt_divider(&cfs_rq->avg);
	cfs_rq->avg.last_update_time = SFT_PELT_NOW;
	return cfs_rq;
}

/*
 * The entity of a task carrying a load of @load, not yet on any cfs_rq;
 * in a task_struct, for what goes from an entity to its task.
 */
static struct sched_entity *sched_fair_test_se(struct kunit *test, struct cfs_rq *cfs_rq,
					       unsigned long load)
{
	struct task_struct *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct sched_entity *se;

	KUNIT_ASSERT_NOT_NULL(test, p);
	se = &p->se;
	se->cfs_rq = cfs_rq;
	se->load.weight = NICE_0_LOAD;
	se->avg.load_avg = load;
	return se;
}

/*
 * A child group with a cfs_rq on a fake runqueue, and a task's entity
 * carrying SFT_CONTRIB: attached to the cfs_rq when it was last updated
 * (and so counted in the group's load_avg), or not yet.
 */
struct sched_fair_test_group_task {
	struct rq *rq;
	struct task_group *tg;
	struct cfs_rq *cfs_rq;
	struct sched_entity *se;
};

static void sched_fair_test_group_task_init(struct kunit *test,
					    struct sched_fair_test_group_task *g, bool attached)
{
	unsigned long load = attached ? SFT_CONTRIB : 0;

	g->rq = sched_fair_test_pelt_rq(test);
	g->tg = sched_fair_test_tg(test, load);
	g->cfs_rq = sched_fair_test_group_cfs_rq(test, g->rq, g->tg, load);
	g->se = sched_fair_test_se(test, g->cfs_rq, SFT_CONTRIB);
	if (attached) {
		/* The sum that gives the entity's load_avg, as the cfs_rq's does. */
		g->se->avg.load_sum = div_u64((u64)SFT_CONTRIB * get_pelt_divider(&g->se->avg),
					      se_weight(g->se));
		g->se->avg.last_update_time = SFT_PELT_NOW;
	}
}

/*
 * Run @op on a task's entity in a child group, attached to its cfs_rq
 * (@attached) or not; then the cfs_rq and the group's load_avg must both
 * hold @load.
 */
static void sched_fair_test_group_task_run(struct kunit *test, bool attached,
					   void (*op)(struct sched_fair_test_group_task *g),
					   unsigned long load, const char *what)
{
	struct sched_fair_test_group_task g;

	sched_fair_test_need_rate_limit_past(test);
	sched_fair_test_group_task_init(test, &g, attached);
	sched_fair_test_rq_lock(g.rq);
	op(&g);
	sched_fair_test_rq_unlock(g.rq);

	KUNIT_EXPECT_EQ_MSG(test, g.cfs_rq->avg.load_avg, load,
			    "%s: the entity's load was not %s the cfs_rq", what,
			    load ? "attached to" : "detached from");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&g.tg->load_avg), (long)load,
			    "%s did not update the group's load_avg", what);
}

/* update_load_avg() with the flags enqueue_entity() gives a task new to this CPU. */
static void sched_fair_test_enqueue_attach(struct sched_fair_test_group_task *g)
{
	update_load_avg(g->cfs_rq, g->se, UPDATE_TG | DO_ATTACH);
}

static void sched_fair_test_child_tg_enqueue_attach_propagated(struct kunit *test)
{
	sched_fair_test_group_task_run(test, false, sched_fair_test_enqueue_attach,
				       SFT_CONTRIB, "an attach on enqueue");
}

/* A task moved into the group (a cgroup move, a class change). */
static void sched_fair_test_attach(struct sched_fair_test_group_task *g)
{
	attach_entity_cfs_rq(g->se);
}

static void sched_fair_test_child_tg_attach_propagated(struct kunit *test)
{
	sched_fair_test_group_task_run(test, false, sched_fair_test_attach, SFT_CONTRIB,
				       "attach_entity_cfs_rq()");
}

/* A task moved out of the group. */
static void sched_fair_test_detach(struct sched_fair_test_group_task *g)
{
	detach_entity_cfs_rq(g->se);
}

static void sched_fair_test_child_tg_detach_propagated(struct kunit *test)
{
	sched_fair_test_group_task_run(test, true, sched_fair_test_detach, 0,
				       "detach_entity_cfs_rq()");
}

/* update_load_avg() with the flags dequeue_entity() gives a task migrating away. */
static void sched_fair_test_dequeue_detach(struct sched_fair_test_group_task *g)
{
	update_load_avg(g->cfs_rq, g->se, UPDATE_TG | DO_DETACH);
}

static void sched_fair_test_child_tg_dequeue_detach_propagated(struct kunit *test)
{
	sched_fair_test_group_task_run(test, true, sched_fair_test_dequeue_detach, 0,
				       "a detach on dequeue");
}

/*
 * update_load_avg() with UPDATE_TG, as an enqueue, a dequeue or a tick
 * calls it, of a cfs_rq whose load decayed over 64 ms since its last
 * update.
 */
static void sched_fair_test_child_tg_decay_on_update_propagated(struct kunit *test)
{
	struct rq *rq = sched_fair_test_pelt_rq(test);
	struct task_group *tg = sched_fair_test_tg(test, SFT_CONTRIB);
	struct cfs_rq *cfs_rq = sched_fair_test_group_cfs_rq(test, rq, tg, SFT_CONTRIB);
	struct sched_entity *se = sched_fair_test_se(test, cfs_rq, 0);

	sched_fair_test_need_rate_limit_past(test);
	cfs_rq->avg.last_update_time = SFT_PELT_NOW - 64 * NSEC_PER_MSEC;

	sched_fair_test_rq_lock(rq);
	update_load_avg(cfs_rq, se, UPDATE_TG);
	sched_fair_test_rq_unlock(rq);

	KUNIT_ASSERT_LT_MSG(test, cfs_rq->avg.load_avg, SFT_CONTRIB / 2,
			    "the cfs_rq's load did not decay");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)cfs_rq->avg.load_avg,
			    "the decay seen by an UPDATE_TG update did not reach the group's load_avg");
}

/*
 * An idle group's cfs_rq, 64 ms (61 PELT periods, nearly two half-lives)
 * after its last update: the blocked-load update decays it to a little
 * over a quarter and passes the change on to the group.
 */
static void sched_fair_test_child_tg_blocked_decay_propagated(struct kunit *test)
{
	struct rq *rq = sched_fair_test_pelt_rq(test);
	struct task_group *tg = sched_fair_test_tg(test, SFT_CONTRIB);
	struct cfs_rq *cfs_rq = sched_fair_test_group_cfs_rq(test, rq, tg, SFT_CONTRIB);
	bool done = true;

	/*
	 * No entity of the group on this CPU: nothing above the cfs_rq to
	 * propagate to. With tg->parent NULL, list_add_leaf_cfs_rq() puts
	 * the fake cfs_rq on the fake runqueue's list alone.
	 */
	tg->se = kunit_kcalloc(test, nr_cpu_ids, sizeof(*tg->se), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tg->se);
	sched_fair_test_need_rate_limit_past(test);
	cfs_rq->avg.last_update_time = SFT_PELT_NOW - 64 * NSEC_PER_MSEC;
	sched_fair_test_rq_lock(rq);
	list_add_leaf_cfs_rq(cfs_rq);
	__update_blocked_fair(rq, &done);
	sched_fair_test_rq_unlock(rq);

	KUNIT_ASSERT_LT_MSG(test, cfs_rq->avg.load_avg, SFT_CONTRIB / 2,
			    "the idle cfs_rq's load did not decay");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)cfs_rq->avg.load_avg,
			    "the decay of an idle cfs_rq did not reach the group's load_avg");
}

static struct kunit_case sched_fair_tg_load_avg_cases[] = {
	SFT_CASE(root_tg_update_skipped),
#if SFT_HAVE_CLEAR
	SFT_CASE(root_tg_clear_skipped),
#endif
	SFT_CASE(child_tg_update_propagated),
#if SFT_HAVE_CLEAR
	SFT_CASE(child_tg_clear_taken_out),
#endif
	SFT_CASE(child_tg_enqueue_attach_propagated),
	SFT_CASE(child_tg_attach_propagated),
	SFT_CASE(child_tg_detach_propagated),
	SFT_CASE(child_tg_dequeue_detach_propagated),
	SFT_CASE(child_tg_decay_on_update_propagated),
	SFT_CASE(child_tg_blocked_decay_propagated),
	{}
};

static struct kunit_suite sched_fair_tg_load_avg_suite = {
	.name = "sched_fair_tg_load_avg",
	.test_cases = sched_fair_tg_load_avg_cases,
};

kunit_test_suite(sched_fair_tg_load_avg_suite);

#endif /* CONFIG_FAIR_GROUP_SCHED */

/* A zeroed runqueue of our own, attached to a zeroed root domain. */
static struct rq *sched_fair_test_rq(struct kunit *test)
{
	struct rq *rq = kunit_kzalloc(test, sizeof(*rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rq);
	rq->rd = kunit_kzalloc(test, sizeof(*rq->rd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rq->rd);
#ifdef CONFIG_CPUMASK_OFFSTACK
	/* An empty span, not a NULL one, for what reads it (a tracepoint's probe). */
	rq->rd->span = kunit_kzalloc(test, cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rq->rd->span);
#endif
	/* A housekeeping CPU: no NO_HZ_FULL tick dependency is touched. */
	rq->cpu = cpumask_first_and(housekeeping_cpumask(HK_TYPE_TICK), cpu_online_mask);
	return rq;
}

static void sched_fair_test_set_not_on_first_task(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);

	add_nr_running(rq, 1);

	KUNIT_EXPECT_FALSE_MSG(test, get_rd_overloaded(rq->rd),
			       "one task on a runqueue marked the root domain overloaded");
}

static void sched_fair_test_set_on_second_task(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);

	add_nr_running(rq, 1);
	add_nr_running(rq, 1);

	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "a runqueue going from 1 to 2 tasks did not mark the root domain overloaded");
}

static void sched_fair_test_set_on_two_at_once(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);

	add_nr_running(rq, 2);

	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "a runqueue going from 0 to 2 tasks did not mark the root domain overloaded");
}

static struct kunit_case sched_fair_overload_set_cases[] = {
	SFT_CASE(set_not_on_first_task),
	SFT_CASE(set_on_second_task),
	SFT_CASE(set_on_two_at_once),
	{}
};

static struct kunit_suite sched_fair_overload_set_suite = {
	.name = "sched_fair_overload_set",
	.test_cases = sched_fair_overload_set_cases,
};

/*
 * A fake domain, root or child, and its groups, plus a runqueue of our
 * own whose root domain the statistics pass writes. A group's capacity
 * is not due for an update (next_update is far ahead) unless a case
 * makes it so.
 */
struct sched_fair_test_lb {
	struct sched_domain *sd;
	struct rq *dst_rq;
	struct lb_env env;
	struct sd_lb_stats sds;
};

static struct sched_fair_test_lb *
sched_fair_test_domain(struct kunit *test, bool root, int dst_cpu)
{
	struct sched_fair_test_lb *lb = kunit_kzalloc(test, sizeof(*lb), GFP_KERNEL);
	struct sched_domain *parent;
	struct cpumask *cpus;

	KUNIT_ASSERT_NOT_NULL(test, lb);
	lb->sd = kunit_kzalloc(test, sizeof(*lb->sd) + cpumask_size(), GFP_KERNEL);
	cpus = kunit_kzalloc(test, cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lb->sd);
	KUNIT_ASSERT_NOT_NULL(test, cpus);
	lb->dst_rq = sched_fair_test_rq(test);
	lb->sd->imbalance_pct = 117;
	if (!root) {
		/* Any parent makes this a child domain. */
		parent = kunit_kzalloc(test, sizeof(*parent), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, parent);
		/* Not yet seen by any reader: no barrier needed. */
		RCU_INIT_POINTER(lb->sd->parent, parent);
	}
	lb->env = (struct lb_env){
		.sd = lb->sd,
		.dst_cpu = dst_cpu,
		.dst_rq = lb->dst_rq,
		.idle = CPU_NEWLY_IDLE,
		.cpus = cpus,
	};
	return lb;
}

/* Append to @sd a group of the CPUs of @span, the first of them its asym_prefer_cpu. */
static struct sched_group *sched_fair_test_sd_group(struct kunit *test, struct sched_domain *sd,
						    const struct cpumask *span)
{
	struct sched_group *sg = kunit_kzalloc(test, sizeof(*sg) + cpumask_size(), GFP_KERNEL);
	struct sched_group *last;

	KUNIT_ASSERT_NOT_NULL(test, sg);
	sg->sgc = kunit_kzalloc(test, sizeof(*sg->sgc) + cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sg->sgc);
	cpumask_copy(sched_group_span(sg), span);
	cpumask_copy(group_balance_mask(sg), span);
	sg->group_weight = cpumask_weight(span);
	sg->asym_prefer_cpu = cpumask_first(span);
	sg->sgc->capacity = SCHED_CAPACITY_SCALE * sg->group_weight;
	sg->sgc->min_capacity = SCHED_CAPACITY_SCALE;
	sg->sgc->max_capacity = SCHED_CAPACITY_SCALE;
	sg->sgc->next_update = jiffies + 1000 * HZ;

	cpumask_or(sched_domain_span(sd), sched_domain_span(sd), span);
	sd->span_weight = cpumask_weight(sched_domain_span(sd));
	if (!sd->groups) {
		sd->groups = sg;
		sg->next = sg;
		return sg;
	}
	for (last = sd->groups; last->next != sd->groups; last = last->next)
		;
	last->next = sg;
	sg->next = sd->groups;
	return sg;
}

/*
 * One update_sd_lb_stats() pass over a domain of one group, the first
 * active CPU, with env->cpus empty so that the pass reads no live runqueue
 * and finds nothing overloaded: what is left to see is whether the pass
 * writes the indicator. The flag is @flag before the pass; returns it
 * after.
 *
 * The local group's capacity is due for an update, and the domain has a
 * fake child of one group: update_group_capacity() sums that group's
 * capacity and writes only the fake domain's, never the live runqueue's
 * cpu_capacity, whatever jiffies reads.
 */
static bool sched_fair_test_empty_pass(struct kunit *test, bool root, bool flag)
{
	int cpu = cpumask_first(cpu_active_mask);
	struct sched_fair_test_lb *lb = sched_fair_test_domain(test, root, cpu);
	struct sched_domain *child = kunit_kzalloc(test, sizeof(*child) + cpumask_size(),
						   GFP_KERNEL);
	struct sched_group *local;

	KUNIT_ASSERT_NOT_NULL(test, child);
	sched_fair_test_sd_group(test, child, cpumask_of(cpu));
	/* Not yet seen by any reader: no barrier needed. */
	RCU_INIT_POINTER(child->parent, lb->sd);
	RCU_INIT_POINTER(lb->sd->child, child);
	/* The local group, not added to env->cpus; its capacity is due. */
	local = sched_fair_test_sd_group(test, lb->sd, cpumask_of(cpu));
	local->sgc->next_update = jiffies;
	set_rd_overloaded(lb->dst_rq->rd, flag);
	init_sd_lb_stats(&lb->sds);
	rcu_read_lock();
	update_sd_lb_stats(&lb->env, &lb->sds);
	rcu_read_unlock();
	return get_rd_overloaded(lb->dst_rq->rd);
}

static void sched_fair_test_root_pass_clears(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, sched_fair_test_empty_pass(test, true, true),
			       "a top-level pass that found nothing overloaded left the flag set");
}

static void sched_fair_test_child_pass_leaves_flag(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, sched_fair_test_empty_pass(test, false, true),
			      "a pass below the top level cleared the flag");
}

static struct kunit_case sched_fair_overload_clear_cases[] = {
	SFT_CASE(root_pass_clears),
	SFT_CASE(child_pass_leaves_flag),
	{}
};

static struct kunit_suite sched_fair_overload_clear_suite = {
	.name = "sched_fair_overload_clear",
	.test_cases = sched_fair_overload_clear_cases,
};

kunit_test_suites(&sched_fair_overload_set_suite, &sched_fair_overload_clear_suite);

#endif
