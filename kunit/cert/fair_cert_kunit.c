// SPDX-License-Identifier: GPL-2.0
/*
 * Certification tests for the two CFS fast paths of fair_kunit.c, kept
 * out of tree to certify a backport, not for posting: they run against
 * the live scheduler, which fair_kunit.c does not touch.
 *
 *  - the indicator recomputed from real runqueues holding known tasks,
 *    of every class, in live task groups, and a misfit task;
 *  - exact write counts of root_task_group.load_avg and the indicator,
 *    from a hardware watchpoint, also under real load;
 *  - the specification as small pure functions, checked against the
 *    kernel's functions over whole input spaces, values and writes
 *    (sched_fair_model), including sched_balance_newidle() on a fake
 *    runqueue of the CPU it runs on: what it leaves behind on each of its
 *    paths (the common exit: next_balance, the blocked-load kick,
 *    idle_stamp, the return value, the lock pin);
 *  - the 1 ms rate limit of update_tg_load_avg(), on the CPU's clock, a
 *    change of exactly contrib/64 left unpropagated, a runqueue's step
 *    from two tasks to three and sub_nr_running() leaving the indicator
 *    set (sched_fair_certify).
 *
 * It is included at the end of kernel/sched/fair.c after fair_kunit.c,
 * whose fakes and definitions it uses; what differs between kernel lines
 * is in fair_kunit.h.
 *
 * Safety on a live kernel: every cfs_rq, task_group, rq, root_domain,
 * sched_domain and sched_group written here is a zeroed fake owned by the
 * test, but for one live task group, made and taken down as autogroup
 * does, that holds two of the test's kernel threads, and the real fields
 * listed below. Real runqueues are read, and written only as follows:
 *
 *  - The statistics passes read the runqueues of two real CPUs, A (the
 *    first active CPU, where the test's own thread is pinned) and B (the
 *    last active CPU, where the case pins 0 to 3 kernel threads; the
 *    recompute model adds one on A as well). Both runqueue locks are held
 *    across a pass, so that A and B hold exactly the case's tasks while
 *    the pass counts them.
 *  - A pass with another balance type than CPU_NEWLY_IDLE refreshes the
 *    capacity of its destination CPU (update_group_capacity() writes the
 *    real rq->cpu_capacity) and, where the LLC spans exactly two CPUs,
 *    that LLC's idle-scan hint (update_idle_cpu_scan() before 7.1), as
 *    the periodic balance does on that CPU.
 *  - The misfit cases set A's (one case also B's) rq->misfit_task_load
 *    under those locks, with interrupts off on A, and put the old value
 *    back before unlocking.
 *    On a topology without SD_ASYM_CPUCAPACITY, which is what these cases
 *    require, nothing else reads or writes the field: its writer,
 *    update_misfit_status(), returns early unless asymmetric capacity is
 *    active, and its readers are the load balance of asymmetric domains
 *    and the nohz kick under sd_asym_cpucapacity, which is then NULL.
 *  - root_clears_wakeup_pending sets CPU B's rq->ttwu_pending for one
 *    pass, under B's lock, where it was clear, and clears it after: a
 *    remote wakeup queued to B meanwhile loses only that hint, which
 *    idle_cpu() reads; B's wake list and its IPI are untouched.
 *  - root_task_group.load_avg is written only on a kernel without the
 *    root-group skip; the cases undo their own contribution there.
 *  - model_newidle_skip and model_newidle_balance call
 *    sched_balance_newidle() on a fake runqueue of the CPU they run on,
 *    with interrupts off. For each call they set nohz's global
 *    blocked-load state and put it back (a report of blocked load by
 *    another CPU meanwhile is kept), save and restore the NOHZ_NEWILB_KICK
 *    bit of the CPU the fake claims to be, and give the real base domain
 *    of the CPU they run on an infinite max_newidle_lb_cost, so that a
 *    balance stops there before it pulls anything to the fake. A balance
 *    refreshes the blocked load of this CPU's real runqueue (7.1: of the
 *    fake), as every newly-idle balance does.
 *  - model_newidle_balance needs a CPU that is not active: where every
 *    possible CPU is, it takes CPU B offline (remove_cpu()) for the case
 *    and brings it back when the case ends.
 *
 * The write counts use a hardware watchpoint (a wide perf breakpoint on
 * every CPU): each count is exact, not inferred from a value read later.
 *
 * The suite sched_fair_model states the set and recompute sides of the
 * indicator and the task group update as small pure functions (the
 * specification) and checks the kernel's functions against them over
 * whole input spaces, values and write counts both.
 */
#include <linux/delay.h>
#include <linux/hw_breakpoint.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/stop_machine.h>
#include <uapi/linux/sched/types.h>

#ifdef CONFIG_SMP

/* What differs between kernel lines: fair_kunit.h, one per line. */
#include "fair_kunit.h"

/* A case that may run for a second or more (where KUnit knows speeds). */
#if SFT_HAVE_CASE_MODULE
#define SFT_CASE_SLOW(test_name)					\
	{ .run_case = sched_fair_test_##test_name, .name = #test_name,	\
	  .module_name = KBUILD_MODNAME, SFT_SPEED_SLOW }
#else
#define SFT_CASE_SLOW(test_name)					\
	{ .run_case = sched_fair_test_##test_name, .name = #test_name, SFT_SPEED_SLOW }
#endif

/* ---- kernel threads that KUnit stops when the case ends --------------- */

static void sched_fair_test_kthread_stop(void *t)
{
	kthread_stop(t);
}

/*
 * A live task group below root_task_group, made without a cgroup as
 * autogroup makes its groups, for the test's own kernel threads. A thread
 * is moved in before its first wakeup, while no runqueue holds it.
 */
#define SFT_LIVE_TG_TASKS	4

struct sched_fair_test_live_tg {
	struct task_group *tg;
	struct task_struct *tasks[SFT_LIVE_TG_TASKS];
	int nr;
};

/*
 * Taken down when the case ends, after its threads: KUnit runs the
 * deferred actions last first, and the group's is deferred before any
 * thread's kthread_stop(). A stopped thread's last switch ends with
 * task_dead_fair(), which takes its load out of the group's cfs_rq; so
 * wait until each thread is off its CPU for good. That switch runs with
 * preemption off from before the thread's on_cpu is cleared, so the RCU
 * grace period sched_destroy_group() waits for also waits for it. (With
 * autogroup, do_exit() moves the thread back to its css's group, the
 * root, before that.)
 */
static void sched_fair_test_live_tg_free(void *data)
{
	struct sched_fair_test_live_tg *g = data;
	int i;

	for (i = 0; i < g->nr; i++) {
		while (READ_ONCE(g->tasks[i]->__state) != TASK_DEAD)
			usleep_range(500, 1000);
		wait_task_inactive(g->tasks[i], TASK_DEAD);
		put_task_struct(g->tasks[i]);
	}
	sched_release_group(g->tg);
	sched_destroy_group(g->tg);
}

static struct sched_fair_test_live_tg *sched_fair_test_live_tg_new(struct kunit *test)
{
	struct sched_fair_test_live_tg *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->tg = sched_create_group(&root_task_group);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(g->tg), "could not create a task group");
	/* sched/debug prints the cgroup path of a group not of autogroup. */
	g->tg->css.cgroup = root_task_group.css.cgroup;
	sched_online_group(g->tg, &root_task_group);
	KUNIT_ASSERT_EQ(test, 0, sched_fair_test_defer(test, sched_fair_test_live_tg_free, g));
	return g;
}

/* Put @t, a thread not yet woken, in @g, as sched_move_task() would. */
static void sched_fair_test_live_tg_add(struct kunit *test, struct sched_fair_test_live_tg *g,
					struct task_struct *t)
{
	struct rq_flags rf;
	struct rq *rq;

	KUNIT_ASSERT_LT(test, g->nr, SFT_LIVE_TG_TASKS);
	/* The move below is the fair class's; a BPF scheduler's is not. */
	if (t->sched_class != &fair_sched_class)
		kunit_skip(test, "precondition: kernel threads are not in the fair class here");
	get_task_struct(t);
	g->tasks[g->nr++] = t;
	rq = task_rq_lock(t, &rf);
	update_rq_clock(rq);
	t->sched_task_group = g->tg;
	task_change_group_fair(t);
	task_rq_unlock(rq, t, &rf);
}

/*
 * A thread of @fn(@data) bound to @cpu, not yet woken; KUnit stops it
 * when the case ends, pass or fail.
 */
static struct task_struct *sched_fair_test_kthread_new(struct kunit *test, int (*fn)(void *),
						       void *data, int cpu)
{
	struct task_struct *t = kthread_create(fn, data, "kunit_sched/%d", cpu);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(t), "could not create a kernel thread");
	kthread_bind(t, cpu);
	KUNIT_ASSERT_EQ(test, 0, sched_fair_test_defer(test, sched_fair_test_kthread_stop, t));
	return t;
}

/*
 * Start @fn(@data) on @cpu, in @g unless it is NULL; KUnit stops it when
 * the case ends, pass or fail.
 */
static struct task_struct *sched_fair_test_kthread_in(struct kunit *test, int (*fn)(void *),
						      void *data, int cpu,
						      struct sched_fair_test_live_tg *g)
{
	struct task_struct *t = sched_fair_test_kthread_new(test, fn, data, cpu);

	if (g)
		sched_fair_test_live_tg_add(test, g, t);
	wake_up_process(t);
	return t;
}

static void sched_fair_test_kthread(struct kunit *test, int (*fn)(void *), int cpu)
{
	sched_fair_test_kthread_in(test, fn, NULL, cpu, NULL);
}

/* Always runnable: two of these make a CPU hold two tasks. */
static int sched_fair_test_spin(void *unused)
{
	while (!kthread_should_stop())
		cond_resched();
	return 0;
}

/*
 * Always runnable, at SCHED_FIFO: a task of another class than the CFS
 * ones beside it, counted in rq->nr_running but not in rq->cfs. RT
 * throttling leaves the CFS tasks on its CPU some time to run, and to
 * stop.
 */
static int sched_fair_test_spin_rt(void *unused)
{
	sched_set_fifo_low(current);
	while (!kthread_should_stop())
		cond_resched();
	return 0;
}

/* Runs and sleeps in turn: its CPU's root cfs_rq load keeps changing. */
static int sched_fair_test_sleepy(void *unused)
{
	u64 end;

	while (!kthread_should_stop()) {
		end = ktime_get_ns() + 200 * NSEC_PER_USEC;
		while (ktime_get_ns() < end)
			cpu_relax();
		usleep_range(200, 400);
	}
	return 0;
}

/* ---- exact write counts: a hardware watchpoint on one variable -------- */

struct sched_fair_test_watch {
	struct perf_event * __percpu *bp;
	const void *addr;
	int len;		/* 1, 4 or 8 bytes */
	atomic_t writes;	/* every write to the watched bytes */
	atomic_t unchanged;	/* writes that left the value as it was */
	atomic_long_t last;	/* the value after the last write */
};

/*
 * x86 data breakpoints trap after the write, with the new value in place,
 * and return to the next instruction: every write is counted once. That
 * is not known to hold elsewhere (on arm64 the watchpoint traps before
 * the store, and the kernel steps over it only for the default overflow
 * handler, so with this one the same store would trap again and again):
 * there the cases that count writes skip, and the model cases check
 * values only.
 */
#if defined(CONFIG_HAVE_HW_BREAKPOINT) && defined(CONFIG_X86)
#define SFT_WATCH_TRAPS_AFTER_WRITE	1
#else
#define SFT_WATCH_TRAPS_AFTER_WRITE	0
#endif

#if SFT_WATCH_TRAPS_AFTER_WRITE
static long sched_fair_test_watch_value(const struct sched_fair_test_watch *w)
{
	if (w->len == 1)
		return READ_ONCE(*(const u8 *)w->addr);
	if (w->len == 4)
		return READ_ONCE(*(const u32 *)w->addr);
	return READ_ONCE(*(const long *)w->addr);
}

/* x86 data breakpoints trap after the write: the new value is in place. */
static void sched_fair_test_watch_hit(struct perf_event *bp,
				      struct perf_sample_data *data,
				      struct pt_regs *regs)
{
	struct sched_fair_test_watch *w = bp->overflow_handler_context;
	long now = sched_fair_test_watch_value(w);

