/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests need from the kernel line they are built in: Linux
 * 6.1.y. The same fair_kunit.c is kept for other lines, each with its
 * own copy of this header.
 *
 *  - The overload indicator is int root_domain::overload, read and
 *    written directly (get_rd_overloaded() and set_rd_overloaded() below
 *    stand in for the accessors of v6.10, which the upstream tier uses:
 *    SFT_BACKPORT); update_sd_lb_stats() stores the recomputed value
 *    without reading it first, so only add_nr_running()'s writes are
 *    counted as writes on change (SFT_STORE_READS_FIRST is 0).
 *  - There is no clear_tg_load_avg() and no rate limit in
 *    update_tg_load_avg(): their cases are left out.
 *  - KUnit has no deferred actions: a KUnit resource whose free function
 *    runs the action stands in for them.
 *  - The busy balance type is CPU_NOT_IDLE (SFT_CPU_NOT_IDLE); CPU_IDLE is 0.
 *  - nohz's "some idle CPU has blocked load" is has_blocked
 *    (SFT_NOHZ_HAS_BLOCKED).
 *  - After a newly-idle balance, sched_balance_newidle() reads the
 *    runqueue's CFS tasks (cfs.h_nr_running) and all its tasks
 *    (nr_running): a task of a higher class there returns -1
 *    (SFT_NI_OTHER_RESTARTS).
 */
#ifndef _KERNEL_SCHED_TESTS_FAIR_KUNIT_H
#define _KERNEL_SCHED_TESTS_FAIR_KUNIT_H

#define SFT_BACKPORT		1	/* fair_kunit.c includes this header */
#define SFT_NEEDS_SMP		1	/* no root domain on UP */
#define SFT_RD_FLAG		overload
#define SFT_STORE_READS_FIRST	0
#define SFT_HAVE_CLEAR		0
#define SFT_HAVE_RATE_LIMIT	0
#define SFT_HAVE_CASE_MODULE	0	/* struct kunit_case has module_name */
#define SFT_CPU_NOT_IDLE	CPU_NOT_IDLE	/* the busy balance type */
#define SFT_SPEED_SLOW		/* no test speeds in 6.1's KUnit */
#define SFT_NOHZ_HAS_BLOCKED	has_blocked

/*
 * One update_sg_lb_stats() call for its group statistics alone: its
 * last parameters here are int *sg_status.
 */
#define SFT_SG_LB_STATS(env, sds, sg, sgs)				\
	update_sg_lb_stats(env, sds, sg, sgs, &(int){ 0 })

#ifdef CONFIG_SMP

/* The indicator's accessors of v6.10, which both tiers use. */
static inline bool get_rd_overloaded(struct root_domain *rd)
{
	return READ_ONCE(rd->overload);
}

static inline void set_rd_overloaded(struct root_domain *rd, int status)
{
	WRITE_ONCE(rd->overload, status);
}

struct sched_fair_test_deferred {
	void (*fn)(void *ctx);
	void *ctx;
};

static int sched_fair_test_deferred_init(struct kunit_resource *res, void *context)
{
	res->data = context;
	return 0;
}

static void sched_fair_test_deferred_run(struct kunit_resource *res)
{
	struct sched_fair_test_deferred *d = res->data;

	d->fn(d->ctx);
}

/* Run @fn(@ctx) when the case ends, pass or fail; at once on error. */
static int sched_fair_test_defer(struct kunit *test, void (*fn)(void *), void *ctx)
{
	struct sched_fair_test_deferred *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);

	if (d) {
		d->fn = fn;
		d->ctx = ctx;
		if (kunit_alloc_resource(test, sched_fair_test_deferred_init,
					 sched_fair_test_deferred_run, GFP_KERNEL, d))
			return 0;
	}
	fn(ctx);
	return -ENOMEM;
}

#define SFT_NI_OTHER_RESTARTS	1

/* The fake runqueue of model_newidle_*: what a balance leaves on it. */
static void sched_fair_test_ni_rq(struct rq *rq, bool cfs, bool other)
{
	rq->cfs.h_nr_running = cfs;
	rq->nr_running = cfs + other;
}

#endif /* CONFIG_SMP */

#endif /* _KERNEL_SCHED_TESTS_FAIR_KUNIT_H */
