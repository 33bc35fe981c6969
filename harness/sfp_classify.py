# SPDX-License-Identifier: GPL-2.0
"""What set the overload indicator before each newly-idle balance.

The benchmark's guest (scripts/guest/sfp_bench.sh, classify phase) runs a
workload under perf record with three write watchpoints per CPU: the root
domain's overload indicator, and that CPU's lowest domain's newly-idle
lb_count (written when a newly-idle balance starts there) and lb_gained
(written when it pulled a task). Each write is logged as

  sfp-bench WL classify addr indicator ADDRESS VALUE
  sfp-bench WL classify addr cpu N LB_COUNT LB_GAINED
  sfp-bench WL classify ev cpu=N t=SECONDS comm=TASK addr=ADDRESS chain=F1<F2<...

with the kernel call chain innermost first. Since v6.10 the indicator is
stored only when its value changes (set_rd_overloaded()), so every write
flips it, and the writes in time order give its value at every moment;
each 0 -> 1 write is a *set*, by add_nr_running() in an enqueue (a
runqueue reached two tasks) or by a balance's root-level pass. Each
newly-idle balance is attributed to the last set before it, and counts
as pulled if its CPU wrote lb_gained before its next balance; one that
starts after the replay saw that set cleared is still the set's (its gate
read the indicator before another CPU's root-level pass cleared it, or
the per-CPU clocks ordered the two writes so) and is counted apart.

By the specification a balance after a set is asked for (a CPU did hold
two tasks); one with no set before it since the watch began is
*unexplained* (a wrong implementation, or a set the watch missed: one
made between reading the indicator and arming the watchpoints shows as
unexplained balances at the watch's very start, so the latest one's time
from the first write is kept); a write that cannot have flipped the
replayed value (an enqueue's store read as a clear) is out of order.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Iterable

_EV = re.compile(r"cpu=(\d+) t=([0-9.]+) comm=(\S*) addr=(0x[0-9a-f]+)\S* chain=(\S*)")

# Innermost frame patterns: the class whose enqueue called
# add_nr_running(), or a balance's root-level pass.
_CLASS = (("recompute",
           re.compile(r"sched_balance|load_balance|lb_stats|find_busiest|find_src_group")),
          ("fair", re.compile(r"fair|cfs")),
          ("rt", re.compile(r"_rt(_|$)")),
          ("dl", re.compile(r"_dl(_|$)")),
          ("stop", re.compile(r"_stop$")),
          ("ext", re.compile(r"scx")))
# What made the runqueue gain the task, by the first matching frame.
_HOW = (("balance pull", re.compile(r"^(attach_task|attach_tasks|attach_one_task)$")),
        ("fork", re.compile(r"^wake_up_new_task$")),
        ("wakeup", re.compile(r"try_to_wake_up|ttwu")),
        ("migration", re.compile(r"move_queued_task|migrate|push_|pull_|__balance_push")),
        ("newly-idle pass", re.compile(r"^(sched_balance_newidle|newidle_balance)$")),
        ("periodic pass", re.compile(r"sched_balance_domains|sched_balance_softirq|"
                                     r"rebalance_domains|run_rebalance_domains|"
                                     r"nohz_idle_balance|_nohz_idle_balance")))
# Who woke the task, for wakeups, by the first matching frame.
_CAUSE = (("stopper work", re.compile(r"cpu_stop_queue_work|stop_one_cpu|stop_machine")),
          ("workqueue", re.compile(r"kick_pool|__queue_work|queue_work_on|insert_work")),
          ("socket", re.compile(r"^(sock_def_readable|sock_|unix_|sk_)")),
          ("timer", re.compile(r"hrtimer_wakeup|process_timeout")),
          ("futex", re.compile(r"futex")),
          # not irq_exit_rcu, the interrupt's exit: its name says only that
          # it tells RCU
          ("rcu", re.compile(r"^(?!_*irq_exit_rcu$).*rcu")),
          ("irq work or softirq", re.compile(r"wakeup_softirqd|irq_work|ksoftirqd")))
# A wakeup made by the softirq loop itself, or by the interrupt's exit
# that runs it: that is wakeup_softirqd() waking the CPU's ksoftirqd (it
# and wake_up_process() leave no frame of their own: one is inlined, the
# other a tail call). Only when the frame follows the wakeup directly: a
# softirq handler's own wakeup has the handler's frames in between.
_TTWU = re.compile(r"^(try_to_wake_up|ttwu_.*|wake_up_process|wake_up_state)$")
_SOFTIRQ_EXIT = re.compile(r"^(handle_softirqs|__do_softirq|invoke_softirq|_*irq_exit_rcu|"
                           r"wakeup_softirqd)$")


@dataclasses.dataclass(frozen=True)
class Write:
    cpu: int
    t: float
    comm: str
    addr: int
    chain: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Watch:
    indicator: int
    value0: int
    count: dict[int, int]   # lb_count address -> CPU
    gained: dict[int, int]  # lb_gained address -> CPU


@dataclasses.dataclass(frozen=True)
class Setter:
    klass: str   # fair, rt, dl, stop, ext, recompute, or ? (unknown frame)
    how: str     # wakeup, fork, balance pull, migration, newly-idle pass, ...
    cause: str = ""  # a wakeup's source: stopper work, workqueue, socket, ...

    def __str__(self) -> str:
        return f"{self.klass} / {self.how}" + (f" ({self.cause})" if self.cause else "")


@dataclasses.dataclass
class Bucket:
    sets: int = 0
    balances: int = 0
    pulled: int = 0
    sets_balanced: int = 0   # sets followed by at least one balance
    sets_pulled: int = 0     # sets followed by a balance that pulled
    after_clear: int = 0     # balances that started after the replay saw the set cleared


@dataclasses.dataclass
class Classification:
    buckets: dict[str, Bucket]
    balances: int = 0
    pulled: int = 0
    unexplained: int = 0      # no set before it, or the replay read clear
    unexplained_last: float = 0.0  # seconds from the watch's first write to the last of them
    non_flips: int = 0        # writes that did not flip the replayed value
    writes: int = 0


def parse(lines: Iterable[str], wl: str) -> tuple[Watch | None, list[Write]]:
    """The watch and the writes of workload WL in a guest log."""
    ind, value0, count, gained, writes = None, 0, {}, {}, []
    pre = f"sfp-bench {wl} classify "
    for line in lines:
        if not line.startswith(pre):
            continue
        rest = line[len(pre):].split()
        if rest[:2] == ["addr", "indicator"] and len(rest) == 4:
            ind, value0 = int(rest[2], 16), int(rest[3])
        elif rest[:2] == ["addr", "cpu"] and len(rest) == 5:
            count[int(rest[3], 16)] = int(rest[2])
            gained[int(rest[4], 16)] = int(rest[2])
        elif rest[:1] == ["ev"]:
            if m := _EV.search(line):
                writes.append(Write(int(m[1]), float(m[2]), m[3], int(m[4], 16),
                                    tuple(f for f in m[5].split("<") if f)))
    return (None if ind is None else Watch(ind, value0, count, gained)), writes


def _first(frames: Iterable[str], table: tuple[tuple[str, re.Pattern[str]], ...],
           default: str) -> str:
    """The name of TABLE's first pattern that the first matching frame matches."""
    return next((name for f in frames for name, pat in table if pat.search(f)), default)


