# SPDX-License-Identifier: GPL-2.0
"""Replaying the watched writes: what set the indicator before a balance."""
import unittest

from harness.sfp_classify import Setter, classify, floor, merge, parse, setter

LOG = """\
sfp-bench rr classify addr indicator 0xffff888000001028 0
sfp-bench rr classify addr cpu 0 0xffff888000100080 0xffff8880001000b0
sfp-bench rr classify addr cpu 1 0xffff888000200080 0xffff8880002000b0
sfp-bench rr classify ev cpu=1 t=10.000100 comm=sfp_rr addr=0xffff888000001028 \
chain=enqueue_task_fair<enqueue_task<ttwu_do_activate<try_to_wake_up
sfp-bench rr classify ev cpu=0 t=10.000200 comm=swapper/0 addr=0xffff888000100080/4 \
chain=sched_balance_rq<sched_balance_newidle<pick_next_task_fair
sfp-bench rr classify ev cpu=0 t=10.000250 comm=swapper/0 addr=0xffff8880001000b0/4 \
chain=detach_tasks<sched_balance_rq<sched_balance_newidle
sfp-bench rr classify ev cpu=0 t=10.000300 comm=swapper/0 addr=0xffff888000001028 \
chain=sched_balance_rq<sched_balance_newidle<pick_next_task_fair
sfp-bench rr classify ev cpu=1 t=10.000400 comm=sfp_rr addr=0xffff888000200080/4 \
chain=sched_balance_rq<sched_balance_newidle
sfp-bench mix classify ev cpu=1 t=1.0 comm=x addr=0xffff888000001028 chain=enqueue_task_fair
"""


class Setters(unittest.TestCase):
    def test_classes_and_transitions(self):
        cases = {
            "enqueue_task_fair<enqueue_task<ttwu_do_activate<try_to_wake_up": Setter("fair", "wakeup", "other"),
            "enqueue_task_fair<ttwu_do_activate<try_to_wake_up<kick_pool<__queue_work<call_timer_fn":
                Setter("fair", "wakeup", "workqueue"),
            "enqueue_task_fair<enqueue_task<wake_up_new_task<kernel_clone": Setter("fair", "fork"),
            "enqueue_task_fair<activate_task<attach_task<sched_balance_rq": Setter("fair", "balance pull"),
            "enqueue_task_stop<enqueue_task<ttwu_do_activate<try_to_wake_up<cpu_stop_queue_work": Setter("stop", "wakeup", "stopper work"),
            "enqueue_top_rt_rq<enqueue_rt_entity<enqueue_task_rt<ttwu_do_activate": Setter("rt", "wakeup", "other"),
            "enqueue_task_dl<enqueue_task<move_queued_task<migration_cpu_stop": Setter("dl", "migration"),
            "sched_balance_rq<sched_balance_domains<sched_balance_softirq": Setter("recompute", "periodic pass"),
            "sched_balance_rq<sched_balance_newidle<pick_next_task_fair": Setter("recompute", "newly-idle pass"),
            "load_balance<newidle_balance": Setter("recompute", "newly-idle pass"),
            # the softirq loop waking ksoftirqd (wakeup_softirqd inlined,
            # wake_up_process a tail call): not RCU's, though irq_exit_rcu
            # is on the stack
            "enqueue_task_fair<enqueue_task<ttwu_do_activate<try_to_wake_up<handle_softirqs<irq_exit_rcu"
            "<sysvec_apic_timer_interrupt": Setter("fair", "wakeup", "ksoftirqd, from the softirq exit"),
            "enqueue_task_fair<ttwu_do_activate<try_to_wake_up<irq_exit_rcu<sysvec_apic_timer_interrupt":
                Setter("fair", "wakeup", "ksoftirqd, from the softirq exit"),
            # RCU's softirq waking its grace-period kthread is RCU's
            "enqueue_task_fair<enqueue_task<ttwu_do_activate<try_to_wake_up<swake_up_one<rcu_core"
            "<handle_softirqs<irq_exit_rcu": Setter("fair", "wakeup", "rcu"),
            # a softirq handler's wakeup is the handler's
            "enqueue_task_fair<ttwu_do_activate<try_to_wake_up<kick_pool<__queue_work<call_timer_fn"
            "<__run_timers<run_timer_softirq<handle_softirqs<irq_exit_rcu": Setter("fair", "wakeup", "workqueue"),
            # an unknown waker under the interrupt's exit is not RCU's either
            "enqueue_task_fair<ttwu_do_activate<try_to_wake_up<mystery_fn<handle_softirqs<irq_exit_rcu":
                Setter("fair", "wakeup", "other"),
            "mystery": Setter("?", "other"),
        }
        for chain, want in cases.items():
            self.assertEqual(setter(tuple(chain.split("<"))), want, chain)