	atomic_inc(&w->writes);
	if (atomic_long_xchg(&w->last, now) == now)
		atomic_inc(&w->unchanged);
}

static void sched_fair_test_watch_stop(void *data)
{
	struct sched_fair_test_watch *w = data;

	if (w && w->bp)
		unregister_wide_hw_breakpoint(w->bp);
	if (w)
		w->bp = NULL;
}

/*
 * Count every write, on any CPU, to the @len bytes at @addr until
 * sched_fair_test_watch_stop() or the end of the case.
 */
static struct sched_fair_test_watch *
sched_fair_test_watch(struct kunit *test, const void *addr, int len)
{
	struct sched_fair_test_watch *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->addr = addr;
	w->len = len;
	atomic_long_set(&w->last, sched_fair_test_watch_value(w));
	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)addr;
	attr.bp_len = len == 1 ? HW_BREAKPOINT_LEN_1 :
		      len == 4 ? HW_BREAKPOINT_LEN_4 : HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_W;
	bp = register_wide_hw_breakpoint(&attr, sched_fair_test_watch_hit, w);
	if (IS_ERR_OR_NULL(bp))
		kunit_skip(test, "cannot set a write watchpoint: %ld", PTR_ERR(bp));
	w->bp = bp;
	KUNIT_ASSERT_EQ(test, 0, sched_fair_test_defer(test, sched_fair_test_watch_stop, w));
	return w;
}
#else
static void sched_fair_test_watch_stop(void *data)
{
}

static struct sched_fair_test_watch *
sched_fair_test_watch(struct kunit *test, const void *addr, int len)
{
	kunit_skip(test, "needs x86 write watchpoints (trap after the write) to count writes");
	return NULL;
}
#endif

/* The watchpoint's counts now, to take differences from. */
static void sched_fair_test_mark(struct sched_fair_test_watch *w, int mark[2])
{
	mark[0] = w ? atomic_read(&w->writes) : 0;
	mark[1] = w ? atomic_read(&w->unchanged) : 0;
}

/* ---- what the upstream tier leaves out: tuning, clocks, non-events ----- */

/* A change of exactly contrib/64 is below update_tg_load_avg()'s threshold. */
#define SFT_STEP	(SFT_CONTRIB / 64)

/*
 * A change of exactly contrib/64, up or down, is not propagated: the
 * threshold's tuning, which the upstream tier does not pin.
 */
static void sched_fair_test_child_tg_below_threshold_kept(struct kunit *test)
{
	struct task_group *tg_up = sched_fair_test_tg(test, 0);
	struct task_group *tg_down = sched_fair_test_tg(test, 0);
	struct cfs_rq *up = sched_fair_test_cfs_rq(test, tg_up, SFT_CONTRIB,
						   SFT_CONTRIB + SFT_STEP);
	struct cfs_rq *down = sched_fair_test_cfs_rq(test, tg_down, SFT_CONTRIB,
						     SFT_CONTRIB - SFT_STEP);

	sched_fair_test_need_rate_limit_past(test);
	sched_fair_test_update(up);
	sched_fair_test_update(down);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg_up->load_avg), 0L,
			    "a change of exactly +contrib/64 was propagated");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg_down->load_avg), 0L,
			    "a change of exactly -contrib/64 was propagated");
	KUNIT_EXPECT_EQ_MSG(test, up->tg_load_avg_contrib, SFT_CONTRIB,
			    "contrib moved on a change of +contrib/64");
	KUNIT_EXPECT_EQ_MSG(test, down->tg_load_avg_contrib, SFT_CONTRIB,
			    "contrib moved on a change of -contrib/64");
}

#if SFT_HAVE_RATE_LIMIT
/*
 * Two updates of one cfs_rq within the 1 ms window: the second is not
 * propagated. The window is the cfs_rq's CPU's sched_clock_cpu(), which
 * keeps running while the host does not run this vCPU; a try whose two
 * calls were not within 1 ms of it is not a try, and is made again.
 */
static void sched_fair_test_child_tg_rate_limited(struct kunit *test)
{
	struct task_group *tg;
	struct cfs_rq *cfs_rq;
	unsigned long flags;
	u64 start, took = 0;
	int tries = 0;

	do {
		if (tries++ == 20)
			kunit_skip(test, "precondition: 20 tries, none within 1 ms (last %llu ns)",
				   took);
		tg = sched_fair_test_tg(test, 0);
		cfs_rq = sched_fair_test_cfs_rq(test, tg, SFT_CONTRIB, 2 * SFT_CONTRIB);
		local_irq_save(flags);
		start = sched_clock_cpu(cpu_of(cfs_rq->rq));
		update_tg_load_avg(cfs_rq);
		cfs_rq->avg.load_avg = 3 * SFT_CONTRIB;
		update_tg_load_avg(cfs_rq);
		took = sched_clock_cpu(cpu_of(cfs_rq->rq)) - start;
		local_irq_restore(flags);
	} while (took >= NSEC_PER_MSEC);

	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&tg->load_avg), (long)SFT_CONTRIB,
			    "expected the first update only; the second came within 1 ms");
	KUNIT_EXPECT_EQ_MSG(test, cfs_rq->tg_load_avg_contrib, 2 * SFT_CONTRIB,
			    "tg_load_avg_contrib moved twice within 1 ms");
}
#endif

/* sub_nr_running() leaves the indicator to the balance pass that recomputes it. */
static void sched_fair_test_sub_never_clears(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);

	add_nr_running(rq, 2);
	sub_nr_running(rq, 1);
	sub_nr_running(rq, 1);

	KUNIT_EXPECT_EQ_MSG(test, rq->nr_running, 0U, "fake runqueue count is off");
	KUNIT_EXPECT_TRUE_MSG(test, get_rd_overloaded(rq->rd),
			      "sub_nr_running() cleared the flag; only a root-domain balance pass may");
}

static void sched_fair_test_set_only_on_transition(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);

	add_nr_running(rq, 2);
	/* A balance pass found nothing to pull and cleared the flag. */
	set_rd_overloaded(rq->rd, 0);
	add_nr_running(rq, 1);

	KUNIT_EXPECT_FALSE_MSG(test, get_rd_overloaded(rq->rd),
			       "2 -> 3 tasks set the flag again: it should be set on the <2 -> >=2 transition only");
}

static struct kunit_case sched_fair_certify_cases[] = {
	SFT_CASE(child_tg_below_threshold_kept),
#if SFT_HAVE_RATE_LIMIT
	SFT_CASE(child_tg_rate_limited),
#endif
	SFT_CASE(set_only_on_transition),
	SFT_CASE(sub_never_clears),
	{}
};

static struct kunit_suite sched_fair_certify_suite = {
	.name = "sched_fair_certify",
	.test_cases = sched_fair_certify_cases,
};

/* ---- the root domain's overload indicator, recompute side ------------- */

/* A group of the CPUs of @span appended to @lb's domain; the pass balances them. */
static void sched_fair_test_group(struct kunit *test, struct sched_fair_test_lb *lb,
				  const struct cpumask *span)
{
	sched_fair_test_sd_group(test, lb->sd, span);
	cpumask_or(lb->env.cpus, lb->env.cpus, span);
}

/* The two CPUs of the statistics cases: see the top of the file. */
static int sched_fair_test_cpu_a(void)
{
	return cpumask_first(cpu_active_mask);
}

static int sched_fair_test_cpu_b(void)
{
	return cpumask_last(cpu_active_mask);
}

/*
 * Pin the test's thread to CPU A and put @nr_b always-runnable threads
 * on CPU B, so that A holds one task (this one) and B @nr_b.
 */
static void sched_fair_test_load(struct kunit *test, int nr_b)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	int i;

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	KUNIT_ASSERT_EQ(test, raw_smp_processor_id(), a);
	for (i = 0; i < nr_b; i++)
		sched_fair_test_kthread(test, sched_fair_test_spin, b);
}

/*
 * How long a pass waits for its task counts. A task that wakes on CPU B
 * while B's SCHED_FIFO spinner runs (a kworker) waits there until RT
 * throttling stops the spinner, up to 0.95 s of each second: on 6.1 a
 * wait of 500 tries (0.25-0.5 s) ran out in 1 of 5 boots. Three RT
 * periods, so that such a task gets two chances to run and leave.
 */
#define SFT_PASS_WAIT_NS	(3 * NSEC_PER_SEC)

/*
 * Call @fn(@ctx) at a moment when CPU A holds exactly @nr_a tasks and CPU
 * B exactly @nr_b: both runqueue locks are held across the call, so the
 * counts cannot change under it. Another task visiting either CPU (a
 * kworker, say) makes it try again. A's misfit_task_load reads @misfit_a
 * during the call, and B's @misfit_b (SFT_MISFIT_LIVE: B's is not touched).
 */
#define SFT_MISFIT_LIVE		ULONG_MAX

static void sched_fair_test_at(struct kunit *test, unsigned int nr_a, unsigned int nr_b,
			       unsigned long misfit_a, unsigned long misfit_b,
			       void (*fn)(void *ctx), void *ctx)
{
	struct rq *rq_a = cpu_rq(sched_fair_test_cpu_a());
	struct rq *rq_b = cpu_rq(sched_fair_test_cpu_b());
	unsigned int seen_a = 0, seen_b = 0;
	unsigned int max_seen;
	unsigned long irqflags, saved_a, saved_b;
	u64 end = ktime_get_ns() + SFT_PASS_WAIT_NS;
	bool done = false;
	int tries;

	for (tries = 0; !done && (!tries || ktime_get_ns() < end); tries++) {
		if (tries)
			usleep_range(500, 1000);
		local_irq_save(irqflags);
		double_rq_lock(rq_a, rq_b);
		seen_a = rq_a->nr_running;
		seen_b = rq_b->nr_running;
		done = seen_a == nr_a && seen_b == nr_b;
		if (done) {
			saved_a = rq_a->misfit_task_load;
			saved_b = rq_b->misfit_task_load;
			if (misfit_a != saved_a)
				rq_a->misfit_task_load = misfit_a;
			if (misfit_b != SFT_MISFIT_LIVE && misfit_b != saved_b)
				rq_b->misfit_task_load = misfit_b;
			rcu_read_lock();
			fn(ctx);
			rcu_read_unlock();
			if (misfit_a != saved_a)
				rq_a->misfit_task_load = saved_a;
			if (misfit_b != SFT_MISFIT_LIVE && misfit_b != saved_b)
				rq_b->misfit_task_load = saved_b;
		}
		double_rq_unlock(rq_a, rq_b);
		local_irq_restore(irqflags);
	}
	/*
	 * The precondition, not the mechanism: say so and skip the case;
	 * unless a CPU counts more tasks than the system has, which is a
	 * count gone wrong, not a busy CPU.
	 */
	max_seen = max(seen_a, seen_b);
	KUNIT_ASSERT_LE_MSG(test, max_seen, (unsigned int)nr_threads,
			    "CPUs %d, %d count %u, %u tasks; the system has %d",
			    cpu_of(rq_a), cpu_of(rq_b), seen_a, seen_b, nr_threads);
	if (!done)
		kunit_skip(test,
			   "precondition: CPUs %d, %d never had %u, %u tasks (%d tries in %llu ms; last %u, %u)",
			   cpu_of(rq_a), cpu_of(rq_b), nr_a, nr_b, tries,
			   (unsigned long long)(SFT_PASS_WAIT_NS / NSEC_PER_MSEC), seen_a, seen_b);
}

struct sched_fair_test_pass_args {
	struct sched_fair_test_lb *lb;
	bool flag;
	struct sched_fair_test_watch *w;
	int *mark;
};

static void sched_fair_test_pass_locked(void *ctx)
{
	struct sched_fair_test_pass_args *p = ctx;

	set_rd_overloaded(p->lb->dst_rq->rd, p->flag);
	if (p->mark)
		sched_fair_test_mark(p->w, p->mark);
	init_sd_lb_stats(&p->lb->sds);
	update_sd_lb_stats(&p->lb->env, &p->lb->sds);
}

