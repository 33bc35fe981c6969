# SPDX-License-Identifier: GPL-2.0
"""One table across benchmark runs: kernel lines and newly-idle features.

Each RUN is an output directory of sfp bench (its meta.tsv and the
results.tsv that scripts/bench-report.py wrote). A run is one kernel line
in one mode of the sched features that skip newly-idle balances by a rule
of their own (sfp bench -F: 'measure' turns NI_RANDOM and NI_RATE off,
'shipped' keeps them as the line ships them). Per run and topology the
table gives, baseline -> patched, the medians over the repetitions and
the per-repetition range:

  attempts  newly-idle balance attempts per idle entry, light load (rr)
  wasted    newly-idle balances that found nothing to pull, per idle
            entry, light load (rr; lb_balanced + lb_failed, all levels)
  pulls     tasks gained by newly-idle balancing under bursts of real
            overload (mix; lb_gained, all levels)
  writes    writes to root_task_group.load_avg, pool (watchpoint; the
            largest over the repetitions for patched)

and, from the per-repetition ratios of pulls (patched over baseline,
the two kernels of a repetition boot back to back), what loss of useful
pulls the run could have seen: the smallest loss a one-sided test at
5% would find with 80% power given the ratios' spread, and the
repetitions a 5% loss would need. The ratios are treated as log-normal
and the spread is the sample's; with fewer than 3 repetitions no power
is stated.
"""
from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import shutil
import statistics
import subprocess
from typing import Mapping, TypeVar
from harness import sfp_errors

# metric keys of results.tsv
ATTEMPTS = "rr.lb.attempts_per_idle"
WASTED = "rr.lb.wasted_per_idle"
PULLS = "mix.lb.gained"
WRITES = "pool.writes.root_tg_load_avg"
GATE_COST = "rr.gate.max_newidle_lb_cost_us"
GATE_IDLE = "rr.gate.mean_avg_idle_us"
LOSS = 0.05          # the loss of useful pulls the issue asks to resolve
ALPHA, POWER = 0.05, 0.80
BOUND_N = 30         # repetitions from which power() states the ratio's bound
K = TypeVar("K", int, str)  # a repetition: its number, or as cost.tsv spells it
KERNELS = ("baseline", "patched")


class RunError(sfp_errors.Failed):
    """A run directory that cannot be read."""


@dataclasses.dataclass(frozen=True)
class Spread:
    low: float
    median: float
    high: float

    @staticmethod
    def of(vals: list[float]) -> "Spread | None":
        """min, median and max of VALS, or None for none."""
        return Spread(min(vals), statistics.median(vals), max(vals)) if vals else None


Both = tuple[Spread | None, Spread | None]  # baseline's, patched's


@dataclasses.dataclass(frozen=True)
class Run:
    """One sfp bench output directory: its meta.tsv and results.tsv."""
    path: pathlib.Path
    version: str
    mode: str
    topologies: tuple[str, ...]
    command: str
    # (kernel, topology, repetition, metric) -> value
    values: dict[tuple[str, str, int, str], float]

    def reps(self, kernel: str, topo: str, metric: str) -> dict[int, float]:
        return {r: v for (k, t, r, m), v in self.values.items()
                if k == kernel and t == topo and m == metric}

    def spread(self, kernel: str, topo: str, metric: str) -> Spread | None:
        return Spread.of(list(self.reps(kernel, topo, metric).values()))

    def both(self, topo: str, metric: str) -> Both:
        return self.spread("baseline", topo, metric), self.spread("patched", topo, metric)


@dataclasses.dataclass(frozen=True)
class Power:
    n: int
    sd_log: float | None           # spread of log(patched/baseline) pulls
    detectable_loss: float | None  # at ALPHA, POWER with n repetitions
    reps_for_loss: int | None      # repetitions for a LOSS loss
    # The ratio itself, from BOUND_N repetitions on (the normal quantile
    # stands for Student's t there): the geometric mean of the ratios and
    # its one-sided lower bound at 1 - ALPHA confidence.
    gmean: float | None = None
    lower: float | None = None