class Replay(unittest.TestCase):
    def test_parse_and_attribute(self):
        watch, writes = parse(LOG.splitlines(), "rr")
        self.assertEqual(watch.value0, 0)
        self.assertEqual(len(writes), 5)   # the mix line is not rr's
        c = classify(watch, writes)
        # the wakeup's set was balanced by CPU 0, which pulled and whose
        # root-level pass cleared it; CPU 1's balance came after the
        # clear: still that set's, counted apart
        self.assertEqual((c.balances, c.pulled, c.unexplained, c.writes), (2, 1, 0, 2))
        b = c.buckets["fair / wakeup (other)"]
        self.assertEqual((b.sets, b.sets_balanced, b.sets_pulled, b.balances, b.after_clear, b.pulled),
                         (1, 1, 1, 2, 1, 1))
        self.assertEqual(floor(c), (1, 0, None))

    def test_no_set_at_all_is_unexplained(self):
        watch, w = parse(LOG.splitlines(), "rr")
        c = classify(watch, [x for x in w if x.addr != watch.indicator])
        self.assertEqual((c.balances, c.unexplained), (2, 2))

    def test_no_indicator_no_watch(self):
        self.assertEqual(parse(["sfp-bench rr count x=1"], "rr"), (None, []))

    def test_two_balances_one_set(self):
        watch, _ = parse(LOG.splitlines(), "rr")
        w = parse(LOG.splitlines(), "rr")[1]
        # drop the clear and the pull: both balances belong to the set,
        # neither pulled: 2 wasted on 1 empty set
        kept = [x for x in w if not (x.addr == watch.indicator and x.cpu == 0) and x.addr not in watch.gained]
        c = classify(watch, kept)
        self.assertEqual((c.balances, c.pulled, c.unexplained), (2, 0, 0))
        self.assertEqual(floor(c), (2, 1, 2.0))

    def test_a_set_seen_as_clear_is_out_of_order(self):
        watch, w = parse(LOG.splitlines(), "rr")
        # the indicator was already 1 when the watch started: the replay
        # would read the wakeup's store as a clear, which it cannot be
        c = classify(watch.__class__(watch.indicator, 1, watch.count, watch.gained), w)
        self.assertEqual(c.non_flips, 1)

    def test_merge_adds(self):
        watch, w = parse(LOG.splitlines(), "rr")
        c = classify(watch, w)
        m = merge([c, c])
        self.assertEqual((m.balances, m.buckets["fair / wakeup (other)"].sets), (4, 2))


if __name__ == "__main__":
    unittest.main()


class Unexplained(unittest.TestCase):
    def test_a_balance_before_any_set_is_timed_from_the_watch_start(self):
        log = LOG.replace("sfp-bench rr classify ev cpu=1 t=10.000100",
                          "sfp-bench rr classify ev cpu=1 t=10.000000 comm=x addr=0xffff888000200080/4 "
                          "chain=sched_balance_rq<sched_balance_newidle\n"
                          "sfp-bench rr classify ev cpu=1 t=10.000050 comm=x addr=0xffff888000200080/4 "
                          "chain=sched_balance_rq<sched_balance_newidle\n"
                          "sfp-bench rr classify ev cpu=1 t=10.000100")
        c = classify(*parse(log.splitlines(), "rr"))
        self.assertEqual(c.unexplained, 2)  # both before the wakeup's set (t=10.0001)
        self.assertAlmostEqual(c.unexplained_last, 0.00005)
        m = merge([c, c])
        self.assertEqual((m.unexplained, m.unexplained_last), (4, c.unexplained_last))