/*
 * One update_sd_lb_stats() pass with the fake root domain's flag first
 * set to @flag, at a moment when CPU A holds exactly @nr_a tasks and CPU
 * B exactly @nr_b (sched_fair_test_at()); A's misfit_task_load reads
 * @misfit during the pass. With @w, @mark gets its counts from just
 * before the pass. Returns the flag after the pass.
 */
static bool sched_fair_test_pass(struct kunit *test, struct sched_fair_test_lb *lb,
				 unsigned int nr_a, unsigned int nr_b, unsigned long misfit,
				 bool flag, struct sched_fair_test_watch *w, int mark[2])
{
	struct sched_fair_test_pass_args p = { .lb = lb, .flag = flag, .w = w, .mark = mark };

	sched_fair_test_at(test, nr_a, nr_b, misfit, SFT_MISFIT_LIVE, sched_fair_test_pass_locked,
			   &p);
	return get_rd_overloaded(lb->dst_rq->rd);
}

/* A group of CPUs @a and @b, @a its asym_prefer_cpu. */
static void sched_fair_test_group_of_two(struct kunit *test, struct sched_fair_test_lb *lb,
					 int a, int b)
{
	struct cpumask *span = kunit_kzalloc(test, cpumask_size(), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, span);
	cpumask_set_cpu(a, span);
	cpumask_set_cpu(b, span);
	sched_fair_test_group(test, lb, span);
}

/*
 * A domain, root or child, with @flags, of two one-CPU groups, the local
 * group first: {A} then {B}, or {B} then {A} with @b_local. B holds @nr_b
 * tasks, A one; A's misfit_task_load reads @misfit during the pass. The
 * flag is @flag before the pass; returns the flag after it.
 */
static bool sched_fair_test_two_groups(struct kunit *test, bool root, int flags, bool b_local,
				       unsigned int nr_b, unsigned long misfit, bool flag)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	int local = b_local ? b : a, other = b_local ? a : b;
	struct sched_fair_test_lb *lb = sched_fair_test_domain(test, root, local);

	lb->sd->flags = flags;
	sched_fair_test_group(test, lb, cpumask_of(local));
	sched_fair_test_group(test, lb, cpumask_of(other));
	sched_fair_test_load(test, nr_b);
	return sched_fair_test_pass(test, lb, 1, nr_b, misfit, flag, NULL, NULL);
}

/* Root domain, groups {A} (local) and {B}: B idle, A with one task. */
static void sched_fair_test_root_clears(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, sched_fair_test_two_groups(test, true, 0, false, 0, 0, true),
			       "a root-domain pass over CPUs with 1 and 0 tasks left the flag set");
}

/* Root domain, groups {A} (local) and {B}: B, a remote group, has two. */
static void sched_fair_test_root_sets_for_remote_group(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, sched_fair_test_two_groups(test, true, 0, false, 2, 0, false),
			      "a remote group whose CPU has two tasks did not set the flag");
}

/* Root domain, groups {B} (local, first) and {A} (last): B has two. */
static void sched_fair_test_root_sets_for_local_group(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, sched_fair_test_two_groups(test, true, 0, true, 2, 0, false),
			      "the local group, first of two, has a CPU with two tasks: flag not set");
}

struct sched_fair_test_pending_args {
	struct sched_fair_test_pass_args pass;
	struct rq *rq_b;
};

/* A pass while B's ttwu_pending says a wakeup is queued to it. */
static void sched_fair_test_pass_pending_locked(void *ctx)
{
	struct sched_fair_test_pending_args *p = ctx;
	bool set = !READ_ONCE(p->rq_b->ttwu_pending);

	if (set)
		WRITE_ONCE(p->rq_b->ttwu_pending, 1);
	sched_fair_test_pass_locked(&p->pass);
	if (set)
		WRITE_ONCE(p->rq_b->ttwu_pending, 0);
}

/*
 * Root domain, groups {A} (local) and {B}: B holds no task, but a wakeup
 * is queued to it (rq->ttwu_pending), so that idle_cpu() says B is not
 * idle and the pass reads on past its idle check. A CPU without a task
 * is not overloaded.
 */
static void sched_fair_test_root_clears_wakeup_pending(struct kunit *test)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct sched_fair_test_lb *lb = sched_fair_test_domain(test, true, a);
	struct sched_fair_test_pending_args p = {
		.pass = { .lb = lb, .flag = true },
		.rq_b = cpu_rq(b),
	};

	sched_fair_test_group(test, lb, cpumask_of(a));
	sched_fair_test_group(test, lb, cpumask_of(b));
	sched_fair_test_load(test, 0);
	sched_fair_test_at(test, 1, 0, 0, SFT_MISFIT_LIVE, sched_fair_test_pass_pending_locked,
			   &p);
	KUNIT_EXPECT_FALSE_MSG(test, get_rd_overloaded(lb->dst_rq->rd),
			       "CPU B, no task and a wakeup queued to it, was taken as overloaded");
}

/* Root domain, one group {A, B}: two tasks in the group, one per CPU. */
static void sched_fair_test_one_task_per_cpu_not_overloaded(struct kunit *test)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct sched_fair_test_lb *lb = sched_fair_test_domain(test, true, a);
	bool overloaded;

	sched_fair_test_group_of_two(test, lb, a, b);
	sched_fair_test_load(test, 1);
	overloaded = sched_fair_test_pass(test, lb, 1, 1, 0, true, NULL, NULL);

	KUNIT_EXPECT_EQ_MSG(test, lb->sds.local_stat.sum_nr_running, 2U,
			    "the group statistics did not count one task on each CPU");
	KUNIT_EXPECT_FALSE_MSG(test, overloaded,
			       "a group of two CPUs with one task each was taken as overloaded");
}

static void sched_fair_test_child_keeps_set(struct kunit *test)
{
	KUNIT_EXPECT_TRUE_MSG(test, sched_fair_test_two_groups(test, false, 0, false, 0, 0, true),
			      "a child-domain pass cleared the flag: it sees only part of the root domain");
}

static void sched_fair_test_child_keeps_clear(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, sched_fair_test_two_groups(test, false, 0, false, 2, 0, false),
			       "a child-domain pass wrote the flag; only the root domain pass may");
}

/*
 * Misfit: root domain with @flags, groups {B} (local, idle) and {A}. A
 * runs one task, so only a misfit can make its group overloaded.
 */
#define SFT_MISFIT_LOAD		100UL

static bool sched_fair_test_misfit_pass(struct kunit *test, int flags,
					unsigned long misfit, bool flag)
{
	if (sched_asym_cpucap_active())
		kunit_skip(test, "asymmetric CPU capacity: misfit_task_load is live here");
	return sched_fair_test_two_groups(test, true, flags, true, 0, misfit, flag);
}

static void sched_fair_test_misfit_sets(struct kunit *test)
{
	bool overloaded = sched_fair_test_misfit_pass(test, SD_ASYM_CPUCAPACITY, 1, false);

	KUNIT_EXPECT_TRUE_MSG(test, overloaded,
			      "a misfit task on an asymmetric-capacity domain did not set the flag");
}

static void sched_fair_test_misfit_zero_not_set(struct kunit *test)
{
	bool overloaded = sched_fair_test_misfit_pass(test, SD_ASYM_CPUCAPACITY, 0, true);

	KUNIT_EXPECT_FALSE_MSG(test, overloaded,
			       "no misfit task and no CPU with two tasks, yet the flag was set");
}

static void sched_fair_test_misfit_needs_asym_capacity(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, sched_fair_test_misfit_pass(test, 0, 1, true),
			       "misfit_task_load counted on a domain without asymmetric capacity");
}

struct sched_fair_test_sg_args {
	struct sched_fair_test_lb *lb;
	struct sg_lb_stats sgs;
};

static void sched_fair_test_sg_stats_locked(void *ctx)
{
	struct sched_fair_test_sg_args *p = ctx;

	SFT_SG_LB_STATS(&p->lb->env, &p->lb->sds, p->lb->sd->groups, &p->sgs);
}

/*
 * Misfit, the group's own value: one group {A, B} on an asymmetric-capacity
 * root domain, not the local group (no pass has chosen one), A and B one
 * task each, A's misfit load twice B's. A group's misfit load is the
 * largest of its CPUs' (the busiest-group choice compares it), not the
 * last one read: A is read first.
 */
static void sched_fair_test_misfit_largest_kept(struct kunit *test)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct sched_fair_test_sg_args p = {};

	if (sched_asym_cpucap_active())
		kunit_skip(test, "asymmetric CPU capacity: misfit_task_load is live here");
	p.lb = sched_fair_test_domain(test, true, a);
	p.lb->sd->flags = SD_ASYM_CPUCAPACITY;
	p.lb->env.idle = SFT_CPU_NOT_IDLE;
	sched_fair_test_group_of_two(test, p.lb, a, b);
	init_sd_lb_stats(&p.lb->sds);
	sched_fair_test_load(test, 1);
	sched_fair_test_at(test, 1, 1, 2 * SFT_MISFIT_LOAD, SFT_MISFIT_LOAD,
			   sched_fair_test_sg_stats_locked, &p);

	KUNIT_EXPECT_EQ_MSG(test, p.sgs.group_misfit_task_load, 2 * SFT_MISFIT_LOAD,
			    "misfit loads %lu on CPU %d, then %lu on CPU %d: the group kept %lu",
			    2 * SFT_MISFIT_LOAD, a, SFT_MISFIT_LOAD, b,
			    p.sgs.group_misfit_task_load);
}

static struct kunit_case sched_fair_overload_recompute_cases[] = {
	SFT_CASE(root_clears),
	SFT_CASE(root_clears_wakeup_pending),
	SFT_CASE(root_sets_for_remote_group),
	SFT_CASE(root_sets_for_local_group),
	SFT_CASE(one_task_per_cpu_not_overloaded),
	SFT_CASE(child_keeps_set),
	SFT_CASE(child_keeps_clear),
	SFT_CASE(misfit_sets),
	SFT_CASE(misfit_zero_not_set),
	SFT_CASE(misfit_needs_asym_capacity),
	SFT_CASE(misfit_largest_kept),
	{}
};

/* Every case needs CPU B besides the test's own CPU A. */
static int sched_fair_test_two_cpus(struct kunit *test)
{
	if (num_active_cpus() < 2)
		kunit_skip(test, "needs 2 active CPUs, %u active", num_active_cpus());
	return 0;
}

static struct kunit_suite sched_fair_overload_recompute_suite = {
	.name = "sched_fair_overload_recompute",
	.init = sched_fair_test_two_cpus,
	.test_cases = sched_fair_overload_recompute_cases,
};

/* ---- every class's enqueue counts its task: add_nr_running()'s callers -- */

/*
 * Each scheduling class that enqueues a task calls add_nr_running() for
 * it (fair, RT, deadline and the stop class; sched_ext where built): the
 * indicator is set from that count, as sched_fair_model checks on a fake
 * runqueue. Here one task of a class runs on CPU B, and B's runqueue is
 * read under its lock: whenever the task is queued there, nr_running
 * counts it; and once it sleeps, B, seen idle, is seen with nr_running 0.
 * A caller that passes no count, a wrong one or another runqueue leaves
 * the count short while the task is queued, or off after it leaves.
 */

/* Samples of B while the task is queued there. */
#define SFT_QUEUED_SAMPLES	20

/*
 * Spins 2 ms and sleeps 0.5-1 ms in turn (so its class's wakeup enqueues
 * it again and again) until *@stopping, then sleeps until the case ends.
 */
