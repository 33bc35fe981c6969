/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests need from the kernel line they are built in: Linux
 * 7.1.y. The same fair_kunit.c is kept for other lines, each with its
 * own copy of this header; 7.1's differs from 6.19's in the name of
 * nohz's blocked-load flag and in what the newly-idle balance reads.
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
 *  - nohz's "some idle CPU has blocked load" is has_blocked_load
 *    (SFT_NOHZ_HAS_BLOCKED); 6.19 calls it has_blocked.
 *  - After a newly-idle balance, sched_balance_newidle() reads the
 *    runqueue's CFS tasks (cfs.h_nr_queued) and whether a class above
 *    fair was enqueued while the lock was dropped (rq->next_class, which
 *    rq_modified_begin() lowers to fair before the lock is dropped, so a
 *    mark from before does not count: SFT_NI_OTHER_RESTARTS is 0).
 *    Before it balances it refreshes this runqueue's blocked load, which
 *    reads rq->donor and the PELT clocks and averages.
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
#define SFT_NOHZ_HAS_BLOCKED	has_blocked_load

/*
 * One update_sg_lb_stats() call for its group statistics alone: its
 * last parameters here are bool *sg_overloaded.
 */
#define SFT_SG_LB_STATS(env, sds, sg, sgs)				\
	update_sg_lb_stats(env, sds, sg, sgs, &(bool){ false })

/* Run @fn(@ctx) when the case ends, pass or fail; at once on error. */
static int sched_fair_test_defer(struct kunit *test, void (*fn)(void *), void *ctx)
{
	return kunit_add_action_or_reset(test, fn, ctx);
}

#define SFT_NI_OTHER_RESTARTS	0

/*
 * The fake runqueue of model_newidle_*: what a balance leaves on it, a
 * CFS task and a class-above-fair mark from before the balance; and what
 * the blocked-load refresh of it reads: the donor (this thread) and PELT
 * averages that do not decay (clock_pelt and clock_task are 0 as their
 * last updates; the IRQ average is updated at rq->clock), so that the
 * refresh does not call cpufreq.
 */
static void sched_fair_test_ni_rq(struct rq *rq, bool cfs, bool other)
{
	rq->cfs.h_nr_queued = cfs;
	rq->nr_running = cfs + other;
	rq->next_class = other ? &rt_sched_class : &fair_sched_class;
	RCU_INIT_POINTER(rq->donor, current);
#ifdef CONFIG_HAVE_SCHED_AVG_IRQ
	rq->avg_irq.last_update_time = rq->clock;
#endif
}

#endif /* _KERNEL_SCHED_TESTS_FAIR_KUNIT_H */
