#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a sfp bench run directory into report.md, results.tsv and
PNG plots. With --check (the smoke mode), also verify that every metric was
collected for every boot and that the counters moved the expected way.

Reads RUNDIR/meta.tsv and RUNDIR/raw/KERNEL-smpN-rR/guest.log, whose
"sfp-bench WORKLOAD PHASE key=value..." lines scripts/guest/sfp_bench.sh wrote.
"""
import argparse
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import sfp_classify  # noqa: E402  (the repository's harness/)

KERNELS = ("baseline", "patched")
FUNCS = ("sched_balance_newidle", "sched_balance_rq", "task_tick_fair")

# metric name -> (description, unit) in report order; the values come
# from parse_log() below.
METRICS = {
    "rr.newidle_per_idle": ("rr: newly-idle balance attempts per idle entry (schedstat)", ""),
    "rr.newidle_lb": ("rr: newly-idle balance attempts, all CPUs (schedstat)", ""),
    "rr.idle_entries": ("rr: idle entries, all CPUs (schedstat sched_goidle)", ""),
    "rr.server_newidle_per_idle": ("rr: ... on the servers' CPUs only", ""),
    "rr.client_newidle_per_idle": ("rr: ... on the clients' CPUs only", ""),
    "rr.newidle_lb_per_tx": ("rr: newly-idle balance attempts per transaction", ""),
    "rr.sched_balance_newidle.hits": ("rr: sched_balance_newidle() calls (function profiler)", ""),
    "rr.sched_balance_newidle.us_per_tx": ("rr: time in sched_balance_newidle() per transaction (profiler)", "us*"),
    "rr.sched_balance_rq.hits": ("rr: sched_balance_rq() calls (function profiler)", ""),
    "rr.sched_balance_rq.time_us": ("rr: time in sched_balance_rq() (profiler)", "us*"),
    "rr.perf.sched_balance_newidle": ("rr: sched_balance_newidle() share of cpu-clock samples (perf)", "%"),
    "rr.gate.max_newidle_lb_cost_us": ("rr: largest max_newidle_lb_cost over domains, after the run (debugfs)", "us*"),
    "rr.gate.mean_avg_idle_us": ("rr: avg_idle, mean over CPUs, after the run (sched/debug)", "us*"),
    "rr.tps": ("rr: transactions per second", "1/s*"),
    "rr.lat_p50_us": ("rr: latency p50", "us*"),
    "rr.lat_p90_us": ("rr: latency p90", "us*"),
    "rr.lat_p99_us": ("rr: latency p99", "us*"),
    "pool.tg_load_avg_changes": ("pool: root tg_load_avg changes between samples (debugfs)", ""),
    "pool.tg_load_avg_max": ("pool: root tg_load_avg, largest sample (debugfs)", ""),
    "pool.task_tick_fair.hits": ("pool: task_tick_fair() calls (function profiler)", ""),
    "pool.task_tick_fair.us_per_call": ("pool: time per task_tick_fair() call (profiler)", "us*"),
    "pool.task_tick_fair.cpu_share": ("pool: task_tick_fair() share of CPU time (profiler time / (vCPUs x seconds))", "%*"),
    "pool.perf.task_tick_fair": ("pool: task_tick_fair() share of cpu-clock samples (perf)", "%"),
    "pool.perf.total_samples": ("pool: cpu-clock samples taken (perf)", ""),
    "pool.chunks_per_s": ("pool: work chunks per second (throughput)", "1/s*"),
    "rr.writes.root_tg_load_avg": ("rr: writes to root_task_group.load_avg (watchpoint, exact)", ""),
    "rr.writes.root_tg_load_avg_per_s": ("rr: ... per second", "1/s*"),
    "rr.writes.indicator": ("rr: writes to the root domain's overload indicator (watchpoint, exact; patched only)", ""),
    "rr.writes.indicator_per_s": ("rr: ... per second", "1/s*"),
    "pool.writes.root_tg_load_avg": ("pool: writes to root_task_group.load_avg (watchpoint, exact)", ""),
    "pool.writes.root_tg_load_avg_per_s": ("pool: ... per second", "1/s*"),
    "pool.writes.indicator": ("pool: writes to the root domain's overload indicator (watchpoint, exact; patched only)", ""),
    "pool.writes.indicator_per_s": ("pool: ... per second", "1/s*"),
}

# The newly-idle load-balance split (schedstat, per workload): attempts
# (the lowest level's lb_count: every attempt starts there), the
# sched_balance_rq() calls that found nothing to do (lb_balanced +
# lb_failed, summed over levels: wasted), those that moved a task, and
# the tasks gained.
for _wl, _what in (("rr", "rr (light)"), ("mix", "mix (bursts of overload)")):
    METRICS.update({
        f"{_wl}.lb.attempts_per_idle": (f"{_what}: newly-idle attempts per idle entry (schedstat, lowest level)", ""),
        f"{_wl}.lb.wasted_per_idle": (f"{_what}: wasted newly-idle balances per idle entry (lb_balanced + lb_failed, all levels)", ""),
        f"{_wl}.lb.moved_per_idle": (f"{_what}: newly-idle balances that moved a task, per idle entry", ""),
        f"{_wl}.lb.gained": (f"{_what}: tasks gained by newly-idle balancing (lb_gained, all levels)", ""),
        f"{_wl}.lb.gained_per_s": (f"{_what}: ... per second", "1/s*"),
        f"{_wl}.lb.balanced": (f"{_what}: newly-idle balances that found the domain balanced (lb_balanced)", ""),
        f"{_wl}.lb.nobusyg": (f"{_what}: ... of which no busier group (lb_nobusyg)", ""),
        f"{_wl}.lb.nobusyq": (f"{_what}: ... of which no busier runqueue (lb_nobusyq)", ""),
        f"{_wl}.lb.failed": (f"{_what}: newly-idle balances that failed to move a task (lb_failed)", ""),
        f"{_wl}.lb.idle_entries": (f"{_what}: idle entries (sched_goidle)", ""),
        f"{_wl}.lb.levels_per_attempt": (f"{_what}: domain levels visited per newly-idle attempt", ""),
    })
    for _l in range(4):
        METRICS[f"{_wl}.lb.level{_l}.lb_count"] = (f"{_what}: newly-idle balances at domain level {_l}", "")
METRICS.update({
    "mix.tps": ("mix: transactions per second", "1/s*"),
    "mix.burst_chunks_per_s": ("mix: burst work chunks per second (useful work done)", "1/s*"),
    "mix.lat_p99_us": ("mix: latency p99", "us*"),
    "rr.work_us": ("rr: the server's compute time per request (profile phase)", "us*"),
    "rr.sched_balance_newidle.us_per_call": ("rr: time per sched_balance_newidle() call (profiler)", "us*"),
    "rr.newidle_cost_over_work": ("rr: time per sched_balance_newidle() call / compute time per request (seed: 0.13 ms / 0.1 ms)", "*"),
    "rr.gate_cost_over_work": ("rr: max_newidle_lb_cost / compute time per request", "*"),
    "cgpool.group_tg_load_avg_changes": ("cgpool: the child group's tg_load_avg changes between samples (debugfs)", ""),
    "cgpool.tg_load_avg_changes": ("cgpool: root tg_load_avg changes between samples (debugfs)", ""),
    "cgpool.chunks_per_s": ("cgpool: work chunks per second (throughput)", "1/s*"),
})
for _wl in ("mix", "cgpool"):
    METRICS.update({
        f"{_wl}.writes.root_tg_load_avg": (f"{_wl}: writes to root_task_group.load_avg (watchpoint, exact)", ""),
        f"{_wl}.writes.root_tg_load_avg_per_s": (f"{_wl}: ... per second", "1/s*"),
        f"{_wl}.writes.indicator": (f"{_wl}: writes to the overload indicator (watchpoint, exact; patched only)", ""),
        f"{_wl}.writes.indicator_per_s": (f"{_wl}: ... per second", "1/s*"),
    })

# The classify phase (patched, v6.10 and later): what set the indicator
# before each newly-idle balance (harness/sfp_classify.py), per boot.
CLASSIFY = {
    "balances": "newly-idle balances at the lowest domain level",
    "pulled": "... of which pulled a task",
    "unexplained": "... with no set of the indicator before them",
    "unexplained_last_ms": "... the latest of them, ms after the watch's first write",
    "after_clear": "... that started after the replay saw their set cleared",
    "sets": "sets of the indicator (0 -> 1 writes)",
    "empty_sets": "sets followed by a balance, none of which pulled",
}
for _wl in ("rr", "mix"):
    for _k, _what in CLASSIFY.items():
        METRICS[f"{_wl}.classify.{_k}"] = (f"{_wl}, classify phase: {_what}", "")

# Fewer refreshes than this from baseline's newly-idle exit under the
# sparse load and the smoke's refresh check is not made (a precondition).
REFRESH_MIN = 8
# The refresh phase (both kernels): refreshes of the idle CPUs' blocked
# load (writes to nohz.next_blocked), by what started them.
REFRESH = {
    "newidle": "blocked-load refreshes started by the newly-idle exit's kick",
    "other": "... started otherwise (the tick's stats kick)",
    "max_gap_ms": "longest time between two refreshes, ms",
    # Whether a refresh could happen at all: the idle balance refreshes
    # only CPUs whose tick is stopped (/proc/timer_list).
    "nohz_cpus": "CPUs whose tick can stop when idle",
    "tick_stops": "idle entries with the tick stopped",
}
for _wl in ("rr", "mix", "sparse"):
    for _k, _what in REFRESH.items():
        METRICS[f"{_wl}.refresh.{_k}"] = (f"{_wl}, refresh phase: {_what}", "ms*" if _k.endswith("_ms") else "")

# Diagnostics that older guest scripts or odd CPU counts may lack.
OPTIONAL = {"rr.gate.max_newidle_lb_cost_us", "rr.gate.mean_avg_idle_us",
            "rr.server_newidle_per_idle", "rr.client_newidle_per_idle",
            # baseline has no indicator to watch
            "rr.writes.indicator", "rr.writes.indicator_per_s",
            "pool.writes.indicator", "pool.writes.indicator_per_s",
            "mix.writes.indicator", "mix.writes.indicator_per_s",
            "cgpool.writes.indicator", "cgpool.writes.indicator_per_s",
            "rr.gate_cost_over_work"}
OPTIONAL |= {k for k in METRICS if ".classify." in k or ".refresh." in k}
# Levels a topology may not have.
OPTIONAL |= {k for k in METRICS if ".lb.level" in k and not k.endswith("level0.lb_count")}


def kv(text):
    return dict(m.groups() for m in re.finditer(r"(\w+)=(\S*)", text))


def num(d, key):
    try:
        return float(d[key])
    except (KeyError, ValueError):
        return None


def parse_log(path, smp, dur):
    """The metrics of one boot, the pool's tg_load_avg series, and the
    guest's parameters (its "sfp-bench env" line)."""
    m, series, env = {}, None, {}
    count, profile, fprof, perf, writes, lb = {}, {}, {}, {}, {}, {}
    levels = {}
    for line in open(path, errors="replace"):
        if line.startswith("sfp-bench env "):
            env = kv(line)
            continue
        f = line.split(None, 3)
        if len(f) < 4 or f[0] != "sfp-bench":
            continue
        wl, phase, rest = f[1], f[2], f[3]
        if phase == "count" and rest.startswith("series "):
            if wl == "pool":
                series = [int(x) for x in kv(rest).get("values", "").split(",") if x]
        elif phase == "count" and "stderr:" not in rest:
            count[wl] = kv(rest)
        elif phase == "profile" and "stderr:" not in rest and not rest.startswith("series "):
            profile[wl] = kv(rest)
        elif phase == "writes" and "stderr:" not in rest:
            writes[wl] = kv(rest)
        elif phase == "refresh" and rest.startswith("newidle="):
            for key, val in kv(rest).items():
                m[f"{wl}.refresh.{key}"] = num({key: val}, key)
        elif phase == "lb":
            d = kv(rest)
            lb[(wl, d.get("level"))] = d
            if d.get("level") not in (None, "all"):
                levels[int(d["level"])] = d.get("name", "?")
        elif phase == "gate":
            for key, val in kv(rest).items():
                m[f"{wl}.gate.{key}"] = num({key: val}, key)
        elif phase == "fprof":
            d = kv(rest)
            fprof[(wl, d.get("func"))] = d
        elif phase == "perf":
            d = kv(rest)
            perf[(wl, d.get("func", "_total"))] = d
    rr, pool = count.get("rr", {}), count.get("pool", {})
    for k in ("newidle_per_idle", "newidle_lb", "idle_entries", "tps", "lat_p50_us", "lat_p90_us", "lat_p99_us"):
        m["rr." + k] = num(rr, k)
    # per_cpu=idle/attempts,... in CPU order: servers first, then clients.
    pairs = int(num(rr, "pairs") or 0)
    cells = [c.split("/") for c in rr.get("per_cpu", "").split(",") if "/" in c]
    for key, part in (("server", cells[:pairs]), ("client", cells[pairs:2 * pairs])):
        idle = sum(int(c[0]) for c in part)
        m[f"rr.{key}_newidle_per_idle"] = sum(int(c[1]) for c in part) / idle if part and idle else None
    tx = num(rr, "transactions")
    m["rr.newidle_lb_per_tx"] = m["rr.newidle_lb"] / tx if tx and m["rr.newidle_lb"] is not None else None
    ptx = num(profile.get("rr", {}), "transactions")
    nb = fprof.get(("rr", "sched_balance_newidle"), {})
    m["rr.sched_balance_newidle.hits"] = num(nb, "hits")
    t = num(nb, "time_us")
    m["rr.sched_balance_newidle.us_per_tx"] = t / ptx if ptx and t is not None else None
    rq = fprof.get(("rr", "sched_balance_rq"), {})
    m["rr.sched_balance_rq.hits"] = num(rq, "hits")
    m["rr.sched_balance_rq.time_us"] = num(rq, "time_us")
    tot = num(perf.get(("rr", "_total"), {}), "total_samples")
    s = num(perf.get(("rr", "sched_balance_newidle"), {}), "samples")
    m["rr.perf.sched_balance_newidle"] = 100 * s / tot if tot and s is not None else None
    for k in ("tg_load_avg_changes", "tg_load_avg_max", "chunks_per_s"):
        m["pool." + k] = num(pool, k)
    tt = fprof.get(("pool", "task_tick_fair"), {})
    hits, t = num(tt, "hits"), num(tt, "time_us")
    m["pool.task_tick_fair.hits"] = hits
    m["pool.task_tick_fair.us_per_call"] = t / hits if hits and t is not None else None
    secs = num(profile.get("pool", {}), "seconds") or dur
    m["pool.task_tick_fair.cpu_share"] = 100 * t / (smp * secs * 1e6) if t is not None else None
    tot = num(perf.get(("pool", "_total"), {}), "total_samples")
    s = num(perf.get(("pool", "task_tick_fair"), {}), "samples")
    m["pool.perf.total_samples"] = tot
    m["pool.perf.task_tick_fair"] = 100 * s / tot if tot and s is not None else None
    for wl in ("rr", "mix"):
        a = lb.get((wl, "all"), {})
        idle = num(a, "idle_entries")
        att, cnt = num(a, "attempts"), num(a, "lb_count")
        bal, fail, gain = num(a, "lb_balanced"), num(a, "lb_failed"), num(a, "lb_gained")
        m[f"{wl}.lb.idle_entries"] = idle
        m[f"{wl}.lb.balanced"], m[f"{wl}.lb.failed"], m[f"{wl}.lb.gained"] = bal, fail, gain
        m[f"{wl}.lb.nobusyg"], m[f"{wl}.lb.nobusyq"] = num(a, "lb_nobusyg"), num(a, "lb_nobusyq")
        if idle and None not in (att, cnt, bal, fail):
            m[f"{wl}.lb.attempts_per_idle"] = att / idle
            m[f"{wl}.lb.wasted_per_idle"] = (bal + fail) / idle
            m[f"{wl}.lb.moved_per_idle"] = (cnt - bal - fail) / idle
        m[f"{wl}.lb.levels_per_attempt"] = cnt / att if att and cnt is not None else None
        secs = num(count.get(wl, {}), "seconds")
        m[f"{wl}.lb.gained_per_s"] = gain / secs if gain is not None and secs else None
        for l in range(4):
            m[f"{wl}.lb.level{l}.lb_count"] = num(lb.get((wl, str(l)), {}), "lb_count")
    mix = count.get("mix", {})
    for k in ("tps", "burst_chunks_per_s", "lat_p99_us"):
        m["mix." + k] = num(mix, k)
    pr = profile.get("rr", {})
    m["rr.work_us"] = num(pr, "work_us")
    h = m["rr.sched_balance_newidle.hits"]
    t = num(nb, "time_us")
    m["rr.sched_balance_newidle.us_per_call"] = t / h if h and t is not None else None
    w = m["rr.work_us"]
    c = m["rr.sched_balance_newidle.us_per_call"]
    m["rr.newidle_cost_over_work"] = c / w if w and c is not None else None
    g = m.get("rr.gate.max_newidle_lb_cost_us")
    m["rr.gate_cost_over_work"] = g / w if w and g is not None else None
    cg = count.get("cgpool", {})
    m["cgpool.group_tg_load_avg_changes"] = num(cg, "group_tg_load_avg_changes")
    m["cgpool.tg_load_avg_changes"] = num(cg, "tg_load_avg_changes")
    m["cgpool.chunks_per_s"] = num(cg, "chunks_per_s")
    for wl in ("rr", "pool", "mix", "cgpool"):
        wr = writes.get(wl, {})
        secs = num(wr, "seconds")
        for key in ("root_tg_load_avg", "indicator"):
            n = num(wr, key)
            m[f"{wl}.writes.{key}"] = n
            m[f"{wl}.writes.{key}_per_s"] = n / secs if n is not None and secs else None
    return m, series, env, levels