static int sched_fair_test_spin_until(void *stopping)
{
	u64 end;

	while (!READ_ONCE(*(bool *)stopping) && !kthread_should_stop()) {
		end = ktime_get_ns() + 2 * NSEC_PER_MSEC;
		while (ktime_get_ns() < end)
			cond_resched();
		usleep_range(500, 1000);
	}
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

enum { SFT_CLASS_FAIR, SFT_CLASS_RT, SFT_CLASS_DL };

static const char * const sched_fair_test_class_names[] = { "CFS", "SCHED_FIFO", "SCHED_DEADLINE" };

/*
 * Is @t queued on @rq where its class counts it in nr_running? An RT
 * runqueue may be throttled and a deadline entity throttled: the task
 * stays queued but its class has taken it out of the count. Whether the
 * top RT runqueue is counted is its rt_queued, which every line sets
 * beside the add_nr_running() call and clears beside the sub.
 */
static bool sched_fair_test_counted_state(struct rq *rq, struct task_struct *t, int class)
{
	if (!task_on_rq_queued(t) || task_cpu(t) != cpu_of(rq))
		return false;
	if (class == SFT_CLASS_RT)
		return rq->rt.rt_queued;
	if (class == SFT_CLASS_DL)
		return !t->dl.dl_throttled;
	return true;
}

/*
 * Read CPU B's runqueue under its lock until @t has been seen there
 * SFT_QUEUED_SAMPLES times in a state its class counts: nr_running must
 * count it each time.
 */
static void sched_fair_test_counted_while_queued(struct kunit *test, struct task_struct *t,
						 int class)
{
	const char *what = sched_fair_test_class_names[class];
	struct rq *rq = cpu_rq(sched_fair_test_cpu_b());
	u64 end = ktime_get_ns() + SFT_PASS_WAIT_NS;
	unsigned int seen = 0, uncounted = 0;
	struct rq_flags rf;
	bool queued;

	while (seen < SFT_QUEUED_SAMPLES && ktime_get_ns() < end) {
		rq_lock_irqsave(rq, &rf);
		queued = sched_fair_test_counted_state(rq, t, class);
		/* Not counted, or a count below 0 (more tasks than there are). */
		if (queued && (!rq->nr_running || rq->nr_running > nr_threads))
			uncounted++;
		rq_unlock_irqrestore(rq, &rf);
		seen += queued;
		usleep_range(500, 1000);
	}
	if (!seen)
		kunit_skip(test,
			   "precondition: the %s thread was never seen queued on CPU %d in %llu ms",
			   what, cpu_of(rq),
			   (unsigned long long)(SFT_PASS_WAIT_NS / NSEC_PER_MSEC));
	KUNIT_EXPECT_EQ_MSG(test, uncounted, 0U,
			    "CPU %d held the queued %s thread, yet nr_running was 0 or above the system's tasks (%u of %u reads)",
			    cpu_of(rq), what, uncounted, seen);
}

/* Idle reads with another count than 0 before a case calls it a leak. */
#define SFT_IDLE_READS		5

/*
 * After @t (NULL: a stopper that has returned) has left CPU B for good:
 * B, read idle under its lock, must at some read have nr_running 0. A
 * task enqueued just before a read, whose switch is still to come (the
 * idle task marked to reschedule), is the only other way to read it idle;
 * such reads are not counted.
 */
static void sched_fair_test_count_back_to_zero(struct kunit *test, struct task_struct *t,
					       const char *what)
{
	struct rq *rq = cpu_rq(sched_fair_test_cpu_b());
	u64 end = ktime_get_ns() + SFT_PASS_WAIT_NS;
	unsigned int nr, idle_reads = 0, last = 0;
	bool idle, left = !t;
	struct rq_flags rf;

	for (;;) {
		rq_lock_irqsave(rq, &rf);
		left = left || !task_on_rq_queued(t);
		idle = task_curr(rq->idle) && !test_tsk_need_resched(rq->idle);
		nr = rq->nr_running;
		rq_unlock_irqrestore(rq, &rf);
		if (left && idle && !nr)
			return;
		if (left && idle) {
			idle_reads++;
			last = nr;
		}
		if (ktime_get_ns() >= end)
			break;
		usleep_range(500, 1000);
	}
	if (idle_reads < SFT_IDLE_READS)
		kunit_skip(test,
			   "precondition: CPU %d was read idle %u times in %llu ms after the %s thread slept",
			   cpu_of(rq), idle_reads,
			   (unsigned long long)(SFT_PASS_WAIT_NS / NSEC_PER_MSEC), what);
	KUNIT_FAIL(test,
		   "after the %s thread slept, CPU %d was read idle %u times, never with nr_running 0 (last %u)",
		   what, cpu_of(rq), idle_reads, last);
}

/*
 * A thread of @class alone on CPU B (the case's own thread on A), given
 * its class before its first wakeup: counted while queued, and B's count
 * back to 0 once it sleeps. It sleeps between runs, so its class's
 * wakeup enqueues it again and again; SCHED_DEADLINE runs 1 ms of every
 * 10 ms, so that class also dequeues and enqueues it at each throttle
 * and replenishment. sched_setattr_nocheck() admits the 10% bandwidth
 * against the root domain as any caller's; a kernel caller, unlike a
 * user, may give it to a task bound to one CPU.
 */
static void sched_fair_test_class_counted(struct kunit *test, int class)
{
	const char *what = sched_fair_test_class_names[class];
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct sched_attr dl = {
		.size = sizeof(dl),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = NSEC_PER_MSEC,
		.sched_deadline = 10 * NSEC_PER_MSEC,
		.sched_period = 10 * NSEC_PER_MSEC,
	};
	bool *stopping = kunit_kzalloc(test, sizeof(*stopping), GFP_KERNEL);
	struct task_struct *t;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, stopping);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	t = sched_fair_test_kthread_new(test, sched_fair_test_spin_until, stopping, b);
	if (class == SFT_CLASS_RT)
		sched_set_fifo_low(t);
	if (class == SFT_CLASS_DL) {
		ret = sched_setattr_nocheck(t, &dl);
		if (ret)
			kunit_skip(test, "precondition: SCHED_DEADLINE 1 ms / 10 ms refused: %d",
				   ret);
	}
	wake_up_process(t);
	sched_fair_test_counted_while_queued(test, t, class);
	WRITE_ONCE(*stopping, true);
	sched_fair_test_count_back_to_zero(test, t, what);
}

static void sched_fair_test_fair_task_counted(struct kunit *test)
{
	sched_fair_test_class_counted(test, SFT_CLASS_FAIR);
}

static void sched_fair_test_rt_task_counted(struct kunit *test)
{
	sched_fair_test_class_counted(test, SFT_CLASS_RT);
}

static void sched_fair_test_dl_task_counted(struct kunit *test)
{
	sched_fair_test_class_counted(test, SFT_CLASS_DL);
}

/* What CPU B's stopper saw of its own runqueue. */
struct sched_fair_test_stopper {
	unsigned int nr;
	bool self_queued;
};

static int sched_fair_test_stopper_read(void *data)
{
	struct sched_fair_test_stopper *s = data;
	struct rq *rq = this_rq();
	struct rq_flags rf;

	rq_lock_irqsave(rq, &rf);
	s->self_queued = task_on_rq_queued(current);
	s->nr = rq->nr_running;
	rq_unlock_irqrestore(rq, &rf);
	return 0;
}

/*
 * The stop class: CPU B's stopper, run by stop_one_cpu(), reads its own
 * runqueue, where it is queued and counted; once it is done, B's count
 * is back to 0.
 */
static void sched_fair_test_stop_task_counted(struct kunit *test)
{
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct sched_fair_test_stopper s = {};

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	KUNIT_ASSERT_EQ(test, stop_one_cpu(b, sched_fair_test_stopper_read, &s), 0);
	KUNIT_ASSERT_TRUE_MSG(test, s.self_queued, "precondition: the stopper was not queued");
	KUNIT_EXPECT_TRUE_MSG(test, s.nr >= 1 && s.nr <= nr_threads,
			      "CPU %d's stopper ran there, yet nr_running was %u", b, s.nr);
	sched_fair_test_count_back_to_zero(test, NULL, "stopper");
}

static struct kunit_case sched_fair_enqueue_count_cases[] = {
	SFT_CASE_SLOW(fair_task_counted),
	SFT_CASE_SLOW(rt_task_counted),
	SFT_CASE_SLOW(dl_task_counted),
	SFT_CASE_SLOW(stop_task_counted),
	{}
};

static struct kunit_suite sched_fair_enqueue_count_suite = {
	.name = "sched_fair_enqueue_count",
	.init = sched_fair_test_two_cpus,
	.test_cases = sched_fair_enqueue_count_cases,
};

/* ---- exact write counts ------------------------------------------------ */

/* Updating (and clearing) a root cfs_rq: not one write to the root group. */
static void sched_fair_test_root_load_avg_not_written(struct kunit *test)
{
	struct cfs_rq *up = sched_fair_test_cfs_rq(test, &root_task_group, 0, 100 * SFT_CONTRIB);
	struct cfs_rq *clr = sched_fair_test_cfs_rq(test, &root_task_group,
						    SFT_CONTRIB, SFT_CONTRIB);
	struct sched_fair_test_watch *w = sched_fair_test_watch(test, &root_task_group.load_avg, 8);

	update_tg_load_avg(up);
#if SFT_HAVE_CLEAR
	clear_tg_load_avg(clr);
#endif
	sched_fair_test_watch_stop(w);

	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->writes), 0,
			    "root_task_group.load_avg written by a root cfs_rq's update or clear");
	atomic_long_sub(up->tg_load_avg_contrib, &root_task_group.load_avg);
	atomic_long_add(SFT_CONTRIB - clr->tg_load_avg_contrib, &root_task_group.load_avg);
}

/* The control: the watchpoint sees a child group's one update. */
static void sched_fair_test_child_load_avg_written_once(struct kunit *test)
{
	struct task_group *tg = sched_fair_test_tg(test, 0);
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, tg, 0, SFT_CONTRIB);
	struct sched_fair_test_watch *w = sched_fair_test_watch(test, &tg->load_avg, 8);

	update_tg_load_avg(cfs_rq);
	sched_fair_test_watch_stop(w);

	/* A second report of one locked add finds no change: see _match_writes(). */
	KUNIT_EXPECT_GE_MSG(test, atomic_read(&w->writes), 1,
			    "the watchpoint did not see a child group's update");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->writes) - atomic_read(&w->unchanged), 1,
			    "the watchpoint did not count a child group's one update once");
}

/*
 * A real load in the root group: a thread that runs and sleeps on every
 * CPU but A for 300 ms, while a watchpoint counts the writes to
 * root_task_group.load_avg (must be none) and, for the record, to the
 * real root domain's indicator. Marked slow: starting and stopping the
 * threads took it to 3.5 s on a KASAN kernel with 8 vCPUs under TCG.
 */
static void sched_fair_test_root_load_avg_not_written_under_load(struct kunit *test)
{
	int cpu, a = sched_fair_test_cpu_a();
	struct root_domain *rd = cpu_rq(a)->rd;
	struct sched_fair_test_watch *w, *ind;

	sched_fair_test_two_cpus(test);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	w = sched_fair_test_watch(test, &root_task_group.load_avg, 8);
	ind = sched_fair_test_watch(test, &rd->SFT_RD_FLAG, sizeof(rd->SFT_RD_FLAG));
	for_each_cpu(cpu, cpu_active_mask)
		if (cpu != a)
			sched_fair_test_kthread(test, sched_fair_test_sleepy, cpu);
	msleep(300);
	sched_fair_test_watch_stop(w);
	sched_fair_test_watch_stop(ind);

	kunit_info(test, "300 ms of load on %u CPUs: root_task_group.load_avg %d writes; root domain indicator %d writes, %d leaving the value as it was\n",
		   num_active_cpus() - 1, atomic_read(&w->writes),
		   atomic_read(&ind->writes), atomic_read(&ind->unchanged));
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->writes), 0,
			    "root_task_group.load_avg was written under load");
}

/*
 * The indicator's line is written only when its value changes: every
 * path that sets it reads first, and since v6.10 so does the store of a
 * recompute, set_rd_overloaded(). Fake root domain, so the counts are
 * exact: one change (0 -> 1) from add_nr_running(), and where the store
 * reads first, a second one (1 -> 0) from it.
 */
static void sched_fair_test_indicator_written_on_change_only(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);
	struct sched_fair_test_watch *w =
		sched_fair_test_watch(test, &rq->rd->SFT_RD_FLAG, sizeof(rq->rd->SFT_RD_FLAG));
	int changes = 1;

	add_nr_running(rq, 1);		/* 0 -> 1 task: stays 0 */
	add_nr_running(rq, 1);		/* 1 -> 2: 0 -> 1, a write */
	add_nr_running(rq, 1);		/* 2 -> 3: no transition */
	sub_nr_running(rq, 3);
	add_nr_running(rq, 2);		/* 0 -> 2 while already 1: no write */