def _tsv(path: pathlib.Path) -> list[list[str]]:
    try:
        return [ln.split("\t") for ln in path.read_text().splitlines() if ln]
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from e


def load(path: pathlib.Path) -> Run:
    """The run in directory PATH, or RunError."""
    meta = {f[0]: f[1:] for f in _tsv(path / "meta.tsv")}
    rows = _tsv(path / "results.tsv")
    if not rows or rows[0][:6] != ["kernel", "topology", "vcpus", "rep", "metric", "value"]:
        raise RunError(f"{path / 'results.tsv'}: not a results table of scripts/bench-report.py")
    values: dict[tuple[str, str, int, str], float] = {}
    for f in rows[1:]:
        if len(f) != 6 or f[5] in ("", "None"):
            continue
        try:
            values[(f[0], f[1], int(f[3]), f[4])] = float(f[5])
        except ValueError as e:
            raise RunError(f"{path / 'results.tsv'}: bad row {f!r}") from e
    topos = tuple((meta.get("topologies") or [""])[0].split())
    if not topos:
        raise RunError(f"{path / 'meta.tsv'}: no topologies row")
    return Run(path=path, version=(meta.get("version") or ["?"])[0],
               mode=(meta.get("newidle_features") or ["measure"])[0],
               topologies=topos, command=(meta.get("command") or ["?"])[0], values=values)


def plot_data(runs: list[Run], topology: str = "") -> dict:
    """What scripts/bench-lines-plot.py draws: {line: {mode: {kernel:
    {attempts|wasted|pulls: [value per repetition]}}}}, for TOPOLOGY (by
    default each run's first)."""
    out: dict = {}
    for run in runs:
        topo = topology or run.topologies[0]
        modes = out.setdefault(".".join(run.version.split(".")[:2]), {})  # 6.12.118 -> 6.12
        if run.mode in modes:
            raise RunError(f"{run.path}: a second {run.mode} run of {run.version}")
        modes[run.mode] = {
            k: {name: [v for _, v in sorted(run.reps(k, topo, metric).items())]
                for name, metric in (("attempts", ATTEMPTS), ("wasted", WASTED),
                                     ("pulls", PULLS))}
            for k in KERNELS}
    return out


def plot(runs: list[Run], outdir: pathlib.Path) -> list[str]:
    """OUTDIR/bench-lines-LINE.png for each line of RUNS
    (scripts/bench-lines-plot.py, with Debian's matplotlib); their paths."""
    script = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "bench-lines-plot.py"
    p = subprocess.run([python_with_matplotlib(), str(script), str(outdir)],
                       input=json.dumps(plot_data(runs)), text=True, capture_output=True,
                       check=False)
    if p.returncode:
        raise RunError(f"scripts/bench-lines-plot.py: {p.stderr.strip()[-300:]}")
    return p.stdout.split()


def pull_ratios(a: Mapping[K, float], b: Mapping[K, float]) -> list[float]:
    """Patched's pulls over baseline's, per repetition both have (a:
    baseline's by repetition, b: patched's); none where baseline pulled
    nothing."""
    return [b[r] / a[r] for r in sorted(a) if r in b and a[r] > 0]


def power(ratios: list[float]) -> Power:
    """What a one-sided paired test on log ratios could resolve."""
    n = len(ratios)
    logs = [math.log(r) for r in ratios if r > 0]
    if n < 3 or len(logs) != n:
        return Power(n, None, None, None)
    sd = statistics.stdev(logs)
    za = statistics.NormalDist().inv_cdf(1 - ALPHA)
    z = za + statistics.NormalDist().inv_cdf(POWER)
    loss = 1 - math.exp(-z * sd / math.sqrt(n))
    need = math.ceil((z * sd / -math.log(1 - LOSS)) ** 2) if sd > 0 else n
    mean = statistics.fmean(logs)
    bound = (math.exp(mean), math.exp(mean - za * sd / math.sqrt(n))) if n >= BOUND_N \
        else (None, None)
    return Power(n, sd, loss, max(need, 3), *bound)