def fmt(v):
    if v is None:
        return "-"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.1:
        return f"{v:.3f}"
    return f"{v:.4f}"


def spread(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return min(vals), statistics.median(vals), max(vals), len(vals)


def ratio(a, b):
    """patched/baseline of medians; None when undefined."""
    if a is None or b is None or a[1] == 0:
        return None
    return b[1] / a[1]


# Targets (benchmarks the report prints, not tests): figure, the rule,
# and the threshold.
TARGETS = (
    ("rr.lb.wasted_per_idle", "wasted newly-idle balances per idle entry (light load), patched / baseline", "le", 0.01),
    ("mix.lb.gained", "useful newly-idle pulls (tasks gained, mixed load), patched / baseline", "ge", 0.95),
)


def paired(data, k1, k2, topo, reps, key):
    """patched/baseline per repetition (the kernels of one repetition
    booted back to back): min, median, max, n."""
    rs = []
    for r in reps:
        a, b = data.get((k1, topo, r), {}).get(key), data.get((k2, topo, r), {}).get(key)
        if a and b is not None:
            rs.append(b / a)
    return spread(rs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rundir")
    ap.add_argument("--check", action="store_true",
                    help="smoke mode: fail unless every metric was collected and moved the expected way")
    args = ap.parse_args()
    run = args.rundir
    if not os.path.isfile(os.path.join(run, "meta.tsv")):
        sys.exit(f"bench-report.py: error: {run} is not a bench run directory (no meta.tsv)")
    meta = dict(line.rstrip("\n").split("\t", 1) for line in open(os.path.join(run, "meta.tsv")) if "\t" in line)
    dur = float(meta.get("dur", 5))
    data, series, levels, classes = {}, {}, {}, {}
    rawdir = os.path.join(run, "raw")
    for name in sorted(os.listdir(rawdir)):
        mt = re.fullmatch(r"(baseline|patched)-(\w+?)-r(\d+)", name)
        log = os.path.join(rawdir, name, "guest.log")
        if not mt or not os.path.isfile(log):
            continue
        k, topo, rep = mt.group(1), mt.group(2), int(mt.group(3))
        vcpus = topo_vcpus(meta, topo)
        data[(k, topo, rep)], series[(k, topo, rep)], env, lv = parse_log(log, vcpus, dur)
        if k == "patched":
            lines = open(log, errors="replace").readlines()
            for wl in ("rr", "mix"):
                watch, writes = sfp_classify.parse(lines, wl)
                if watch is not None:
                    c = sfp_classify.classify(watch, writes)
                    classes.setdefault((topo, wl), []).append(c)
                    m = data[(k, topo, rep)]
                    _, empty, _ = sfp_classify.floor(c)
                    m[f"{wl}.classify.balances"], m[f"{wl}.classify.pulled"] = c.balances, c.pulled
                    m[f"{wl}.classify.unexplained"] = c.unexplained
                    m[f"{wl}.classify.unexplained_last_ms"] = round(1000 * c.unexplained_last, 3)
                    m[f"{wl}.classify.after_clear"] = sum(b.after_clear for b in c.buckets.values())
                    m[f"{wl}.classify.sets"] = sum(b.sets for b in c.buckets.values())
                    m[f"{wl}.classify.empty_sets"] = empty
        levels.setdefault(topo, lv)
        for key in ("rrwork", "poolwork"):
            meta.setdefault(key, env.get(key, "?"))
    if not data:
        sys.exit(f"bench-report.py: error: no guest logs under {rawdir}")
    order = meta.get("topologies", meta.get("smps", "")).split()
    order = [t if not t.isdigit() else f"smp{t}" for t in order]
    topos = [t for t in order if any(tt == t for _, tt, _ in data)]
    topos += sorted({t for _, t, _ in data} - set(topos))
    reps = sorted({r for _, _, r in data})

    # results.tsv: every value of every boot.
    with open(os.path.join(run, "results.tsv"), "w") as out:
        out.write("kernel\ttopology\tvcpus\trep\tmetric\tvalue\n")
        for (k, topo, rep), m in sorted(data.items()):
            for key in METRICS:
                out.write(f"{k}\t{topo}\t{topo_vcpus(meta, topo)}\t{rep}\t{key}\t{'' if m.get(key) is None else m[key]}\n")

    stats = {}
    for topo in topos:
        for key in METRICS:
            for k in KERNELS:
                stats[(k, topo, key)] = spread([data[(k, topo, r)].get(key) for r in reps if (k, topo, r) in data])

    plots = make_plots(run, meta, topos, stats, series)
    write_report(run, meta, topos, reps, stats, plots, data, levels)
    if classes:
        with open(os.path.join(run, "report.md"), "a") as out:
            out.write("\n".join(classification_section(topos, classes)) + "\n")
    print(f"bench-report.py: wrote {os.path.join(run, 'report.md')} ({len(data)} boots)")
    for topo in topos:
        def med(k, key):
            st = stats[(k, topo, key)]
            return st and st[1]
        print(f"  {topo}: newly-idle attempts per idle entry (rr) baseline {fmt(med('baseline', 'rr.newidle_per_idle'))}"
              f" patched {fmt(med('patched', 'rr.newidle_per_idle'))}"
              f" (ratio {fmt(ratio(stats[('baseline', topo, 'rr.newidle_per_idle')], stats[('patched', topo, 'rr.newidle_per_idle')]))});"
              f" root tg_load_avg changes baseline {fmt(med('baseline', 'pool.tg_load_avg_changes'))} patched {fmt(med('patched', 'pool.tg_load_avg_changes'))}")
        for wl in ("rr", "mix"):
            print(f"  {topo}: {wl} newly-idle split per idle entry, baseline -> patched: "
                  f"attempts {fmt(med('baseline', wl + '.lb.attempts_per_idle'))} -> {fmt(med('patched', wl + '.lb.attempts_per_idle'))}, "
                  f"wasted {fmt(med('baseline', wl + '.lb.wasted_per_idle'))} -> {fmt(med('patched', wl + '.lb.wasted_per_idle'))}, "
                  f"moved a task {fmt(med('baseline', wl + '.lb.moved_per_idle'))} -> {fmt(med('patched', wl + '.lb.moved_per_idle'))}; "
                  f"tasks gained {fmt(med('baseline', wl + '.lb.gained'))} -> {fmt(med('patched', wl + '.lb.gained'))}; "
                  f"levels per attempt {fmt(med('baseline', wl + '.lb.levels_per_attempt'))} -> {fmt(med('patched', wl + '.lb.levels_per_attempt'))}")
        print(f"  {topo}: writes to root_task_group.load_avg (watchpoint) baseline -> patched: "
              + ", ".join(f"{wl} {fmt(med('baseline', wl + '.writes.root_tg_load_avg'))} -> {fmt(med('patched', wl + '.writes.root_tg_load_avg'))}"
                          for wl in ("rr", "mix", "pool", "cgpool"))
              + "; indicator writes on patched: "
              + ", ".join(f"{wl} {fmt(med('patched', wl + '.writes.indicator'))}" for wl in ("rr", "mix", "pool", "cgpool")))
        print(f"  {topo}: child group tg_load_avg changes (cgpool) baseline {fmt(med('baseline', 'cgpool.group_tg_load_avg_changes'))}"
              f" patched {fmt(med('patched', 'cgpool.group_tg_load_avg_changes'))}")
    for line in target_lines(stats, topos, data, reps):
        print(f"  target: {line}")
    if args.check:
        sys.exit(check(data, stats, topos))


def classification_section(topos, classes):
    """What set the indicator before patched's newly-idle balances, per
    topology and workload, summed over the repetitions (harness/sfp_classify.py)."""
    L = ["", "## What set the indicator before patched's newly-idle balances", "",
         "A phase of its own per workload (`classify`): `perf record` on every CPU with write watchpoints on "
         "the indicator and on that CPU's lowest domain's newly-idle `lb_count` and `lb_gained` (schedstat), "
         "and the kernel call chain of every write. Replayed in time order: every indicator write flips it "
         "(it is stored only when it changes), a 0 -> 1 write is a *set*, by the scheduling class whose "
         "enqueue called `add_nr_running()` or by a balance's root-level pass; each balance is attributed to the "
         "last set before it, and pulled if its CPU wrote `lb_gained` before its next balance. Counts only the "
         "lowest domain level's balances: exact on one-level topologies. Sums over the repetitions.", ""]
    for topo in topos:
        for wl in ("rr", "mix"):
            cs = classes.get((topo, wl))
            if not cs:
                continue
            c = sfp_classify.merge(cs)
            wasted, empty, per = sfp_classify.floor(c)
            L += [f"### {topo}, {wl} ({len(cs)} repetitions)", ""]
            L += sfp_classify.table(c)
            L += ["", f"{c.balances} newly-idle balances, {c.pulled} pulled a task; {c.unexplained} with no set "
                  f"before them (unexplained" + (f", the latest {fmt(1000 * c.unexplained_last)} ms after its "
                                                 "watch's first write" if c.unexplained else "") + f"); {c.writes} indicator writes, {c.non_flips} of them out of order. "
                  f"Wasted balances {wasted}; sets that were balanced and had nothing to pull {empty}"
                  + (f"; wasted balances per such set {fmt(per)} (1 is this design's floor: the balance whose "
                     "root-level pass clears the set)." if per is not None else "."), ""]
    return L


def topo_vcpus(meta, topo):
    """The vCPU count of a topology: from meta.tsv, else smpN's N."""
    row = meta.get(f"topology_{topo}")
    if row:
        return int(row.split("\t")[0])
    mt = re.fullmatch(r"smp(\d+)", topo)
    return int(mt.group(1)) if mt else 0


def target_lines(stats, topos, data, reps):
    """One line per target and topology: the figure, its spread over the
    repetitions' pairs, and whether the target is met."""
    out = []
    for key, what, rule, lim in TARGETS:
        for topo in topos:
            r = ratio(stats[("baseline", topo, key)], stats[("patched", topo, key)])
            pr = paired(data, "baseline", "patched", topo, reps, key)
            if r is None:
                verdict = "not measured (baseline median 0 or missing)"
            else:
                ok = r <= lim if rule == "le" else r >= lim
                verdict = f"{'met' if ok else 'NOT met'} ({'at most' if rule == 'le' else 'at least'} {lim})"
            sp = f", per repetition {fmt(pr[0])}..{fmt(pr[2])} (n={pr[3]})" if pr else ""
            out.append(f"{what}, {topo}: {fmt(r)}{sp}: {verdict}")
    for topo in topos:
        vals = [stats[("patched", topo, f"{wl}.writes.root_tg_load_avg")] for wl in ("rr", "mix", "pool", "cgpool")]
        tot = sum(v[2] for v in vals if v) if any(vals) else None
        out.append(f"writes to root_task_group.load_avg on patched (largest of every workload and repetition), {topo}: "
                   f"{fmt(tot)}: {'met (0)' if tot == 0 else 'NOT met (0)' if tot is not None else 'not measured'}")
    for topo in topos:
        v = [stats[("patched", topo, f"{wl}.writes.indicator_per_s")] for wl in ("rr", "mix", "pool", "cgpool")]
        out.append(f"indicator writes per second under load on patched, {topo}: "
                   + ", ".join(f"{wl} {fmt(x and x[1])}" for wl, x in zip(("rr", "mix", "pool", "cgpool"), v))
                   + " (reported; the writes that store the value already there are counted by KUnit, 0 expected)")
    return out


# The 75% check needs a baseline that balances before most idle entries
# (1.000 on a quiet host); below this it cannot show a fall.
BASELINE_BALANCES = 0.25


def check(data, stats, topos):
    """The smoke checks; returns the exit status."""
    problems = []
    not_made = []
    # Metrics that must exist in every boot. perf shares can be 0, but the
    # totals and counters must be there.
    for (k, topo, rep), m in sorted(data.items()):
        for key in METRICS:
            if m.get(key) is None and key not in OPTIONAL:
                problems.append(f"{k} {topo} rep {rep}: {key} was not collected")
    for topo in topos:
        def med(k, key):
            s = stats[(k, topo, key)]
            return s[1] if s else None
        bl, pt = med("baseline", "rr.newidle_per_idle"), med("patched", "rr.newidle_per_idle")
        # baseline's cost gate shut: few or no newly-idle balances to count
        gate_shut = bl is not None and bl < BASELINE_BALANCES
        if bl is not None and pt is not None and gate_shut:
            # The precondition of this check, not a result: baseline did
            # not balance, so no fall can be seen. The other gate of the
            # newly-idle balance (avg_idle below max_newidle_lb_cost) shuts
            # when a vCPU the host did not run makes one balance look long.
            not_made.append(f"{topo}: precondition: baseline made {bl} newly-idle attempts per idle entry "
                            f"(fewer than {BASELINE_BALANCES}; its max_newidle_lb_cost "
                            f"{med('baseline', 'rr.gate.max_newidle_lb_cost_us')} us against avg_idle "
                            f"{med('baseline', 'rr.gate.mean_avg_idle_us')} us): the 75% check was not made")
        elif bl is not None and pt is not None and not (bl > 0 and pt <= 0.25 * bl):
            problems.append(f"{topo}: newly-idle attempts per idle entry did not fall by 75% (baseline {bl}, patched {pt})")
        bl, pt = med("baseline", "pool.tg_load_avg_changes"), med("patched", "pool.tg_load_avg_changes")
        if bl is not None and pt is not None and not (bl > 0 and pt == 0):
            problems.append(f"{topo}: root tg_load_avg changes should be > 0 on baseline and 0 on patched (baseline {bl}, patched {pt})")
        # The skip is for the root group only: a child group's load_avg
        # must still be updated on patched.
        for k in KERNELS:
            v = med(k, "cgpool.group_tg_load_avg_changes")
            if v is not None and v <= 0:
                problems.append(f"{topo}, {k}: the child group's tg_load_avg never changed under cgpool (expected > 0: only the root group is skipped)")
        for wl in ("rr", "mix", "pool", "cgpool"):
            pt = med("patched", f"{wl}.writes.root_tg_load_avg")
            if pt is not None and pt != 0:
                problems.append(f"{topo}, {wl}: patched wrote root_task_group.load_avg {pt} times, expected 0")
            if med("patched", f"{wl}.writes.indicator") is None:
                problems.append(f"{topo}, {wl}: no indicator write count on patched")
        bl = med("baseline", "pool.writes.root_tg_load_avg")
        if bl is not None and bl <= 0:
            problems.append(f"{topo}, pool: baseline never wrote root_task_group.load_avg under the watchpoint")
        for key in ("rr.idle_entries", "rr.tps", "pool.chunks_per_s", "pool.task_tick_fair.hits", "pool.perf.total_samples",
                    "mix.burst_chunks_per_s", "mix.lb.idle_entries", "cgpool.chunks_per_s"):
            for k in KERNELS:
                v = med(k, key)
                if v is not None and v <= 0:
                    problems.append(f"{topo}, {k}: {key} is {v}, expected > 0")
        # The skip leaves through the newly-idle exit, whose kick refreshes
        # the idle CPUs' blocked load: under the sparse load (the CPUs
        # idle, the indicator mostly clear) patched must start about as
        # many refreshes from the idle loop as baseline. A skip that
        # returned before the exit started none in 6.12's control run
        # (docs/benchmark.md).
        bl, pt = med("baseline", "sparse.refresh.newidle"), med("patched", "sparse.refresh.newidle")
        seen = [k for k in KERNELS if (med(k, "sparse.refresh.newidle") or 0) + (med(k, "sparse.refresh.other") or 0) > 0]
        if bl is not None and pt is not None and len(seen) < len(KERNELS):
            # A watch that saw no refresh at all, by either path, is an
            # instrument that did not work, not a kernel that never refreshes.
            ticks = "; ".join(f"{k}: nohz on {fmt(med(k, 'sparse.refresh.nohz_cpus'))} CPUs, "
                              f"{fmt(med(k, 'sparse.refresh.tick_stops'))} idle entries with the tick stopped"
                              for k in KERNELS if k not in seen)
            not_made.append(f"{topo}: precondition: the refresh watch saw no write under the sparse load on "
                            f"{', '.join(k for k in KERNELS if k not in seen)} ({ticks}): "
                            "the refresh check was not made")
        elif bl is not None and pt is not None:
            if bl < REFRESH_MIN:
                not_made.append(f"{topo}: precondition: baseline's newly-idle exit started {bl} blocked-load "
                                f"refreshes under the sparse load (fewer than {REFRESH_MIN}): the refresh check was not made")
            elif pt < 0.25 * bl:
                problems.append(f"{topo}, sparse: patched's newly-idle exit started {pt} blocked-load refreshes, "
                                f"baseline's {bl}: the skip must still kick the refresh")
        # The instruments see the newly-idle balance on baseline: the
        # profiler counts every call, schedstat the balances the cost
        # gate let through. With that gate shut (the precondition above)
        # schedstat rightly counts none, and only the profiler is checked.
        v = med("baseline", "rr.newidle_lb")
        h = med("baseline", "rr.sched_balance_newidle.hits")
        if v is not None and h is not None and gate_shut and v <= 0:
            if h <= 0:
                problems.append(f"{topo}, baseline: no newly-idle balance call counted (profiler {h})")
            not_made.append(f"{topo}: precondition: baseline's cost gate shut, so schedstat counted "
                            f"{v} newly-idle balances (profiler {h} calls): that count was not checked")
        elif v is not None and h is not None and not (v > 0 and h > 0):
            problems.append(f"{topo}, baseline: no newly-idle balancing counted (schedstat {v}, profiler {h})")
        # The split reads the fields it should: its attempts (taken around
        # the process) agree with those of sfp_rr's own schedstat reader
        # (taken inside it) to within what process start and exit add.
        a, b = med("baseline", "rr.lb.attempts_per_idle"), med("baseline", "rr.newidle_per_idle")
        if a is not None and b is not None and abs(a - b) > 0.25 * max(b, 0.04):
            problems.append(f"{topo}, baseline: the schedstat split's attempts per idle entry ({a}) differ from sfp_rr's ({b})")
    for p in problems:
        print(f"bench-report.py: check failed: {p}")
    for n in not_made:
        print(f"bench-report.py: check not made: {n}")
    print(f"bench-report.py: smoke check: {'ok' if not problems else f'{len(problems)} problems'}"
          f"{f', {len(not_made)} checks not made (precondition)' if not_made else ''}")
    return 1 if problems else 0


def make_plots(run, meta, topos, stats, series):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    colors = {"baseline": "tab:red", "patched": "tab:blue"}
    xs = list(range(len(topos)))

    def bars(fname, title, ylabel, key, log=False, note=None):
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, k in enumerate(KERNELS):
            pts = [stats[(k, t, key)] for t in topos]
            med = [p[1] if p else 0 for p in pts]
            err = [[p[1] - p[0] if p else 0 for p in pts], [p[2] - p[1] if p else 0 for p in pts]]
            ax.bar([x + (i - 0.5) * 0.38 for x in xs], med, 0.38, yerr=err, capsize=3, color=colors[k], label=k)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{t}\n({topo_vcpus(meta, t)} vCPUs)" for t in topos], fontsize=8)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_title(title + "\n(median, bars min..max)", fontsize=10)
        if note:
            ax.text(0.01, 0.97, note, transform=ax.transAxes, fontsize=8, va="top", color="gray")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(run, fname), dpi=100)
        plt.close(fig)
        files.append((title, fname))

    bars("bench-newidle.png", "rr: newly-idle balance attempts per idle entry", "attempts per idle entry",
         "rr.newidle_per_idle", note="seed: 75% fewer on 4 sockets")
    bars("bench-wasted.png", "rr (light load): wasted newly-idle balances per idle entry", "balanced + failed per idle entry",
         "rr.lb.wasted_per_idle", log=True, note="target: patched / baseline at most 1%")
    bars("bench-useful.png", "mix (bursts of overload): tasks gained by newly-idle balancing", "tasks gained per run",
         "mix.lb.gained", note="target: patched / baseline at least 0.95")
    bars("bench-writes.png", "pool: writes to root_task_group.load_avg per second", "writes per second (emulated)",
         "pool.writes.root_tg_load_avg_per_s", note="patched: 0")
    bars("bench-cost.png", "rr: time per sched_balance_newidle() call / compute time per request", "ratio (emulated times)",
         "rr.newidle_cost_over_work", note="seed: 0.13 ms / 0.1 ms = 1.3")

    # root tg_load_avg over time, first repetition of the last topology.
    topo = topos[-1]
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in KERNELS:
        rep = min((r for (kk, t, r) in series if kk == k and t == topo and series[(kk, t, r)]), default=None)
        if rep is None:
            continue
        ys = series[(k, topo, rep)]
        ax.plot([0.25 * (i + 1) for i in range(len(ys))], ys, "o-", ms=3, color=colors[k], label=f"{k} (rep {rep})")
    ax.set_xlabel("guest seconds into the run (a sample every 250 ms)")
    ax.set_ylabel("root_task_group tg_load_avg")
    ax.set_title(f"sfp_pool: root group tg_load_avg over time, {topo}")
    ax.legend()
    fig.tight_layout()
    files.append((f"Root group tg_load_avg over time ({topo})", "bench-tg-load-avg.png"))
    fig.savefig(os.path.join(run, files[-1][1]), dpi=100)
    plt.close(fig)
    return files


def write_report(run, meta, topos, reps, stats, plots, data, levels):
    L = []
    w = L.append

    def med(k, topo, key):
        st = stats[(k, topo, key)]
        return fmt(st and st[1])

    def ab(topo, key):
        a, b = stats[("baseline", topo, key)], stats[("patched", topo, key)]
        r = ratio(a, b)
        return f"{fmt(a and a[1])} -> {fmt(b and b[1])}" + (f" (x{fmt(r)})" if r is not None else "")

    w("# sched-fastpath A/B benchmark: baseline vs patched")
    w("")
    w(f"Made by `{meta.get('command', './sfp bench')}` on {meta.get('date', '?')}; "
      f"{len(reps)} repetitions per kernel and topology, {meta.get('dur')} s per workload and phase, "
      "kernels booted in alternating order" + (f"; wall time {meta['wall']}" if meta.get("wall") else "") + ".")
    w("")
    w("## Read this first")
    w("")
    w("The guests run under QEMU TCG (no usable KVM here), where guest time is emulated and "
      "30-1200x slower than the host. **Counts** (schedstat, function-profiler calls, "
      "watchpoint writes, debugfs values) are exact and are the result; **times** (marked `*`: "
      "throughput, latency, profiler time) are reported but only their patched/baseline ratio within "
      "this run means anything. Every figure is min / median / max over the repetitions; "
      "the ratio is patched median / baseline median, and the targets also give the spread of "
      "the per-repetition ratios (the two kernels of a repetition boot back to back).")
    w("")
    w("## Setup")
    w("")
    w("| | |")
    w("|---|---|")
    for key, label in (("version", "kernel source"), ("source", "source tarball"), ("commit_baseline", "baseline"),
                       ("commit_patched", "patched"), ("config", "config (both kernels)"), ("host_cpu", "host CPU"),
                       ("host_cpus", "host CPUs"), ("host_mem", "host memory"), ("host_os", "host OS"), ("qemu", "QEMU"),
                       ("mem", "guest memory (MiB)"), ("newidle_features", "newly-idle sched features (-F)"), ("qemu_opts", "QEMU options"), ("append", "guest command line (added to sfp boot's own)"),
                       ("perf", "perf in the guest"), ("retried", "boots retried after a failure (raw/*.failed)")):
        w(f"| {label} | {meta.get(key, '?')} |")
    w("")
    w("Topologies (`sfp.toml [topologies]`; levels as the guest's kernel built them):")
    w("")
    w("| topology | vCPUs | QEMU -smp | NUMA nodes | domain levels seen |")
    w("|---|---|---|---|---|")
    for t in topos:
        row = meta.get(f"topology_{t}", "").split("\t")
        lv = levels.get(t, {})
        w(f"| {t} | {topo_vcpus(meta, t)} | {row[1] if len(row) > 1 else '?'} | {row[2] if len(row) > 2 else '?'} | "
          f"{', '.join(f'{i}: {lv[i]}' for i in sorted(lv)) or '?'} |")
    w("")
    w("Workloads (bench/, scripts/guest/sfp_bench.sh): `rr` runs vCPUs/2 client/server pairs over UNIX socket pairs; server *i* is "
      f"pinned to CPU *i* and computes {meta.get('rrwork', '?')} LCG rounds per request, client *i* to CPU vCPUs/2+*i*, so the "
      "servers keep half the vCPUs busy and no runqueue is meant to hold two tasks (the light load). `mix` is `rr` plus vCPUs "
      "unpinned threads that all compute for 30 ms at the start of every 100 ms and sleep in between: bursts of real overload, "
      "where a newly-idle balance has something useful to pull. `pool` runs "
      f"vCPUs CPU-bound threads and 2 x vCPUs threads that compute {meta.get('poolwork', '?')} rounds and sleep 2 ms, all in "
      "the root task group (autogroup off), and samples the root group's `tg_load_avg` from "
      "`/sys/kernel/debug/sched/debug` every 250 ms; `cgpool` is the same pool in a child cgroup (cpu controller), sampling that "
      "group's `tg_load_avg` too. Each runs once alone (counters, throughput, the schedstat split), once under write watchpoints, "
      "and `rr` and `pool` once under the function profiler (`sched_balance_newidle`, `sched_balance_rq`, `task_tick_fair`) and "
      "`perf record -e cpu-clock -a`. Both kernels: `kernel.sched_schedstats=1`, `NO_NI_RANDOM` "
      "(6.12.y's random newly-idle skip would hide the gate on both).")
    w("")
    w("## Targets")
    w("")
    for line in target_lines(stats, topos, data, reps):
        w(f"- {line}")
    w("")
    w("## Against the seeds")
    w("")
    w("| claim | seed | here: baseline -> patched (median over repetitions) |")
    w("|---|---|---|")
    for t in topos:
        a, b = stats[("baseline", t, "rr.newidle_per_idle")], stats[("patched", t, "rr.newidle_per_idle")]
        r = ratio(a, b)
        red = f"{100 * (1 - r):.1f}% fewer" if r is not None else "-"
        w(f"| newly-idle balance attempts, request/response, servers on half the CPUs ({t}) | 75% fewer (4 sockets) | "
          f"{red}: {fmt(a and a[1])} -> {fmt(b and b[1])} per idle entry |")
    for t in topos:
        w(f"| a newly-idle balance against the request's work ({t}) | about 0.13 ms against 0.1 ms (1.3) | "
          f"time per sched_balance_newidle() call / compute time per request {ab(t, 'rr.newidle_cost_over_work')}*; "
          f"max_newidle_lb_cost / compute time {ab(t, 'rr.gate_cost_over_work')}*; compute time {ab(t, 'rr.work_us')} us*; "
          f"latency p50 {ab(t, 'rr.lat_p50_us')} us*, p99 {ab(t, 'rr.lat_p99_us')} us* |")
    for t in topos:
        w(f"| task_tick_fair() share of CPU time, thread pool in the root group ({t}) | 0.71% -> 0.22% (perf, 16 sockets) | "
          f"profiler time {med('baseline', t, 'pool.task_tick_fair.cpu_share')}% -> {med('patched', t, 'pool.task_tick_fair.cpu_share')}%*; "
          f"perf cpu-clock samples {med('baseline', t, 'pool.perf.task_tick_fair')}% -> {med('patched', t, 'pool.perf.task_tick_fair')}% |")
    for t in topos:
        w(f"| root group load_avg updated ({t}) | never, with the patch | changes seen: {ab(t, 'pool.tg_load_avg_changes')}; "
          f"largest value {ab(t, 'pool.tg_load_avg_max')}; child group's changes (cgpool) {ab(t, 'cgpool.group_tg_load_avg_changes')} |")
    for t in topos:
        w(f"| writes to root_task_group.load_avg, per second ({t}) | none, with the patch | "
          + ", ".join(f"{wl} {med('baseline', t, wl + '.writes.root_tg_load_avg_per_s')} -> {med('patched', t, wl + '.writes.root_tg_load_avg_per_s')}"
                      for wl in ("rr", "mix", "pool", "cgpool")) + " (watchpoint) |")
    for t in topos:
        w(f"| writes to the overload indicator per second, patched ({t}) | only when its value changes | "
          + ", ".join(f"{wl} {med('patched', t, wl + '.writes.indicator_per_s')}" for wl in ("rr", "mix", "pool", "cgpool"))
          + "; baseline has no indicator |")
    w("")
    w("## Useful and wasted newly-idle work (schedstat)")
    w("")
    w("Per idle entry, summed over CPUs; *attempts* counts the lowest domain level's `lb_count` (every newly-idle "
      "attempt starts there), *wasted* the `sched_balance_rq()` calls of all levels that found the domain balanced "
      "(`lb_balanced`, which includes `lb_nobusyg` and `lb_nobusyq`) or moved nothing (`lb_failed`), *moved* those "
      "that moved a task; *gained* is the tasks pulled (`lb_gained`) over the whole run.")
    w("")
    w("| topology | workload | attempts | wasted | moved a task | tasks gained | no busier group / queue | levels per attempt |")
    w("|---|---|---|---|---|---|---|---|")
    for t in topos:
        for wl in ("rr", "mix"):
            w(f"| {t} | {wl} | {ab(t, wl + '.lb.attempts_per_idle')} | {ab(t, wl + '.lb.wasted_per_idle')} | "
              f"{ab(t, wl + '.lb.moved_per_idle')} | {ab(t, wl + '.lb.gained')} | "
              f"{med('baseline', t, wl + '.lb.nobusyg')} / {med('baseline', t, wl + '.lb.nobusyq')} -> "
              f"{med('patched', t, wl + '.lb.nobusyg')} / {med('patched', t, wl + '.lb.nobusyq')} | "
              f"{ab(t, wl + '.lb.levels_per_attempt')} |")
    w("")
    w("Per domain level (newly-idle `lb_count`, rr, baseline -> patched):")
    w("")
    w("| topology | " + " | ".join(f"level {i}" for i in range(4)) + " |")
    w("|---|---|---|---|---|")
    for t in topos:
        lv = levels.get(t, {})
        w(f"| {t} | " + " | ".join((f"{lv[i]}: {ab(t, f'rr.lb.level{i}.lb_count')}" if i in lv else "-") for i in range(4)) + " |")
    flat = [t for t in topos if re.fullmatch(r"smp\d+", t)]
    if len(flat) >= 2:
        lo, hi = flat[0], flat[-1]
        w("")
        w(f"From {lo} to {hi} (flat guests), how each figure grows (median at {hi} / median at {lo}):")
        w("")
        w("| figure | baseline | patched |")
        w("|---|---|---|")
        for key in ("rr.lb.attempts_per_idle", "rr.lb.wasted_per_idle", "mix.lb.gained", "pool.writes.root_tg_load_avg_per_s",
                    "rr.writes.indicator_per_s", "mix.writes.indicator_per_s"):
            cells = []
            for k in KERNELS:
                a, b = stats[(k, lo, key)], stats[(k, hi, key)]
                cells.append(fmt(b[1] / a[1]) if a and b and a[1] else "-")
            w(f"| {METRICS[key][0]} | {cells[0]} | {cells[1]} |")
    w("")
    w("How to read these:")
    w("")
    w("- `sched_balance_newidle()` is entered on both kernels whenever a CPU is about to idle; the overload "
      "check returns early inside it. So its call count barely moves, while the newly-idle balance attempts "
      "(schedstat `lb_count`, one per `sched_balance_rq()` call it makes) and the time spent in it fall.")
    perf_max = max((v for (k, t, key), st in stats.items() if key == "pool.perf.task_tick_fair" and st for v in st[:3]), default=None)
    w("- `perf record -e cpu-clock` is a software event sampled from an hrtimer interrupt: it cannot sample "
      "code that runs with interrupts disabled, which is all of the scheduler tick (`task_tick_fair()`) and "
      "everything under the runqueue lock. The seed measured with hardware cycles (NMI sampling); the "
      "guest has no PMU (its console: \"PMU not available due to virtualization, using software events only\"). " + (f"Here `task_tick_fair()` got {fmt(perf_max)}% of the samples at most, on both kernels; "
                             if perf_max is not None else "") +
      "the function profiler's time in it is the stand-in, and it is emulated time.")
    w("- Write counts come from hardware watchpoints (perf breakpoint events on every CPU, set by "
      "`bench/sfp_writes.c` on the addresses of `root_task_group.load_avg` and of CPU 0's "
      "`rq->rd->overloaded`), in a run of each workload of its own: every write is counted, none "
      "is inferred from a value read later. Per-second figures divide by emulated time.")
    w("- The seed's `task_tick_fair()` saving came from 16 sockets contending for the cache line of "
      "`root_task_group.load_avg`. A TCG guest on 2 host cores has no such contention, so a small time "
      "difference is what to expect; the exact result is that the root group's `load_avg` is never written "
      "on patched.")
    w("- The cost ratio divides emulated times: TCG runs the guest's instructions at different speeds "
      "(a lock or an atomic costs far more than an LCG round), so it is not the seed's machine's ratio; "
      "what it shows is how the two compare on one run.")
    w("")
    for title, fname in plots:
        w(f"![{title}]({fname})")
        w("")
    w("## All metrics")
    for t in topos:
        w("")
        w(f"### {t} ({topo_vcpus(meta, t)} vCPUs)")
        w("")
        w("| metric | unit | baseline min / median / max | patched min / median / max | patched / baseline |")
        w("|---|---|---|---|---|")
        for key, (desc, unit) in METRICS.items():
            a, b = stats[("baseline", t, key)], stats[("patched", t, key)]
            if a is None and b is None:
                continue

            def cell(s):
                return f"{fmt(s[0])} / {fmt(s[1])} / {fmt(s[2])}" + ("" if s[3] == len(reps) else f" (n={s[3]})") if s else "-"
            r = ratio(a, b)
            w(f"| {desc} | {unit} | {cell(a)} | {cell(b)} | {fmt(r) if r is not None else '-'} |")
    w("")
    w("Every boot's values: `results.tsv`; guest and console logs: `raw/`.")
    with open(os.path.join(run, "report.md"), "w") as out:
        out.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