#if SFT_STORE_READS_FIRST
	{
		int i;

		for (i = 0; i < 10; i++)
			set_rd_overloaded(rq->rd, 1);
		set_rd_overloaded(rq->rd, 0);	/* 1 -> 0, a write */
		for (i = 0; i < 10; i++)
			set_rd_overloaded(rq->rd, 0);
		changes = 2;
	}
#endif
	sched_fair_test_watch_stop(w);

	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->unchanged), 0,
			    "the indicator was written with the value it already had");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&w->writes), changes,
			    "expected one write per change of the indicator");
}

static struct kunit_case sched_fair_write_count_cases[] = {
	SFT_CASE(root_load_avg_not_written),
	SFT_CASE(child_load_avg_written_once),
	SFT_CASE_SLOW(root_load_avg_not_written_under_load),
	SFT_CASE(indicator_written_on_change_only),
	{}
};

static struct kunit_suite sched_fair_write_count_suite = {
	.name = "sched_fair_write_count",
	.test_cases = sched_fair_write_count_cases,
};

/* ---- the specification as a model, checked over the input space -------- */

/*
 * Each property below states what the series specifies, as a small pure
 * function, and drives the kernel's own function over every input of a
 * small space (and a seeded pseudo-random sample of a large one), then
 * compares the two: the indicator or load_avg after the call, and, where
 * a watchpoint can be set, the number of writes the call made. A case
 * prints how many inputs it checked; a mismatch prints the input. The
 * seed is random unless sched_fair_test_seed=N is on the kernel command
 * line, which replays a run.
 */
static unsigned int sft_seed;
/*
 * A core parameter: module_param()'s MODULE_INFO() is a static_assert()
 * on __builtin_strlen() in 6.19 and 7.1, which sparse 0.6.4 takes for a bad
 * constant expression.
 */
core_param(sched_fair_test_seed, sft_seed, uint, 0444);

struct sched_fair_test_check {
	struct kunit *test;
	const char *what;
	unsigned int inputs, checked, mismatches;
	u32 seed;
	struct rnd_state rnd;
};

static void sched_fair_test_check_init(struct kunit *test, struct sched_fair_test_check *c,
				       const char *what)
{
	c->test = test;
	c->what = what;
	c->inputs = 0;
	c->checked = 0;
	c->mismatches = 0;
	c->seed = sft_seed ?: get_random_u32() ?: 1;
	prandom_seed_state(&c->rnd, c->seed);
}

/* A random number in [lo, hi]. */
static u32 sched_fair_test_rand(struct sched_fair_test_check *c, u32 lo, u32 hi)
{
	return lo + prandom_u32_state(&c->rnd) % (hi - lo + 1);
}

static void sched_fair_test_check_end(struct sched_fair_test_check *c)
{
	kunit_info(c->test, "%s: checked %u cases (%u comparisons), %u mismatches, seed %u\n",
		   c->what, c->inputs, c->checked, c->mismatches, c->seed);
	KUNIT_EXPECT_EQ_MSG(c->test, c->mismatches, 0U,
			    "%s: the kernel and the model disagree (sched_fair_test_seed=%u replays)",
			    c->what, c->seed);
}

/*
 * What a model case whose writes a watchpoint @w counts (NULL: none)
 * does last: stop the watchpoint, then the tally.
 */
static void sched_fair_test_model_end(struct sched_fair_test_check *c,
				      struct sched_fair_test_watch *w)
{
	sched_fair_test_watch_stop(w);
	if (!w)
		kunit_info(c->test, "writes not counted: no write watchpoint of known semantics here\n");
	sched_fair_test_check_end(c);
}

/* One comparison of @name; the first few mismatches print their input. */
static __printf(5, 6) void sched_fair_test_match(struct sched_fair_test_check *c,
						 const char *name, long got, long want,
						 const char *fmt, ...)
{
	char input[192];
	va_list args;

	c->checked++;
	if (got == want || c->mismatches++ >= 8)
		return;
	va_start(args, fmt);
	vsnprintf(input, sizeof(input), fmt, args);
	va_end(args);
	kunit_err(c->test, "%s: %s is %ld, the model says %ld; %s\n",
		  c->what, name, got, want, input);
}

/*
 * Compare the writes @w saw since @mark with the model's: @want_write, a
 * write is expected at all; @want_change, one that changes the value.
 * Under QEMU TCG a locked add is now and then reported twice (4 of 2212
 * calls in one of five boots); the second report finds the value as the
 * first left it, so it is a write but not a change.
 */
static __printf(6, 7) void sched_fair_test_match_writes(struct sched_fair_test_check *c,
							struct sched_fair_test_watch *w,
							const int mark[2], bool want_write,
							bool want_change, const char *fmt, ...)
{
	int writes, changes;
	char input[128];
	va_list args;

	if (!w)
		return;
	writes = atomic_read(&w->writes) - mark[0];
	changes = writes - (atomic_read(&w->unchanged) - mark[1]);
	va_start(args, fmt);
	vsnprintf(input, sizeof(input), fmt, args);
	va_end(args);
	sched_fair_test_match(c, "whether it wrote", writes > 0, want_write, "%s", input);
	sched_fair_test_match(c, "writes that changed it", changes, want_change, "%s", input);
}

/*
 * Model of the set side: add_nr_running() marks the root domain
 * overloaded iff its runqueue goes from fewer than 2 tasks to 2 or more;
 * sub_nr_running() never touches the mark; a write happens only when
 * the mark changes (it is read first).
 */
static bool sched_fair_test_model_add(unsigned int prev, unsigned int count, bool flag)
{
	return flag || (prev < 2 && prev + count >= 2);
}

/* One add (@add) or sub of @count on @rq holding @prev tasks, flag @flag. */
static void sched_fair_test_set_step(struct sched_fair_test_check *c, struct rq *rq,
				     struct sched_fair_test_watch *w, bool add,
				     unsigned int prev, unsigned int count, bool flag)
{
	bool want = add ? sched_fair_test_model_add(prev, count, flag) : flag;
	int mark[2];

	c->inputs++;
	rq->nr_running = prev;
	if (get_rd_overloaded(rq->rd) != flag)
		rq->rd->SFT_RD_FLAG = flag;
	sched_fair_test_mark(w, mark);
	if (add)
		add_nr_running(rq, count);
	else
		sub_nr_running(rq, count);
	sched_fair_test_match(c, "the flag", get_rd_overloaded(rq->rd), want,
			      "%s_nr_running(%u) at %u tasks, flag %d",
			      add ? "add" : "sub", count, prev, flag);
	sched_fair_test_match(c, "nr_running", rq->nr_running, add ? prev + count : prev - count,
			      "%s_nr_running(%u) at %u tasks", add ? "add" : "sub", count, prev);
	sched_fair_test_match_writes(c, w, mark, want != flag, want != flag,
				     "the flag, %s_nr_running(%u) at %u tasks, flag %d",
				     add ? "add" : "sub", count, prev, flag);
}

static void sched_fair_test_model_set_side(struct kunit *test)
{
	struct rq *rq = sched_fair_test_rq(test);
	struct sched_fair_test_watch *w = NULL;
	struct sched_fair_test_check c;
	unsigned int prev, count, i, n;
	bool add;
	int flag;

#if SFT_WATCH_TRAPS_AFTER_WRITE
	w = sched_fair_test_watch(test, &rq->rd->SFT_RD_FLAG, sizeof(rq->rd->SFT_RD_FLAG));
#endif
	sched_fair_test_check_init(test, &c, "add_nr_running/sub_nr_running");
	/* Every add of 1..3 at 0..4 tasks, every sub at 1..4, either flag. */
	for (flag = 0; flag <= 1; flag++) {
		for (prev = 0; prev <= 4; prev++)
			for (count = 1; count <= 3; count++)
				sched_fair_test_set_step(&c, rq, w, true, prev, count, flag);
		for (prev = 1; prev <= 4; prev++)
			for (count = 1; count <= prev; count++)
				sched_fair_test_set_step(&c, rq, w, false, prev, count, flag);
	}
	/* Random runs of adds and subs; a balance pass clears now and then. */
	for (n = 0; n < 200; n++) {
		prev = 0;
		flag = 0;
		for (i = 0; i < 16; i++) {
			add = !prev || sched_fair_test_rand(&c, 0, 2);
			count = sched_fair_test_rand(&c, 1, add ? 3 : prev);
			if (!sched_fair_test_rand(&c, 0, 4))
				flag = 0;
			sched_fair_test_set_step(&c, rq, w, add, prev, count, flag);
			prev = rq->nr_running;
			flag = get_rd_overloaded(rq->rd);
		}
	}
	sched_fair_test_model_end(&c, w);
}

/*
 * Model of the task group side: a cfs_rq of root_task_group never moves
 * the group's load_avg nor its own tg_load_avg_contrib; for any other
 * group, an update outside the rate limit's window (where the line has
 * one) moves load_avg by load - contrib and records load as contrib iff
 * |load - contrib| > contrib / 64, and a clear (where the line has one)
 * takes contrib out and records 0.
 */
static bool sched_fair_test_model_update(bool root, unsigned long contrib, unsigned long load)
{
	long delta = (long)load - (long)contrib;

	return !root && abs(delta) > contrib / 64;
}

/*
 * Make @cfs_rq a fresh cfs_rq of @tg whose load is @load, of which
 * @contrib was last propagated to the group (at time 0); it keeps its
 * runqueue.
 */
static void sched_fair_test_cfs_rq_init(struct cfs_rq *cfs_rq, struct task_group *tg,
					unsigned long contrib, unsigned long load)
{
	struct rq *rq = cfs_rq->rq;

	memset(cfs_rq, 0, sizeof(*cfs_rq));
	cfs_rq->rq = rq;
	cfs_rq->tg = tg;
	cfs_rq->tg_load_avg_contrib = contrib;
	cfs_rq->avg.load_avg = load;
}

/* One update (or, with @clear, a clear) of @cfs_rq, made a fresh one of @tg. */
static void sched_fair_test_tg_step(struct sched_fair_test_check *c, struct task_group *tg,
				    struct cfs_rq *cfs_rq, struct sched_fair_test_watch *w,
				    bool clear, unsigned long contrib, unsigned long load)
{
	bool root = tg == &root_task_group;
	long before = atomic_long_read(&tg->load_avg), want_tg = before;
	unsigned long want_contrib = contrib;
	bool moves;
	int mark[2];

	sched_fair_test_cfs_rq_init(cfs_rq, tg, contrib, load);
	c->inputs++;
	sched_fair_test_mark(w, mark);
	if (clear) {
		moves = !root;
		if (moves) {
			want_tg -= contrib;
			want_contrib = 0;
		}
#if SFT_HAVE_CLEAR
		clear_tg_load_avg(cfs_rq);
#endif
	} else {
		moves = sched_fair_test_model_update(root, contrib, load);
		if (moves) {
			want_tg += (long)load - (long)contrib;
			want_contrib = load;
		}
		update_tg_load_avg(cfs_rq);
	}
	sched_fair_test_match(c, "tg->load_avg", atomic_long_read(&tg->load_avg), want_tg,
			      "%s, %s group, contrib %lu, load %lu", clear ? "clear" : "update",
			      root ? "root" : "child", contrib, load);
	sched_fair_test_match(c, "tg_load_avg_contrib", cfs_rq->tg_load_avg_contrib, want_contrib,
			      "%s, %s group, contrib %lu, load %lu", clear ? "clear" : "update",
			      root ? "root" : "child", contrib, load);
	sched_fair_test_match_writes(c, w, mark, moves, want_tg != before,
				     "tg->load_avg, %s, %s group, contrib %lu, load %lu",
				     clear ? "clear" : "update", root ? "root" : "child",
				     contrib, load);
	/* Undo what a wrong kernel did to the real root group. */
	if (root && atomic_long_read(&tg->load_avg) != before)
		atomic_long_set(&tg->load_avg, before);
}