def setter(chain: tuple[str, ...]) -> Setter:
    """Who made a write: the class (from the innermost frames), how, and a
    wakeup's cause."""
    klass = _first(chain[:4], _CLASS, "?")
    how = _first(chain, _HOW, "other")
    if how != "wakeup":
        return Setter(klass, how)
    waker = [i for i, f in enumerate(chain) if _TTWU.match(f)]
    if waker and waker[-1] + 1 < len(chain) and _SOFTIRQ_EXIT.match(chain[waker[-1] + 1]):
        return Setter(klass, how, "ksoftirqd, from the softirq exit")
    return Setter(klass, how, _first(chain, _CAUSE, "other"))


@dataclasses.dataclass
class _Episode:
    key: str
    balanced: bool = False
    pulled: bool = False


def classify(watch: Watch, writes: list[Write]) -> Classification:
    """Replay the writes in time order; see the module's docstring."""
    out = Classification(buckets={})

    def bucket(key: str) -> Bucket:
        return out.buckets.setdefault(key, Bucket())

    value = watch.value0
    episode: _Episode | None = None       # the set in force
    previous: _Episode | None = None      # the last set, in force or cleared
    episodes: list[_Episode] = []
    if value == 1:
        episode = previous = _Episode("set before the watch started")
        episodes.append(episode)
        bucket(episode.key).sets += 1
    unexplained = _Episode("unexplained")  # a balance's, when no set is before it
    open_balance: dict[int, _Episode] = {}  # CPU -> the set its last balance is attributed to
    ordered = sorted(writes, key=lambda w: (w.t, w.cpu))
    start = ordered[0].t if ordered else 0.0
    for w in ordered:
        if w.addr == watch.indicator:
            out.writes += 1
            s = setter(w.chain)
            value = 1 - value
            if value == 0 and s.klass not in ("recompute", "?"):
                # add_nr_running() only ever stores 1: a write seen out
                # of order; take it as the set it is.
                out.non_flips += 1
                value = 1
            if value == 1:
                episode = previous = _Episode(str(s))
                episodes.append(episode)
                bucket(episode.key).sets += 1
            else:
                episode = None
        elif w.addr in watch.count:
            cpu = watch.count[w.addr]
            open_balance.pop(cpu, None)
            out.balances += 1
            if (ep := episode or previous) is None:
                out.unexplained += 1
                out.unexplained_last = max(out.unexplained_last, w.t - start)
                ep = unexplained
            else:
                # After a clear: its gate read the set before another CPU's
                # root-level pass cleared it (or the clocks reordered them).
                bucket(ep.key).after_clear += episode is None
            bucket(ep.key).balances += 1
            ep.balanced = True
            open_balance[cpu] = ep
        elif w.addr in watch.gained and watch.gained[w.addr] in open_balance:
            ep = open_balance.pop(watch.gained[w.addr])
            out.pulled += 1
            bucket(ep.key).pulled += 1
            ep.pulled = True
    for ep in episodes:
        bucket(ep.key).sets_balanced += ep.balanced
        bucket(ep.key).sets_pulled += ep.pulled
    return out