COST = (("rr.sched_balance_newidle.us_per_call", "time per sched_balance_newidle() call, us"),
        ("rr.sched_balance_newidle.us_per_tx",
         "time in sched_balance_newidle() per transaction, us"),
        ("rr.lat_p50_us", "request latency p50, us"),
        ("rr.lat_p99_us", "request latency p99, us"))


def cost_table(runs: list[Run]) -> str:
    """Per run, topology and kernel: the profiler's times and the request
    latency, median (min..max) and the spread (max - min) / median. Under
    -icount these times are instructions x 2^shift ns."""
    L = ["| run | topology | kernel | " + " | ".join(f"{what} (spread)" for _, what in COST) + " |",
         "|---|---|---|" + "---|" * len(COST)]
    for run, t, k in ((run, t, k) for run in runs for t in run.topologies for k in KERNELS):
        cells = [_timed(run.spread(k, t, key)) for key, _ in COST]
        L.append(f"| {run.path.name} | {t} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


def _timed(sp: Spread | None) -> str:
    if sp is None:
        return "-"
    rel = f"{100 * ((sp.high - sp.low) / sp.median):.2f}%" if sp.median else "-"
    return f"{_f(sp.median)} ({_f(sp.low)}..{_f(sp.high)}; {rel})"


def _f(v: float | None) -> str:
    if v is None:
        return "-"
    if v == int(v) and abs(v) < 1e9:
        return str(int(v))
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _sp(s: Spread | None) -> str:
    """median (low..high), or '-'."""
    return "-" if s is None else f"{_f(s.median)} ({_f(s.low)}..{_f(s.high)})"


def _ab(p: Both, ratio: bool = False) -> str:
    a, b = p
    s = f"{_sp(a)} -> {_sp(b)}"
    if ratio and a and b and a.median:
        s += f", x{_f(b.median / a.median)}"
    return s


CLASSIFY = ("balances", "pulled", "unexplained", "after_clear", "sets", "empty_sets")


@dataclasses.dataclass(frozen=True)
class ClassRow:
    """Patched's classify phase, summed over the repetitions."""
    version: str
    mode: str
    topology: str
    workload: str
    reps: int
    counts: dict[str, int]
    # the latest unexplained balance after its watch began
    unexplained_last_ms: float | None = None

    @property
    def wasted(self) -> int:
        return self.counts["balances"] - self.counts["pulled"]

    @property
    def per_empty_set(self) -> float | None:
        e = self.counts["empty_sets"]
        return self.wasted / e if e else None


def class_rows(run: Run) -> list[ClassRow]:
    """RUN's ClassRows, per topology and workload that ran the classify phase."""
    out = []
    for t in run.topologies:
        for wl in ("rr", "mix"):
            per = {k: run.reps("patched", t, f"{wl}.classify.{k}") for k in CLASSIFY}
            if not per["balances"]:
                continue
            last = run.reps("patched", t, f"{wl}.classify.unexplained_last_ms").values()
            out.append(ClassRow(run.version, run.mode, t, wl, len(per["balances"]),
                                {k: int(sum(v.values())) for k, v in per.items()},
                                max(last, default=None)))
    return out


def class_table(runs: list[Run]) -> str:
    """Patched's newly-idle balances by what the specification says of
    them (harness/sfp_classify.py): every balance after a set of the
    indicator is asked for; one with no set before it is not."""
    L = ["| line | newly-idle features | topology | workload | repetitions | balances | pulled | "
         "with no set before them (latest, after the watch began) | after their set was cleared | "
         "sets | sets balanced, nothing pulled | wasted balances | wasted per such set (floor 1) | "
         "the floor as a share of baseline's waste, rr |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        for r in class_rows(run):
            c = r.counts
            a, b = run.both(r.topology, WASTED)
            share = f"{100 * b.median / a.median * c['empty_sets'] / r.wasted:.2g}%" \
                if r.workload == "rr" and r.wasted and a and b and a.median else "-"
            last = f" (<= {_f(r.unexplained_last_ms)} ms)" \
                if c["unexplained"] and r.unexplained_last_ms is not None else ""
            L.append(f"| {r.version} | {r.mode} | {r.topology} | {r.workload} | {r.reps} | "
                     f"{c['balances']} | {c['pulled']} | {c['unexplained']}{last} | "
                     f"{c['after_clear']} | {c['sets']} | {c['empty_sets']} | {r.wasted} | "
                     f"{_f(r.per_empty_set)} | {share} |")
    if len(L) == 2:
        return ""
    L += ["", "Sums over the repetitions of patched's classify phase (one-level topologies: every "
          "newly-idle balance is at the lowest level the watch sees). A balance with no set before "
          "it breaks the specification; the rest are asked for by it: a runqueue did reach two "
          "tasks. A set that no balance turned into a pull costs this design at least the one "
          "balance whose root-level pass clears it (floor 1); more means CPUs entered idle while a "
          "runqueue still held two tasks that were not worth or not allowed to move. The last "
          "column scales the light load's measured waste (patched over baseline, medians of the "
          "counting phase) by the classify phase's floor over its wasted balances: the least waste "
          "this design can leave on that load, against the 1% target."]
    return "\n".join(L) + "\n"


def table(runs: list[Run]) -> str:
    """The table across RUNS, one row per run and topology, and its notes."""
    L = ["| line | newly-idle features | topology | attempts per idle entry, rr | "
         "wasted balances per idle entry, rr | tasks pulled, mix | pulls patched/baseline per "
         "repetition | root load_avg writes, pool | smallest loss of pulls seen (n) | repetitions "
         "for a 5% loss | baseline's cost gate: max_newidle_lb_cost vs avg_idle, ms |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for run, t in ((run, t) for run in runs for t in run.topologies):
        ratios = pull_ratios(run.reps("baseline", t, PULLS), run.reps("patched", t, PULLS))
        pw = power(ratios)
        seen = "-" if pw.detectable_loss is None else f"{100 * pw.detectable_loss:.0f}% ({pw.n})"
        need = "-" if pw.reps_for_loss is None else str(pw.reps_for_loss)
        wa, wb = run.both(t, WRITES)
        # baseline's max_newidle_lb_cost against its avg_idle
        c, i = run.spread("baseline", t, GATE_COST), run.spread("baseline", t, GATE_IDLE)
        gate = "-" if c is None or i is None else f"{_f(c.median / 1000)} vs {_f(i.median / 1000)}"
        L.append(f"| {run.version} | {run.mode} | {t} | {_ab(run.both(t, ATTEMPTS), True)} | "
                 f"{_ab(run.both(t, WASTED), True)} | {_ab(run.both(t, PULLS))} | "
                 f"{_sp(Spread.of(ratios))} | {'-' if wa is None else _f(wa.median)} -> "
                 f"{'-' if wb is None else _f(wb.high)} | {seen} | {need} | {gate} |")
    L += ["", "The cost gate: a newly-idle balance also stops when the CPU's average idle time is "
          "shorter than the domain's largest recent balance cost (max_newidle_lb_cost, debugfs, "
          "largest over domains, and sched/debug's avg_idle, mean over CPUs, after the light load; "
          "medians). Where it is above avg_idle, baseline's attempts are cut by that gate, not by "
          "the overload indicator.", "",
          "Medians over the repetitions, (min..max); `x` is patched median over baseline median. "
          f"Power: one-sided test at {ALPHA:.0%} with {POWER:.0%} power on the log of the "
          "per-repetition pull ratios, their spread taken from the run.", "",
          "Made from: " + "; ".join(f"`{r.command}` ({r.version}, {r.mode})" for r in runs)]
    return "\n".join(L) + "\n"


def python_with_matplotlib() -> str:
    """Debian's python3 has Debian's matplotlib; a python3 earlier in PATH
    (pyenv, venv) may not."""
    for p in ("/usr/bin/python3", "python3"):
        if shutil.which(p) and subprocess.run([p, "-c", "import matplotlib"], capture_output=True,
                                              check=False).returncode == 0:
            return p
    raise RunError("python3 with matplotlib not found: install the Debian package "
                   "'python3-matplotlib' (or run 'make setup' as root)")