static void sched_fair_test_model_tg_side(struct kunit *test)
{
	static const unsigned long contribs[] = {
		0, 1, 63, 64, 65, 127, 128, 6400, 6463, 1UL << 20
	};
	struct task_group *child = sched_fair_test_tg(test, 0);
	struct task_group *tgs[] = { child, &root_task_group };
	struct cfs_rq *cfs_rq = sched_fair_test_cfs_rq(test, child, 0, 0);
	struct sched_fair_test_watch *w[2] = { NULL, NULL };
	struct sched_fair_test_check c;
	long deltas[10], t;
	unsigned int i, j, g, n;
	unsigned long contrib;

#if SFT_WATCH_TRAPS_AFTER_WRITE
	w[0] = sched_fair_test_watch(test, &child->load_avg, 8);
	w[1] = sched_fair_test_watch(test, &root_task_group.load_avg, 8);
#endif
	sched_fair_test_check_init(test, &c, "update_tg_load_avg/clear_tg_load_avg");
	for (g = 0; g < 2; g++) {
		/* Every contrib above, at and around its threshold, both ways. */
		for (i = 0; i < ARRAY_SIZE(contribs); i++) {
			contrib = contribs[i];
			t = contrib / 64;
			deltas[0] = 0;
			deltas[1] = 1;
			deltas[2] = -1;
			deltas[3] = t;
			deltas[4] = -t;
			deltas[5] = t + 1;
			deltas[6] = -t - 1;
			deltas[7] = 2 * t + 5;
			deltas[8] = -2 * t - 5;
			deltas[9] = 1000;
			for (j = 0; j < ARRAY_SIZE(deltas); j++)
				if ((long)contrib + deltas[j] >= 0)
					sched_fair_test_tg_step(&c, tgs[g], cfs_rq, w[g], false,
								contrib, contrib + deltas[j]);
			if (SFT_HAVE_CLEAR)
				sched_fair_test_tg_step(&c, tgs[g], cfs_rq, w[g], true, contrib,
							contrib);
		}
		/* Random contributions and loads, up to 2^20. */
		for (n = 0; n < 1000; n++)
			sched_fair_test_tg_step(&c, tgs[g], cfs_rq, w[g], false,
						sched_fair_test_rand(&c, 0, 1U << 20),
						sched_fair_test_rand(&c, 0, 1U << 20));
	}
	sched_fair_test_watch_stop(w[0]);
	sched_fair_test_watch_stop(w[1]);
	if (!w[0])
		kunit_info(test, "writes not counted: no write watchpoint of known semantics here\n");
	sched_fair_test_check_end(&c);
}

/*
 * Model of the recompute side: a pass of update_sd_lb_stats() over a
 * domain without a parent (the top level, whose groups cover the root
 * domain) leaves the root domain marked overloaded iff a CPU that the
 * pass counts (in one of the domain's groups and in env->cpus) holds more
 * than one task, or, on a domain with SD_ASYM_CPUCAPACITY, a busy CPU
 * outside the local group has a misfit task; the mark it had before does
 * not matter. A pass over a domain with a parent leaves the mark as it
 * was. Neither depends on the balance type. A write happens only when
 * the mark changes, where the line's store reads first; elsewhere a top
 * level pass writes once.
 */
static bool sched_fair_test_model_recompute(bool root, bool flag, unsigned int nr_a,
					    unsigned int nr_b, bool b_counted, bool asym,
					    bool misfit_a, bool a_local)
{
	if (!root)
		return flag;
	return nr_a > 1 || (b_counted && nr_b > 1) || (asym && misfit_a && !a_local);
}

/* The layouts of CPUs A and B in groups: {A} {B}, {B} {A}, or {A, B}. */
enum { SFT_GROUPS_AB, SFT_GROUPS_BA, SFT_GROUPS_ONE, SFT_GROUPS_NR };

static const char * const sched_fair_test_layouts[] = { "{A} {B}", "{B} {A}", "{A,B}" };

static const enum cpu_idle_type sched_fair_test_idle_types[] = {
	SFT_CPU_NOT_IDLE, CPU_IDLE, CPU_NEWLY_IDLE
};

/*
 * Every pass over one fake domain, described by the bits of @shape (see
 * sched_fair_test_model_recompute_side()), at a moment when A holds
 * @nr_a tasks and B @nr_b: for every balance type, misfit on A or not,
 * and either mark before the pass.
 */
static void sched_fair_test_recompute_domain(struct sched_fair_test_check *c,
					     struct rq *dst_rq, struct sched_fair_test_watch *w,
					     unsigned int nr_a, unsigned int nr_b,
					     unsigned int shape)
{
	bool root = shape & 1, dst_b = shape & 2, b_out = shape & 4, asym = shape & 8;
	int layout = shape >> 4, a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	bool a_local = layout == SFT_GROUPS_ONE || !dst_b, got, want, want_write;
	struct sched_fair_test_lb *lb;
	int idle, misfit, flag, mark[2];
	char input[112];

	lb = sched_fair_test_domain(c->test, root, dst_b ? b : a);
	lb->sd->flags = asym ? SD_ASYM_CPUCAPACITY : 0;
	lb->dst_rq = dst_rq;
	lb->env.dst_rq = dst_rq;
	if (layout == SFT_GROUPS_ONE) {
		sched_fair_test_group_of_two(c->test, lb, a, b);
	} else {
		sched_fair_test_group(c->test, lb, cpumask_of(layout == SFT_GROUPS_AB ? a : b));
		sched_fair_test_group(c->test, lb, cpumask_of(layout == SFT_GROUPS_AB ? b : a));
	}
	if (b_out)
		cpumask_clear_cpu(b, lb->env.cpus);

	for (idle = 0; idle < ARRAY_SIZE(sched_fair_test_idle_types); idle++) {
		lb->env.idle = sched_fair_test_idle_types[idle];
		for (misfit = 0; misfit <= 1; misfit++) {
			for (flag = 0; flag <= 1; flag++) {
				c->inputs++;
				want = sched_fair_test_model_recompute(root, flag, nr_a, nr_b,
								       !b_out, asym, misfit,
								       a_local);
				want_write = SFT_STORE_READS_FIRST ? want != flag : root;
				got = sched_fair_test_pass(c->test, lb, nr_a, nr_b, misfit, flag,
							   w, mark);
				snprintf(input, sizeof(input),
					 "%s level, %s, dst %c, B %s, %s, type %d, misfit %d, tasks %u/%u, flag %d",
					 root ? "top" : "child", sched_fair_test_layouts[layout],
					 dst_b ? 'B' : 'A', b_out ? "out" : "in",
					 asym ? "asym" : "sym", lb->env.idle, misfit, nr_a, nr_b,
					 flag);
				sched_fair_test_match(c, "the flag", got, want, "%s", input);
				sched_fair_test_match_writes(c, w, mark, want_write, want != flag,
							     "the flag, %s", input);
			}
		}
	}
}

/*
 * What both recompute model cases need first: two active CPUs, no live
 * misfit tracking, the write watchpoint on the indicator where its
 * semantics are known (else NULL), the checker, and this thread on A.
 */
static struct sched_fair_test_watch *
sched_fair_test_recompute_begin(struct kunit *test, struct sched_fair_test_check *c,
				struct rq *dst_rq, const char *what)
{
	struct sched_fair_test_watch *w = NULL;
	int a = sched_fair_test_cpu_a();

	if (num_active_cpus() < 2)
		kunit_skip(test, "needs 2 active CPUs, %u active", num_active_cpus());
	if (sched_asym_cpucap_active())
		kunit_skip(test, "asymmetric CPU capacity: misfit_task_load is live here");
#if SFT_WATCH_TRAPS_AFTER_WRITE
	w = sched_fair_test_watch(test, &dst_rq->rd->SFT_RD_FLAG,
				  sizeof(dst_rq->rd->SFT_RD_FLAG));
#endif
	sched_fair_test_check_init(test, c, what);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);
	KUNIT_ASSERT_EQ(test, raw_smp_processor_id(), a);
	return w;
}

/*
 * Every fake domain (see sched_fair_test_model_recompute_side()) at a
 * moment when A holds @nr_a tasks and B @nr_b.
 */
static void sched_fair_test_recompute_shapes(struct sched_fair_test_check *c,
					     struct rq *dst_rq, struct sched_fair_test_watch *w,
					     unsigned int nr_a, unsigned int nr_b)
{
	unsigned int shape;

	for (shape = 0; shape < SFT_GROUPS_NR << 4; shape++) {
		if ((shape & 2) && (shape & 4))
			continue;
		sched_fair_test_recompute_domain(c, dst_rq, w, nr_a, nr_b, shape);
	}
}

/*
 * The recompute side over its input space, on CPUs A (the test's own)
 * and B: B holds 0 to 3 tasks and A 1, then A 2 and B 3 (always-runnable
 * kernel threads). Per task count, every fake domain: top level or not
 * (bit 0 of the shape), balancing towards B or A (bit 1), B left out of
 * env->cpus or not (bit 2: the all-pinned redo drops the busiest CPU,
 * never the destination), SD_ASYM_CPUCAPACITY or not (bit 3), and the
 * layout of the groups (bits 4-5).
 */
static void sched_fair_test_model_recompute_side(struct kunit *test)
{
	static const unsigned int counts[][2] = { {1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 3} };
	int a = sched_fair_test_cpu_a(), b = sched_fair_test_cpu_b();
	struct rq *dst_rq = sched_fair_test_rq(test);
	struct sched_fair_test_watch *w;
	unsigned int nr_a = 1, nr_b = 0, i;
	struct sched_fair_test_check c;

	w = sched_fair_test_recompute_begin(test, &c, dst_rq, "update_sd_lb_stats");
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		for (; nr_a < counts[i][0]; nr_a++)
			sched_fair_test_kthread(test, sched_fair_test_spin, a);
		for (; nr_b < counts[i][1]; nr_b++)
			sched_fair_test_kthread(test, sched_fair_test_spin, b);
		sched_fair_test_recompute_shapes(&c, dst_rq, w, nr_a, nr_b);
	}
	sched_fair_test_model_end(&c, w);
}

/*
 * The recompute side with tasks of two classes: the model counts every
 * runnable task of a CPU (rq->nr_running), whatever its class. B holds a
 * SCHED_FIFO task alone (one task, none of them CFS), then beside one and
 * two CFS tasks (two and three tasks, one and two of them CFS), A the
 * test's own; every fake domain as in model_recompute_side.
 */
static void sched_fair_test_model_recompute_classes(struct kunit *test)
{
	int b = sched_fair_test_cpu_b();
	struct rq *dst_rq = sched_fair_test_rq(test);
	struct sched_fair_test_watch *w;
	struct sched_fair_test_check c;
	unsigned int nr_b;

	w = sched_fair_test_recompute_begin(test, &c, dst_rq,
					    "update_sd_lb_stats, an RT task and CFS tasks");
	sched_fair_test_kthread(test, sched_fair_test_spin_rt, b);
	for (nr_b = 1; nr_b <= 3; nr_b++) {
		if (nr_b > 1)
			sched_fair_test_kthread(test, sched_fair_test_spin, b);
		sched_fair_test_recompute_shapes(&c, dst_rq, w, 1, nr_b);
	}
	sched_fair_test_model_end(&c, w);
}

/*
 * The recompute side with CFS tasks of a task group below the root: B
 * holds one task of the group, then two (two tasks on the CPU and in its
 * CFS hierarchy, but one entity, the group's, in its top cfs_rq), then
 * those two and one task of the root group (three tasks, two entities);
 * A the test's own. The model counts tasks, not entities. Every fake
 * domain as in model_recompute_side.
 */
static void sched_fair_test_model_recompute_groups(struct kunit *test)
{
	int b = sched_fair_test_cpu_b();
	struct rq *dst_rq = sched_fair_test_rq(test);
	struct sched_fair_test_live_tg *g;
	struct sched_fair_test_watch *w;
	struct sched_fair_test_check c;
	unsigned int nr_b;
	struct task_struct *t;
	int i;

	w = sched_fair_test_recompute_begin(test, &c, dst_rq,
					    "update_sd_lb_stats, CFS tasks of a child group");
	g = sched_fair_test_live_tg_new(test);
	for (nr_b = 1; nr_b <= 3; nr_b++) {
		sched_fair_test_kthread_in(test, sched_fair_test_spin, NULL, b,
					   nr_b < 3 ? g : NULL);
		sched_fair_test_recompute_shapes(&c, dst_rq, w, 1, nr_b);
	}
	/* The precondition: the group's threads ran on B in the group. */
	for (i = 0; i < g->nr; i++) {
		t = g->tasks[i];
		if (task_group(t) != g->tg || READ_ONCE(t->se.cfs_rq) != g->tg->cfs_rq[b])
			kunit_skip(test, "precondition: thread %d not in the group on CPU %d",
				   i, b);
	}
	sched_fair_test_model_end(&c, w);
}