def _add(into: object, what: object, names: Iterable[str]) -> None:
    for n in names:
        setattr(into, n, getattr(into, n) + getattr(what, n))


def merge(parts: Iterable[Classification]) -> Classification:
    """The sum of PARTS (the latest unexplained balance: the latest of any)."""
    out = Classification(buckets={})
    for c in parts:
        _add(out, c, ("balances", "pulled", "unexplained", "non_flips", "writes"))
        out.unexplained_last = max(out.unexplained_last, c.unexplained_last)
        for k, b in c.buckets.items():
            _add(out.buckets.setdefault(k, Bucket()), b,
                 (f.name for f in dataclasses.fields(Bucket)))
    return out


def floor(c: Classification) -> tuple[int, int, float | None]:
    """(wasted balances, sets that were balanced and pulled nothing,
    wasted per such set). Each such set costs this design at least one
    balance, the one whose root-level pass clears it: 1.0 is its floor."""
    wasted = c.balances - c.pulled
    empty = sum(b.sets_balanced - b.sets_pulled for b in c.buckets.values())
    return wasted, empty, (wasted / empty if empty else None)


def table(c: Classification) -> list[str]:
    """Markdown rows: one per setter, most balances first."""
    rows = sorted(c.buckets.items(), key=lambda kv: (-kv[1].balances, -kv[1].sets, kv[0]))
    return ["| set by (class / how the runqueue gained the task (who woke it)) | sets | "
            "sets followed by a balance | balances | of which after the set was cleared | "
            "balances that pulled |", "|---|---|---|---|---|---|"] + [
        f"| {k} | {b.sets} | {b.sets_balanced} | {b.balances} | {b.after_clear} | {b.pulled} |"
        for k, b in rows]
