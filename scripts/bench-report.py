#!/usr/bin/env python3
"""Turn a scripts/bench.sh run directory into report.md, results.tsv and
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

# Diagnostics that older guest scripts or odd CPU counts may lack.
OPTIONAL = {"rr.gate.max_newidle_lb_cost_us", "rr.gate.mean_avg_idle_us",
            "rr.server_newidle_per_idle", "rr.client_newidle_per_idle",
            # baseline has no indicator to watch
            "rr.writes.indicator", "rr.writes.indicator_per_s",
            "pool.writes.indicator", "pool.writes.indicator_per_s"}


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
    count, profile, fprof, perf, writes = {}, {}, {}, {}, {}
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
    for wl in ("rr", "pool"):
        wr = writes.get(wl, {})
        secs = num(wr, "seconds")
        for key in ("root_tg_load_avg", "indicator"):
            n = num(wr, key)
            m[f"{wl}.writes.{key}"] = n
            m[f"{wl}.writes.{key}_per_s"] = n / secs if n is not None and secs else None
    return m, series, env


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
    data, series = {}, {}
    rawdir = os.path.join(run, "raw")
    for name in sorted(os.listdir(rawdir)):
        mt = re.fullmatch(r"(baseline|patched)-smp(\d+)-r(\d+)", name)
        log = os.path.join(rawdir, name, "guest.log")
        if not mt or not os.path.isfile(log):
            continue
        k, smp, rep = mt.group(1), int(mt.group(2)), int(mt.group(3))
        data[(k, smp, rep)], series[(k, smp, rep)], env = parse_log(log, smp, dur)
        for key in ("rrwork", "poolwork"):
            meta.setdefault(key, env.get(key, "?"))
    if not data:
        sys.exit(f"bench-report.py: error: no guest logs under {rawdir}")
    smps = sorted({s for _, s, _ in data})
    reps = sorted({r for _, _, r in data})

    # results.tsv: every value of every boot.
    with open(os.path.join(run, "results.tsv"), "w") as out:
        out.write("kernel\tvcpus\trep\tmetric\tvalue\n")
        for (k, smp, rep), m in sorted(data.items()):
            for key in METRICS:
                out.write(f"{k}\t{smp}\t{rep}\t{key}\t{'' if m.get(key) is None else m[key]}\n")

    stats = {}
    for smp in smps:
        for key in METRICS:
            for k in KERNELS:
                stats[(k, smp, key)] = spread([data[(k, smp, r)].get(key) for r in reps if (k, smp, r) in data])

    plots = make_plots(run, smps, stats, series)
    write_report(run, meta, smps, reps, stats, plots)
    print(f"bench-report.py: wrote {os.path.join(run, 'report.md')} ({len(data)} boots)")
    for smp in smps:
        a, b = stats[("baseline", smp, "rr.newidle_per_idle")], stats[("patched", smp, "rr.newidle_per_idle")]
        c, d = stats[("baseline", smp, "pool.tg_load_avg_changes")], stats[("patched", smp, "pool.tg_load_avg_changes")]
        print(f"  {smp} vCPUs: newly-idle attempts per idle entry baseline {fmt(a and a[1])} patched {fmt(b and b[1])}"
              f" (ratio {fmt(ratio(a, b))}); root tg_load_avg changes baseline {fmt(c and c[1])} patched {fmt(d and d[1])}")
        e, f = stats[("baseline", smp, "pool.writes.root_tg_load_avg")], stats[("patched", smp, "pool.writes.root_tg_load_avg")]
        g, h = stats[("patched", smp, "rr.writes.indicator")], stats[("patched", smp, "pool.writes.indicator")]
        print(f"  {smp} vCPUs: writes to root_task_group.load_avg (pool, watchpoint) baseline {fmt(e and e[1])} patched {fmt(f and f[1])};"
              f" indicator writes on patched rr {fmt(g and g[1])} pool {fmt(h and h[1])}")
    if args.check:
        sys.exit(check(data, stats, smps))


# The 75% check needs a baseline that balances before most idle entries
# (1.000 on a quiet host); below this it cannot show a fall.
BASELINE_BALANCES = 0.25


def check(data, stats, smps):
    """The smoke checks; returns the exit status."""
    problems = []
    not_made = []
    # Metrics that must exist in every boot. perf shares can be 0, but the
    # totals and counters must be there.
    for (k, smp, rep), m in sorted(data.items()):
        for key in METRICS:
            if m.get(key) is None and key not in OPTIONAL:
                problems.append(f"{k} {smp} vCPUs rep {rep}: {key} was not collected")
    for smp in smps:
        def med(k, key):
            s = stats[(k, smp, key)]
            return s[1] if s else None
        bl, pt = med("baseline", "rr.newidle_per_idle"), med("patched", "rr.newidle_per_idle")
        if bl is not None and pt is not None and bl < BASELINE_BALANCES:
            # The precondition of this check, not a result: baseline did
            # not balance, so no fall can be seen. The other gate of the
            # newly-idle balance (avg_idle below max_newidle_lb_cost) shuts
            # when a vCPU the host did not run makes one balance look long.
            not_made.append(f"{smp} vCPUs: precondition: baseline made {bl} newly-idle attempts per idle entry "
                            f"(fewer than {BASELINE_BALANCES}; its max_newidle_lb_cost "
                            f"{med('baseline', 'rr.gate.max_newidle_lb_cost_us')} us against avg_idle "
                            f"{med('baseline', 'rr.gate.mean_avg_idle_us')} us): the 75% check was not made")
        elif bl is not None and pt is not None and not (bl > 0 and pt <= 0.25 * bl):
            problems.append(f"{smp} vCPUs: newly-idle attempts per idle entry did not fall by 75% (baseline {bl}, patched {pt})")
        bl, pt = med("baseline", "pool.tg_load_avg_changes"), med("patched", "pool.tg_load_avg_changes")
        if bl is not None and pt is not None and not (bl > 0 and pt == 0):
            problems.append(f"{smp} vCPUs: root tg_load_avg changes should be > 0 on baseline and 0 on patched (baseline {bl}, patched {pt})")
        for wl in ("rr", "pool"):
            bl, pt = med("baseline", f"{wl}.writes.root_tg_load_avg"), med("patched", f"{wl}.writes.root_tg_load_avg")
            if pt is not None and pt != 0:
                problems.append(f"{smp} vCPUs, {wl}: patched wrote root_task_group.load_avg {pt} times, expected 0")
            if med("patched", f"{wl}.writes.indicator") is None:
                problems.append(f"{smp} vCPUs, {wl}: no indicator write count on patched")
        bl = med("baseline", "pool.writes.root_tg_load_avg")
        if bl is not None and bl <= 0:
            problems.append(f"{smp} vCPUs, pool: baseline never wrote root_task_group.load_avg under the watchpoint")
        for key in ("rr.idle_entries", "rr.tps", "pool.chunks_per_s", "pool.task_tick_fair.hits", "pool.perf.total_samples"):
            for k in KERNELS:
                v = med(k, key)
                if v is not None and v <= 0:
                    problems.append(f"{smp} vCPUs, {k}: {key} is {v}, expected > 0")
        v = med("baseline", "rr.newidle_lb")
        h = med("baseline", "rr.sched_balance_newidle.hits")
        if v is not None and h is not None and not (v > 0 and h > 0):
            problems.append(f"{smp} vCPUs, baseline: no newly-idle balancing counted (schedstat {v}, profiler {h})")
    for p in problems:
        print(f"bench-report.py: check failed: {p}")
    for n in not_made:
        print(f"bench-report.py: check not made: {n}")
    print(f"bench-report.py: smoke check: {'ok' if not problems else f'{len(problems)} problems'}"
          f"{f', {len(not_made)} checks not made (precondition)' if not_made else ''}")
    return 1 if problems else 0


def make_plots(run, smps, stats, series):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    colors = {"baseline": "tab:red", "patched": "tab:blue"}

    # 1. newly-idle balance attempts per idle entry, both kernels.
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, k in enumerate(KERNELS):
        pts = [(s, stats[(k, s, "rr.newidle_per_idle")]) for s in smps if stats[(k, s, "rr.newidle_per_idle")]]
        xs = [s + (i - 0.5) * 0.15 for s, _ in pts]
        med = [p[1] for _, p in pts]
        err = [[p[1] - p[0] for _, p in pts], [p[2] - p[1] for _, p in pts]]
        ax.errorbar(xs, med, yerr=err, fmt="o-", capsize=4, color=colors[k], label=k)
    ax.set_xticks(smps)
    ax.set_xlabel("vCPUs")
    ax.set_ylabel("attempts per idle entry")
    ax.set_ylim(bottom=0)
    ax.set_title("sfp_rr: newly-idle balance attempts per idle entry\n(median, bars min..max)")
    ax.legend()
    fig.tight_layout()
    files.append(("Newly-idle balance attempts per idle entry", "bench-newidle.png"))
    fig.savefig(os.path.join(run, files[-1][1]), dpi=100)
    plt.close(fig)

    # 2. patched/baseline ratios of medians across vCPU counts.
    keys = [("rr.newidle_lb", "rr newly-idle attempts"), ("rr.sched_balance_newidle.hits", "rr sched_balance_newidle calls"),
            ("rr.tps", "rr transactions/s"), ("rr.lat_p50_us", "rr latency p50"),
            ("pool.task_tick_fair.us_per_call", "pool task_tick_fair time/call"), ("pool.chunks_per_s", "pool throughput")]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in keys:
        pts = [(s, ratio(stats[("baseline", s, key)], stats[("patched", s, key)])) for s in smps]
        pts = [(s, r) for s, r in pts if r is not None]
        if pts:
            ax.plot([s for s, _ in pts], [r for _, r in pts], "o-", label=label)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axhline(0.25, color="gray", lw=0.8, ls="--")
    ax.text(smps[0], 0.27, "seed 2: -75%", color="gray", fontsize=8)
    ax.set_xticks(smps)
    ax.set_xlabel("vCPUs")
    ax.set_ylabel("patched / baseline (medians)")
    ax.set_ylim(bottom=0)
    ax.set_title("patched / baseline across vCPU counts")
    ax.legend(fontsize=8)
    fig.tight_layout()
    files.append(("patched / baseline ratios across vCPU counts", "bench-ratios.png"))
    fig.savefig(os.path.join(run, files[-1][1]), dpi=100)
    plt.close(fig)

    # 3. root tg_load_avg over time, first repetition at the most vCPUs.
    smp = smps[-1]
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in KERNELS:
        rep = min((r for (kk, s, r) in series if kk == k and s == smp and series[(kk, s, r)]), default=None)
        if rep is None:
            continue
        ys = series[(k, smp, rep)]
        ax.plot([0.25 * (i + 1) for i in range(len(ys))], ys, "o-", ms=3, color=colors[k], label=f"{k} (rep {rep})")
    ax.set_xlabel("guest seconds into the run (a sample every 250 ms)")
    ax.set_ylabel("root_task_group tg_load_avg")
    ax.set_title(f"sfp_pool: root group tg_load_avg over time, {smp} vCPUs")
    ax.legend()
    fig.tight_layout()
    files.append((f"Root group tg_load_avg over time ({smp} vCPUs)", "bench-tg-load-avg.png"))
    fig.savefig(os.path.join(run, files[-1][1]), dpi=100)
    plt.close(fig)
    return files


def write_report(run, meta, smps, reps, stats, plots):
    L = []
    w = L.append
    w("# sched-fastpath A/B benchmark: baseline vs patched")
    w("")
    w(f"Made by `{meta.get('command', 'scripts/bench.sh')}` on {meta.get('date', '?')}; "
      f"{len(reps)} repetitions per kernel and vCPU count, {meta.get('dur')} s per workload and phase, "
      "kernels booted in alternating order.")
    w("")
    w("## Read this first")
    w("")
    w("The guests run under QEMU TCG (no usable KVM here), where guest time is emulated and "
      "30-1200x slower than the host. **Counts** (schedstat, function-profiler calls, "
      "debugfs values) are exact and are the result; **times** (marked `*`: throughput, "
      "latency, profiler time) are reported but only their patched/baseline ratio within "
      "this run means anything. Every figure is min / median / max over the repetitions; "
      "the ratio is patched median / baseline median.")
    w("")
    w("## Setup")
    w("")
    w("| | |")
    w("|---|---|")
    for key, label in (("version", "kernel source"), ("source", "source tarball"), ("commit_baseline", "baseline"),
                       ("commit_patched", "patched"), ("config", "config (both kernels)"), ("host_cpu", "host CPU"),
                       ("host_cpus", "host CPUs"), ("host_mem", "host memory"), ("host_os", "host OS"), ("qemu", "QEMU"),
                       ("mem", "guest memory (MiB)"), ("qemu_opts", "QEMU options"), ("append", "guest command line (added to scripts/boot.sh's own)"),
                       ("perf", "perf in the guest"), ("retried", "boots retried after a failure (raw/*.failed)")):
        w(f"| {label} | {meta.get(key, '?')} |")
    w("")
    w("Workloads (bench/): `sfp_rr` runs vCPUs/2 client/server pairs over UNIX socket pairs; server *i* is "
      f"pinned to CPU *i* and computes {meta.get('rrwork', '?')} LCG rounds per request, client *i* to CPU vCPUs/2+*i*, so the "
      "servers keep half the vCPUs busy and no runqueue is meant to hold two tasks. `sfp_pool` runs "
      f"vCPUs CPU-bound threads and 2 x vCPUs threads that compute {meta.get('poolwork', '?')} rounds and sleep 2 ms, all in "
      "the root task group (autogroup off), and samples the root group's `tg_load_avg` from "
      "`/sys/kernel/debug/sched/debug` every 250 ms. Each runs once alone (counters, throughput) and once "
      "under the function profiler (`sched_balance_newidle`, `sched_balance_rq`, `task_tick_fair`) and "
      "`perf record -e cpu-clock -a`. Both kernels: `kernel.sched_schedstats=1`, `NO_NI_RANDOM` "
      "(6.12.y's random newly-idle skip would hide the gate on both).")
    w("")
    w("## Against the seeds")
    w("")
    w("| claim | seed | here (median over repetitions) |")
    w("|---|---|---|")
    for smp in smps:
        a, b = stats[("baseline", smp, "rr.newidle_per_idle")], stats[("patched", smp, "rr.newidle_per_idle")]
        r = ratio(a, b)
        red = f"{100 * (1 - r):.1f}% fewer" if r is not None else "-"
        w(f"| newly-idle balance attempts, request/response, servers on half the CPUs ({smp} vCPUs) | 75% fewer (4 sockets) | "
          f"{red}: {fmt(a and a[1])} -> {fmt(b and b[1])} per idle entry |")
    for smp in smps:
        a, b = stats[("baseline", smp, "pool.task_tick_fair.cpu_share")], stats[("patched", smp, "pool.task_tick_fair.cpu_share")]
        c, d = stats[("baseline", smp, "pool.perf.task_tick_fair")], stats[("patched", smp, "pool.perf.task_tick_fair")]
        w(f"| task_tick_fair() share of CPU time, thread pool in the root group ({smp} vCPUs) | 0.71% -> 0.22% (perf, 16 sockets) | "
          f"profiler time {fmt(a and a[1])}% -> {fmt(b and b[1])}%*; perf cpu-clock samples {fmt(c and c[1])}% -> {fmt(d and d[1])}% |")
    for smp in smps:
        a, b = stats[("baseline", smp, "pool.tg_load_avg_changes")], stats[("patched", smp, "pool.tg_load_avg_changes")]
        e, f = stats[("baseline", smp, "pool.tg_load_avg_max")], stats[("patched", smp, "pool.tg_load_avg_max")]
        w(f"| root group load_avg updated ({smp} vCPUs) | never, with the patch | changes seen: {fmt(a and a[1])} -> {fmt(b and b[1])}; "
          f"largest value {fmt(e and e[1])} -> {fmt(f and f[1])} |")
    def med(k, smp, key):
        st = stats[(k, smp, key)]
        return fmt(st and st[1])
    for smp in smps:
        tg = "pool.writes.root_tg_load_avg"
        w(f"| writes to root_task_group.load_avg's cache line, thread pool ({smp} vCPUs) | none, with the patch | "
          f"{med('baseline', smp, tg + '_per_s')}/s -> {med('patched', smp, tg + '_per_s')}/s "
          f"(exact counts {med('baseline', smp, tg)} -> {med('patched', smp, tg)}, watchpoint) |")
    for smp in smps:
        w(f"| writes to the overload indicator, patched ({smp} vCPUs) | only when its value changes | "
          + ", ".join(f"{wl} {med('patched', smp, wl + '.writes.indicator_per_s')}/s "
                      f"({med('patched', smp, wl + '.writes.indicator')} writes)" for wl in ("rr", "pool"))
          + "; baseline has no indicator |")
    w("")
    w("How to read these:")
    w("")
    w("- `sched_balance_newidle()` is entered on both kernels whenever a CPU is about to idle; the overload "
      "check returns early inside it. So its call count barely moves, while the newly-idle balance attempts "
      "(schedstat `lb_count`, one per `sched_balance_rq()` call it makes) and the time spent in it fall.")
    perf_max = max((v for (k, smp, key), st in stats.items() if key == "pool.perf.task_tick_fair" and st for v in st[:3]), default=None)
    w("- `perf record -e cpu-clock` is a software event sampled from an hrtimer interrupt: it cannot sample "
      "code that runs with interrupts disabled, which is all of the scheduler tick (`task_tick_fair()`) and "
      "everything under the runqueue lock. The seed measured with hardware cycles (NMI sampling); the "
      "guest has no PMU (its console: \"PMU not available due to virtualization, using software events only\"). " + (f"Here `task_tick_fair()` got {fmt(perf_max)}% of the samples at most, on both kernels; "
                             if perf_max is not None else "") +
      "the function profiler's time in it is the stand-in, and it is emulated time.")
    w("- Write counts come from hardware watchpoints (perf breakpoint events on every CPU, set by "
      "`bench/sfp_writes.c` on the addresses of `root_task_group.load_avg` and of CPU 0's "
      "`rq->rd->overloaded`), in a third run of each workload: every write is counted, none "
      "is inferred from a value read later. Per-second figures divide by emulated time.")
    w("- The seed's `task_tick_fair()` saving came from 16 sockets contending for the cache line of "
      "`root_task_group.load_avg`. A TCG guest on 2 host cores has no such contention, so a small time "
      "difference is what to expect; the exact result is that the root group's `load_avg` never changes "
      "on patched.")
    w("")
    for title, fname in plots:
        w(f"![{title}]({fname})")
        w("")
    w("## All metrics")
    for smp in smps:
        w("")
        w(f"### {smp} vCPUs")
        w("")
        w("| metric | unit | baseline min / median / max | patched min / median / max | patched / baseline |")
        w("|---|---|---|---|---|")
        for key, (desc, unit) in METRICS.items():
            a, b = stats[("baseline", smp, key)], stats[("patched", smp, key)]

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