/*
 * Model of what sched_balance_newidle() leaves behind, field by field,
 * on each of its paths: the early returns, the skip, and the balance,
 * which all leave through one exit (its out: label).
 *
 *  - A wakeup pending on the runqueue (ttwu_pending): return 0 at once,
 *    nothing else changes.
 *  - Otherwise idle_stamp becomes the runqueue's clock. On a CPU that is
 *    not active the function then returns 0, nothing else changes.
 *  - The balance is skipped when the runqueue has no base domain, when
 *    the indicator is clear, or when avg_idle is below the base domain's
 *    max_newidle_lb_cost; the candidate next balance is then the earlier
 *    of now + HZ and (with a base domain) that domain's last_balance plus
 *    its idle balance interval (balance_interval in jiffies, at least 1,
 *    at most max_load_balance_interval).
 *  - A balance walks the CPU's domains from the base up, each adding its
 *    next balance to the candidate; the cases make the first domain's
 *    cost infinite, so the walk stops there without pulling. Afterwards
 *    the runqueue decides the return value: 1 if it holds a CFS task
 *    (pulled, or enqueued while the lock was dropped), and -1 where a
 *    task of a higher class is there (SFT_NI_OTHER_RESTARTS; lines that
 *    mark such an enqueue instead clear the mark before the lock is
 *    dropped, so that a mark from before the balance does not count).
 *  - The exit moves next_balance earlier, never later, to the candidate.
 *    A nonzero return (or a skip, 0) then either clears idle_stamp (a
 *    task to run) or asks for a refresh of the idle CPUs' blocked load
 *    (NOHZ_NEWILB_KICK on this CPU) iff avg_idle is at least
 *    sysctl_sched_migration_cost, nohz says some idle CPU has blocked
 *    load, and nohz.next_blocked has been reached.
 *  - On every path misfit_task_load is cleared where asymmetric capacity
 *    is active (update_misfit_status(NULL, rq)), and kept elsewhere.
 *  - The runqueue lock is pinned again on return: lockdep checks that
 *    when the case unlocks, on a kernel with CONFIG_PROVE_LOCKING.
 */
struct sched_fair_test_ni_in {
	bool ttwu, inactive, has_sd, flag, has_blocked;
	/* What the runqueue holds after a balance: a CFS task, another. */
	bool cfs, other;
	u64 avg_idle, cost;
	/* In jiffies from now: next_balance, last_balance, next_blocked. */
	long next, last, next_blocked;
	unsigned int interval_ms;
};

/* The CPU's real base domain as the call found it (has: there is one). */
struct sched_fair_test_ni_real {
	bool has;
	unsigned long last_balance;
	unsigned int interval_ms;
};

struct sched_fair_test_ni_out {
	int ret;
	u64 idle_stamp;
	unsigned long next_balance, misfit;
	bool kick;
	struct sched_fair_test_ni_real real;
};

/* What the fields hold before the call, to see whether it wrote them. */
#define SFT_NI_STAMP	0x5a5a5a5aULL
#define SFT_NI_MISFIT	0xa5a5UL

/* A domain's next idle balance, as update_next_balance() takes it. */
static unsigned long sched_fair_test_next_idle_balance(unsigned long last,
						       unsigned int interval_ms)
{
	return last + clamp(msecs_to_jiffies(interval_ms), 1UL, max_load_balance_interval);
}

/* The gate lets @in balance: a base domain, the indicator set, avg_idle >= cost. */
static bool sched_fair_test_ni_gate_open(const struct sched_fair_test_ni_in *in)
{
	return in->has_sd && in->flag && in->avg_idle >= in->cost;
}

static void sched_fair_test_model_newidle(const struct sched_fair_test_ni_in *in,
					  const struct sched_fair_test_ni_real *real,
					  unsigned long now, u64 clock, bool asym,
					  struct sched_fair_test_ni_out *o)
{
	unsigned long next = now + HZ, cand;

	o->ret = 0;
	o->misfit = asym ? 0 : SFT_NI_MISFIT;
	o->idle_stamp = in->ttwu ? SFT_NI_STAMP : clock;
	o->next_balance = now + in->next;
	o->kick = false;
	if (in->ttwu || in->inactive)
		return;
	if (!sched_fair_test_ni_gate_open(in)) {
		if (in->has_sd) {
			cand = sched_fair_test_next_idle_balance(now + in->last, in->interval_ms);
			if (time_before(cand, next))
				next = cand;
		}
	} else {
		if (real->has) {
			cand = sched_fair_test_next_idle_balance(real->last_balance,
								 real->interval_ms);
			if (time_before(cand, next))
				next = cand;
		}
		if (in->other && SFT_NI_OTHER_RESTARTS)
			o->ret = -1;
		else if (in->cfs)
			o->ret = 1;
	}
	if (time_before(next, o->next_balance))
		o->next_balance = next;
	if (o->ret)
		o->idle_stamp = 0;
	else
		o->kick = IS_ENABLED(CONFIG_NO_HZ_COMMON) &&
			  in->avg_idle >= sysctl_sched_migration_cost &&
			  in->has_blocked && in->next_blocked <= 0;
}

/* Inputs whose jiffies or nohz state moved under the call, retried. */
struct sched_fair_test_ni_run {
	struct rq *rq;
	struct sched_domain *sd;
	/* A CPU that is not active (for in->inactive), or -1. */
	int inactive_cpu;
	/* walked: balanced inputs whose walk found the real base domain. */
	unsigned int retries, unsettled, walked;
};

/*
 * One call on @r's runqueue, a fake on this CPU (or, for an inactive
 * input, claiming to be that CPU), interrupts off. The CPU's real base
 * domain gets an infinite max_newidle_lb_cost for the call (this CPU
 * alone writes it, and cannot now), so that a balance stops at that
 * domain before it pulls anything to the fake. Returns false if
 * jiffies, the nohz state or that domain's balance times changed
 * meanwhile.
 */
static bool sched_fair_test_newidle_call(struct sched_fair_test_ni_run *r,
					 const struct sched_fair_test_ni_in *in, u64 clock,
					 unsigned long *now, struct sched_fair_test_ni_out *o)
{
	struct rq *rq = r->rq;
	struct sched_domain *real;
	bool settled = true;
	struct rq_flags rf;
	u64 real_cost = 0;
	int cpu;
#ifdef CONFIG_NO_HZ_COMMON
	unsigned long old_next_blocked;
	int old_has_blocked, kick_before;
#endif

	rq_lock_irqsave(rq, &rf);
	cpu = in->inactive ? r->inactive_cpu : smp_processor_id();
	rq->cpu = cpu;
	*now = jiffies;
	rq->ttwu_pending = in->ttwu;
	rq->avg_idle = in->avg_idle;
	rq->idle_stamp = SFT_NI_STAMP;
	rq->next_balance = *now + in->next;
	rq->misfit_task_load = SFT_NI_MISFIT;
	rq->clock = clock;
	rq->clock_update_flags = RQCF_UPDATED;
	sched_fair_test_ni_rq(rq, in->cfs, in->other);
	r->sd->last_balance = *now + in->last;
	r->sd->balance_interval = in->interval_ms;
	r->sd->max_newidle_lb_cost = in->cost;
	rcu_assign_pointer(rq->sd, in->has_sd ? r->sd : NULL);
	rq->rd->SFT_RD_FLAG = in->flag;
	real = rcu_dereference_sched(cpu_rq(smp_processor_id())->sd);
	o->real.has = real;
	if (real) {
		real_cost = real->max_newidle_lb_cost;
		real->max_newidle_lb_cost = U64_MAX / 2;
		o->real.last_balance = READ_ONCE(real->last_balance);
		o->real.interval_ms = READ_ONCE(real->balance_interval);
	}
#ifdef CONFIG_NO_HZ_COMMON
	old_has_blocked = READ_ONCE(nohz.SFT_NOHZ_HAS_BLOCKED);
	old_next_blocked = READ_ONCE(nohz.next_blocked);
	WRITE_ONCE(nohz.SFT_NOHZ_HAS_BLOCKED, in->has_blocked);
	WRITE_ONCE(nohz.next_blocked, *now + in->next_blocked);
	kick_before = atomic_fetch_andnot(NOHZ_NEWILB_KICK, nohz_flags(cpu));
#endif

	o->ret = sched_balance_newidle(rq, &rf);

	settled = !time_after(jiffies, *now);
#ifdef CONFIG_NO_HZ_COMMON
	o->kick = atomic_fetch_andnot(NOHZ_NEWILB_KICK, nohz_flags(cpu)) & NOHZ_NEWILB_KICK;
	if (kick_before & NOHZ_NEWILB_KICK)
		atomic_or(NOHZ_NEWILB_KICK, nohz_flags(cpu));
	if (READ_ONCE(nohz.SFT_NOHZ_HAS_BLOCKED) != in->has_blocked ||
	    READ_ONCE(nohz.next_blocked) != *now + in->next_blocked)
		settled = false;
	/* Another CPU's news of blocked load is never dropped. */
	WRITE_ONCE(nohz.SFT_NOHZ_HAS_BLOCKED, old_has_blocked || !settled ||
		   READ_ONCE(nohz.SFT_NOHZ_HAS_BLOCKED));
	WRITE_ONCE(nohz.next_blocked, old_next_blocked);
#else
	o->kick = false;
#endif
	if (real) {
		real->max_newidle_lb_cost = real_cost;
		/* An idle balance run for this CPU by another (nohz) moved them. */
		if (READ_ONCE(real->last_balance) != o->real.last_balance ||
		    READ_ONCE(real->balance_interval) != o->real.interval_ms)
			settled = false;
	}
	o->idle_stamp = rq->idle_stamp;
	o->next_balance = rq->next_balance;
	o->misfit = rq->misfit_task_load;
	rq_unlock_irqrestore(rq, &rf);
	return settled;
}

/* The path an input takes, as the model reads it; counted per case. */
enum sched_fair_test_ni_path {
	SFT_NI_PENDING, SFT_NI_INACTIVE, SFT_NI_SKIP,
	SFT_NI_BALANCE_NONE, SFT_NI_BALANCE_TASK, SFT_NI_BALANCE_RESTART, SFT_NI_PATHS
};

static const char * const sched_fair_test_ni_paths[] = {
	"wakeup pending", "CPU inactive", "skipped",
	"balanced, returned 0", "balanced, returned 1", "balanced, returned -1",
};

static enum sched_fair_test_ni_path
sched_fair_test_ni_path(const struct sched_fair_test_ni_in *in, int ret)
{
	if (in->ttwu)
		return SFT_NI_PENDING;
	if (in->inactive)
		return SFT_NI_INACTIVE;
	if (!sched_fair_test_ni_gate_open(in))
		return SFT_NI_SKIP;
	return ret > 0 ? SFT_NI_BALANCE_TASK : ret ? SFT_NI_BALANCE_RESTART : SFT_NI_BALANCE_NONE;
}

