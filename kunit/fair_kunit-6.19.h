/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests need from the kernel line they are built in: Linux
 * 6.19. The same fair_kunit.c is kept for other lines, each with its own
 * copy of this header; 6.19's differs from 6.12's in what the newly-idle
 * balance reads after it balances.
 *
 *  - The overload indicator is bool root_domain::overloaded, read and
 *    written through get_rd_overloaded() and set_rd_overloaded(); the
 *    latter reads before it writes, so a recompute that finds the value
 *    unchanged does not write it (SFT_STORE_READS_FIRST).
 *  - clear_tg_load_avg() takes an offline CPU's share out of
 *    tg->load_avg (SFT_HAVE_CLEAR), and update_tg_load_avg() propagates
 *    at most once per 1 ms per cfs_rq (SFT_HAVE_RATE_LIMIT).
 *  - KUnit runs deferred actions, and knows slow cases (SFT_SPEED_SLOW).
 *  - The busy balance type is __CPU_NOT_IDLE (SFT_CPU_NOT_IDLE).
 *  - nohz's "some idle CPU has blocked load" is has_blocked
 *    (SFT_NOHZ_HAS_BLOCKED).
 *  - After a newly-idle balance, sched_balance_newidle() reads the
 *    runqueue's CFS tasks (cfs.h_nr_queued) and whether a class above
 *    fair was enqueued while the lock was dropped (rq->queue_mask, which
 *    rq_modified_clear() empties before the lock is dropped, so a mark
 *    from before does not count: SFT_NI_OTHER_RESTARTS is 0).
 */
#ifndef _KERNEL_SCHED_TESTS_FAIR_KUNIT_H
#define _KERNEL_SCHED_TESTS_FAIR_KUNIT_H

#define SFT_BACKPORT		0	/* fair_kunit.c includes this header */
#define SFT_NEEDS_SMP		0	/* built on UP kernels too */
#define SFT_RD_FLAG		overloaded
#define SFT_STORE_READS_FIRST	1
#define SFT_HAVE_CLEAR		1
#define SFT_HAVE_RATE_LIMIT	1
#define SFT_HAVE_CASE_MODULE	1	/* struct kunit_case has module_name */
#define SFT_CPU_NOT_IDLE	__CPU_NOT_IDLE	/* the busy balance type */
#define SFT_SPEED_SLOW		.attr.speed = KUNIT_SPEED_SLOW
#define SFT_NOHZ_HAS_BLOCKED	has_blocked

/*
 * One update_sg_lb_stats() call for its group statistics alone: its
 * last parameters here are bool *sg_overloaded and bool *sg_overutilized.
 */
#define SFT_SG_LB_STATS(env, sds, sg, sgs)				\
	update_sg_lb_stats(env, sds, sg, sgs, &(bool){ false }, &(bool){ false })

/* Run @fn(@ctx) when the case ends, pass or fail; at once on error. */
static int sched_fair_test_defer(struct kunit *test, void (*fn)(void *), void *ctx)
{
	return kunit_add_action_or_reset(test, fn, ctx);
}

#define SFT_NI_OTHER_RESTARTS	0

/*
 * The fake runqueue of model_newidle_*: what a balance leaves on it, a
 * CFS task and a class-above-fair mark from before the balance.
 */
static void sched_fair_test_ni_rq(struct rq *rq, bool cfs, bool other)
{
	rq->cfs.h_nr_queued = cfs;
	rq->nr_running = cfs + other;
	rq->queue_mask = other ? rt_sched_class.queue_mask : 0;
}

#endif /* _KERNEL_SCHED_TESTS_FAIR_KUNIT_H */