static void sched_fair_test_newidle_step(struct sched_fair_test_check *c,
					 struct sched_fair_test_ni_run *r,
					 const struct sched_fair_test_ni_in *in,
					 unsigned int paths[SFT_NI_PATHS])
{
	struct sched_fair_test_ni_out got, want;
	u64 clock = 1000000000ULL + sched_fair_test_rand(c, 0, 1U << 30);
	enum sched_fair_test_ni_path path;
	unsigned long now;
	char input[160];
	int tries;

	for (tries = 0; !sched_fair_test_newidle_call(r, in, clock, &now, &got); tries++) {
		r->retries++;
		if (tries == 16) {
			r->unsettled++;
			return;
		}
	}
	c->inputs++;
	sched_fair_test_model_newidle(in, &got.real, now, clock, sched_asym_cpucap_active(),
				      &want);
	path = sched_fair_test_ni_path(in, want.ret);
	paths[path]++;
	if (got.real.has && path >= SFT_NI_BALANCE_NONE)
		r->walked++;
	snprintf(input, sizeof(input),
		 "ttwu %d inactive %d sd %d flag %d avg_idle %llu cost %llu next %+ld last %+ld/%ums blocked %d/%+ld after cfs %d other %d",
		 in->ttwu, in->inactive, in->has_sd, in->flag, in->avg_idle, in->cost, in->next,
		 in->last, in->interval_ms, in->has_blocked, in->next_blocked, in->cfs, in->other);
	sched_fair_test_match(c, "the return value", got.ret, want.ret, "%s", input);
	sched_fair_test_match(c, "idle_stamp", got.idle_stamp, want.idle_stamp, "%s", input);
	sched_fair_test_match(c, "next_balance - now", got.next_balance - now,
			      want.next_balance - now, "%s", input);
	sched_fair_test_match(c, "the blocked-load kick", got.kick, want.kick, "%s", input);
	sched_fair_test_match(c, "misfit_task_load", got.misfit, want.misfit, "%s", input);
}

/* The next digit of @v in base @base. */
static unsigned int sched_fair_test_digit(unsigned int *v, unsigned int base)
{
	unsigned int d = *v % base;

	*v /= base;
	return d;
}

/* The common part of the newly-idle cases: a fake runqueue and domain. */
static void sched_fair_test_newidle_init(struct kunit *test, struct sched_fair_test_ni_run *r)
{
	if (housekeeping_enabled(HK_TYPE_TICK) || housekeeping_enabled(HK_TYPE_DOMAIN))
		kunit_skip(test, "precondition: no CPU isolation (nohz_full= or isolcpus=)");
	memset(r, 0, sizeof(*r));
	r->rq = sched_fair_test_rq(test);
	r->inactive_cpu = -1;
	r->sd = kunit_kzalloc(test, sizeof(*r->sd) + cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->sd);
	raw_spin_lock_init(&r->rq->__lock);
#ifdef CONFIG_FAIR_GROUP_SCHED
	/* An empty list of leaf cfs_rqs, for a line that refreshes this rq. */
	INIT_LIST_HEAD(&r->rq->leaf_cfs_rq_list);
	r->rq->tmp_alone_branch = &r->rq->leaf_cfs_rq_list;
#endif
}

static void sched_fair_test_newidle_end(struct kunit *test, struct sched_fair_test_check *c,
					struct sched_fair_test_ni_run *r,
					const unsigned int paths[SFT_NI_PATHS])
{
	unsigned int balanced = 0;
	char counts[160] = "";
	int i, len = 0;

	/*
	 * One line: on v6.1 a case's debugfs log holds 512 bytes, and a
	 * result line past them is lost to whatever reads that log.
	 */
	for (i = 0; i < SFT_NI_PATHS; i++) {
		if (paths[i])
			len += scnprintf(counts + len, sizeof(counts) - len, "%s%s: %u",
					 len ? "; " : "", sched_fair_test_ni_paths[i], paths[i]);
		if (i >= SFT_NI_BALANCE_NONE)
			balanced += paths[i];
	}
	kunit_info(test,
		   "inputs: %s; base domain met in %u of %u balanced; %u calls retried, %u unsettled\n",
		   counts, r->walked, balanced, r->retries, r->unsettled);
	if (r->unsettled > c->inputs / 100)
		kunit_skip(test, "precondition: %u of %u inputs never settled",
			   r->unsettled, r->unsettled + c->inputs);
	sched_fair_test_check_end(c);
}

/*
 * The skip's exit over every input that does not balance: a pending
 * wakeup, no base domain, the indicator clear, avg_idle short, crossed
 * with where next_balance, the domain's next balance and now + HZ lie,
 * and with the blocked-load state. model_newidle_balance drives the
 * inputs that balance.
 */
static void sched_fair_test_model_newidle_skip(struct kunit *test)
{
	static const long nexts[] = { -1, HZ / 2, 3 * HZ };
	static const long lasts[] = { -2 * HZ, 0, 2 * HZ };
	static const unsigned int intervals[] = { 1, 64, 1000000 };
	static const long blocked[] = { -1, 0, 1 };
	const u64 mig = sysctl_sched_migration_cost;
	const u64 avgs[] = { 0, mig / 2 - 1, mig / 2, mig - 1, mig, 2 * mig - 1, 2 * mig, 4 * mig };
	const u64 costs[] = { mig / 2, 2 * mig };
	const unsigned int space = 2 * 2 * 2 * ARRAY_SIZE(avgs) * ARRAY_SIZE(costs) *
		ARRAY_SIZE(nexts) * ARRAY_SIZE(lasts) * ARRAY_SIZE(intervals) * 2 *
		ARRAY_SIZE(blocked);
	unsigned int paths[SFT_NI_PATHS] = {};
	struct sched_fair_test_ni_in in = {};
	struct sched_fair_test_ni_run r;
	struct sched_fair_test_check c;
	unsigned int idx, v;

	sched_fair_test_newidle_init(test, &r);
	sched_fair_test_check_init(test, &c, "sched_balance_newidle, the skip's exit");
	for (idx = 0; idx < space; idx++) {
		v = idx;
		in.ttwu = sched_fair_test_digit(&v, 2);
		in.has_sd = sched_fair_test_digit(&v, 2);
		in.flag = sched_fair_test_digit(&v, 2);
		in.avg_idle = avgs[sched_fair_test_digit(&v, ARRAY_SIZE(avgs))];
		in.cost = costs[sched_fair_test_digit(&v, ARRAY_SIZE(costs))];
		in.next = nexts[sched_fair_test_digit(&v, ARRAY_SIZE(nexts))];
		in.last = lasts[sched_fair_test_digit(&v, ARRAY_SIZE(lasts))];
		in.interval_ms = intervals[sched_fair_test_digit(&v, ARRAY_SIZE(intervals))];
		in.has_blocked = sched_fair_test_digit(&v, 2);
		in.next_blocked = blocked[sched_fair_test_digit(&v, ARRAY_SIZE(blocked))];
		/* Inputs that balance are model_newidle_balance's. */
		if (!in.ttwu && sched_fair_test_ni_gate_open(&in))
			continue;
		sched_fair_test_newidle_step(&c, &r, &in, paths);
		if (!(idx % 256))
			cond_resched();
	}
	sched_fair_test_newidle_end(test, &c, &r, paths);
}

#ifdef CONFIG_HOTPLUG_CPU
static void sched_fair_test_cpu_up(void *cpu)
{
	int err = add_cpu((long)cpu);

	if (err)
		pr_err("sched_fair_test: CPU %ld did not come back online: %d\n", (long)cpu, err);
}
#endif

/*
 * A CPU that is not active: a possible CPU that is not, else CPU B, taken
 * offline for the case and brought back when it ends. -1 if there is
 * none (one CPU, or no CPU hotplug).
 */
static int sched_fair_test_inactive_cpu(struct kunit *test)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (!cpu_active(cpu))
			return cpu;
#ifdef CONFIG_HOTPLUG_CPU
	cpu = sched_fair_test_cpu_b();
	if (cpu == sched_fair_test_cpu_a() || remove_cpu(cpu))
		return -1;
	if (sched_fair_test_defer(test, sched_fair_test_cpu_up, (void *)(long)cpu))
		return -1;
	if (!cpu_active(cpu))
		return cpu;
#endif
	return -1;
}

/*
 * The exit after a balance, and the inactive CPU's early return: every
 * input that balances (a base domain, the indicator set, avg_idle at
 * least its cost), with the runqueue holding after the balance nothing,
 * a CFS task, a task of a higher class, or both, crossed with where
 * next_balance lies and with the blocked-load state; then, on a CPU that
 * is not active, inputs that would balance and that would skip.
 */
static void sched_fair_test_model_newidle_balance(struct kunit *test)
{
	static const long nexts[] = { -1, HZ / 2, 3 * HZ };
	static const long blocked[] = { -1, 0, 1 };
	const u64 mig = sysctl_sched_migration_cost;
	/* avg_idle and cost pairs: at the cost, above it, either side of mig. */
	const u64 pairs[][2] = { { mig / 2, mig / 2 }, { mig - 1, mig / 2 }, { mig, mig / 2 },
				 { 2 * mig, 2 * mig }, { 4 * mig, 2 * mig } };
	const unsigned int space = ARRAY_SIZE(pairs) * 4 * ARRAY_SIZE(nexts) * 2 *
		ARRAY_SIZE(blocked);
	unsigned int paths[SFT_NI_PATHS] = {};
	struct sched_fair_test_ni_in in = {
		.has_sd = true, .flag = true, .last = 2 * HZ, .interval_ms = 64,
	};
	struct sched_fair_test_ni_run r;
	struct sched_fair_test_check c;
	unsigned int idx, v, p;

	sched_fair_test_newidle_init(test, &r);
	sched_fair_test_check_init(test, &c, "sched_balance_newidle, the exit after a balance");
	for (idx = 0; idx < space; idx++) {
		v = idx;
		p = sched_fair_test_digit(&v, ARRAY_SIZE(pairs));
		in.avg_idle = pairs[p][0];
		in.cost = pairs[p][1];
		in.cfs = sched_fair_test_digit(&v, 2);
		in.other = sched_fair_test_digit(&v, 2);
		in.next = nexts[sched_fair_test_digit(&v, ARRAY_SIZE(nexts))];
		in.has_blocked = sched_fair_test_digit(&v, 2);
		in.next_blocked = blocked[sched_fair_test_digit(&v, ARRAY_SIZE(blocked))];
		sched_fair_test_newidle_step(&c, &r, &in, paths);
		if (!(idx % 64))
			cond_resched();
	}

	r.inactive_cpu = sched_fair_test_inactive_cpu(test);
	if (r.inactive_cpu < 0) {
		kunit_info(test, "not driven: the inactive CPU's return (no CPU can be made inactive)\n");
	} else {
		in.inactive = true;
		in.has_blocked = true;
		in.avg_idle = 4 * mig;
		in.cost = mig / 2;
		in.cfs = false;
		in.other = false;
		for (idx = 0; idx < 2 * 2 * ARRAY_SIZE(nexts) * ARRAY_SIZE(blocked); idx++) {
			v = idx;
			in.ttwu = sched_fair_test_digit(&v, 2);
			in.flag = sched_fair_test_digit(&v, 2);
			in.next = nexts[sched_fair_test_digit(&v, ARRAY_SIZE(nexts))];
			in.next_blocked = blocked[sched_fair_test_digit(&v, ARRAY_SIZE(blocked))];
			sched_fair_test_newidle_step(&c, &r, &in, paths);
		}
	}
	sched_fair_test_newidle_end(test, &c, &r, paths);
}

static struct kunit_case sched_fair_model_cases[] = {
	SFT_CASE_SLOW(model_set_side),
	SFT_CASE_SLOW(model_tg_side),
	SFT_CASE_SLOW(model_recompute_side),
	SFT_CASE_SLOW(model_recompute_classes),
	SFT_CASE_SLOW(model_recompute_groups),
	SFT_CASE_SLOW(model_newidle_skip),
	SFT_CASE_SLOW(model_newidle_balance),
	{}
};

static struct kunit_suite sched_fair_model_suite = {
	.name = "sched_fair_model",
	.test_cases = sched_fair_model_cases,
};

kunit_test_suites(&sched_fair_certify_suite,
		  &sched_fair_overload_recompute_suite,
		  &sched_fair_enqueue_count_suite,
		  &sched_fair_write_count_suite,
		  &sched_fair_model_suite);

#else /* !CONFIG_SMP */

/* The certification cases need two CPUs and SMP's load balancing. */
static void sched_fair_test_certify_needs_smp(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_SMP: the certification suites need two CPUs");
}

static struct kunit_case sched_fair_certify_cases[] = {
	{ .run_case = sched_fair_test_certify_needs_smp, .name = "needs_smp" },
	{}
};

static struct kunit_suite sched_fair_certify_suite = {
	.name = "sched_fair_certify",
	.test_cases = sched_fair_certify_cases,
};

kunit_test_suite(sched_fair_certify_suite);

#endif /* CONFIG_SMP */
