# SPDX-License-Identifier: GPL-2.0
"""The benchmark's cost mode (sfp bench --cost): the guest instructions
spent in the newly-idle balance, counted exactly by a QEMU TCG plugin
(bench/sfp_cost_plugin.c). A call's cost does not depend on the host;
which calls happen does, unless the guest is deterministic (--icount).

The host side: the plugin's symbol file from the kernel as built, the
plugin itself, the kernels' one change (the balance noinline), the
figures of each boot (cost.tsv, report.md) and the tables across runs
(sfp bench-lines --insns [--same]).
"""
from __future__ import annotations

import bisect
import csv
import dataclasses
import difflib
import itertools
import pathlib
import re
import struct
import subprocess
import tempfile

from harness import sfp_env
from harness.sfp_benchlines import Spread, power, pull_ratios
from harness.sfp_data import ROOT
from harness import sfp_errors

ENTRY_NAMES = ("sched_balance_newidle", "newidle_balance")
BALANCE_NAMES = ("sched_balance_rq", "load_balance")
# Besides asm_exc_* and asm_sysvec_*: where device and spurious
# interrupts enter (their vector stubs jump here).
IRQ_ENTRIES = ("asm_common_interrupt", "asm_spurious_interrupt")
KERNELS = ("baseline", "patched")


class CostError(sfp_errors.Failed):
    """The cost mode cannot go on; the message says why."""


# --- the symbol file -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Symbols:
    """The addresses the plugin needs, from one kernel as built."""
    name: str          # the newly-idle balance's function name in this kernel
    entry: int
    balance: int       # sched_balance_rq / load_balance
    rets: tuple[int, ...]
    irqs: tuple[int, ...]

    def text(self) -> str:
        return "".join([f"entry {self.entry:x}\n", f"balance {self.balance:x}\n",
                        *(f"ret {a:x}\n" for a in self.rets),
                        *(f"irq {a:x}\n" for a in self.irqs)])


def system_map(path: pathlib.Path) -> dict[str, int]:
    """Name -> address of System.map's text symbols (the first of a name)."""
    rows = [ln.split() for ln in path.read_text(errors="replace").splitlines()]
    return {p[2]: int(p[0], 16) for p in reversed(rows) if len(p) == 3 and p[1] in "tTW"}


def elf_text(vmlinux: pathlib.Path) -> tuple[int, bytes]:
    """(address, bytes) of an x86_64 ELF's .text section."""
    data = vmlinux.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise CostError(f"{vmlinux} is not a little-endian 64-bit ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for sh in sections:
        name_off = sections[shstrndx][4] + sh[0]
        if data[name_off:data.index(b"\0", name_off)] == b".text":
            return sh[3], data[sh[4]:sh[4] + sh[5]]
    raise CostError(f"{vmlinux} has no .text section")


def call_sites(addr: int, text: bytes, target: int) -> list[int]:
    """Addresses of the instructions after each 'call rel32' to target.

    A byte pattern, so a match inside another instruction is possible in
    principle; a false site only matters if it runs inside the balance."""
    out = []
    i = text.find(b"\xe8")
    while 0 <= i <= len(text) - 5:
        if addr + i + 5 + struct.unpack_from("<i", text, i + 1)[0] == target:
            out.append(addr + i + 5)
        i = text.find(b"\xe8", i + 1)
    return out


def symbols(obj: pathlib.Path) -> Symbols:
    """The plugin's addresses for the kernel built in obj (vmlinux, System.map).
    Refused when the entry function makes no direct call of the balance
    proper (a compiler's clone of it would make every call a skip)."""
    smap, vml = obj / "System.map", obj / "vmlinux"
    for f in (smap, vml):
        if not f.is_file():
            raise CostError(f"no {f}: build the kernel first")
    syms = system_map(smap)
    name = next((n for n in ENTRY_NAMES if n in syms), "")
    bal = next((n for n in BALANCE_NAMES if n in syms), "")
    for have, names in ((name, ENTRY_NAMES), (bal, BALANCE_NAMES)):
        if not have:
            raise CostError(f"{smap} has neither of {', '.join(names)} (inlined, or "
                            "not a kernel of a line this project knows)")
    lo, hi = syms.get("__entry_text_start"), syms.get("__entry_text_end")
    if lo is None or hi is None:
        raise CostError(f"{smap} has no __entry_text_start/__entry_text_end (not x86_64?)")
    irqs = sorted(a for n, a in syms.items() if lo <= a < hi and (
        n.startswith(("asm_exc_", "asm_sysvec_")) or n in IRQ_ENTRIES))
    if not irqs:
        raise CostError(f"{smap}: no interrupt entries (asm_exc_*, asm_sysvec_*) in the "
                        "entry text")
    addr, text = elf_text(vml)
    rets = call_sites(addr, text, syms[name])
    if not rets:
        raise CostError(f"{vml}: no direct call of {name} found in .text")
    after = min((a for a in syms.values() if a > syms[name]), default=syms[name] + (1 << 20))
    if not any(syms[name] < a <= after for a in call_sites(addr, text, syms[bal])):
        raise CostError(f"{vml}: {name} makes no direct call of {bal}")
    return Symbols(name, syms[name], syms[bal], tuple(rets), tuple(irqs))


# --- the kernels' one change ------------------------------------------------------

# The definition of the newly-idle balance (not its forward declaration);
# 7.1 has a lock annotation between it and its body.
DEFINITION = re.compile(r"^static int (sched_balance_newidle|newidle_balance)"
                        r"\(struct rq \*this_rq, struct rq_flags \*rf\)\n"
                        r"(?:\t__must_hold\([^\n]*\)\n)?\{$", re.M)


def noinline_patch(fair_c: str) -> str:
    """A patch (git apply) to kernel/sched/fair.c of this text that marks the
    newly-idle balance's definition noinline and changes nothing else. The
    plugin needs the balance as a function of its own; GCC inlines it into
    pick_next_task_fair(), its only caller, in 6.19 and 7.1, and keeps it
    out of line in 6.1 and 6.12, where the mark changes no instruction."""
    found = list(DEFINITION.finditer(fair_c))
    if len(found) != 1:
        raise CostError(f"kernel/sched/fair.c: {len(found)} definitions of the newly-idle "
                        "balance ('static int sched_balance_newidle(struct rq *this_rq, struct "
                        "rq_flags *rf)' or newidle_balance, then its body), where one was expected")
    old = fair_c.splitlines(keepends=True)
    n = fair_c.count("\n", 0, found[0].start())  # the definition's line, from 0
    new = list(old)
    new[n] = old[n].replace("static int ", "static noinline int ", 1)
    return "".join(difflib.unified_diff(old, new, "a/kernel/sched/fair.c", "b/kernel/sched/fair.c"))


# --- the plugin ------------------------------------------------------------------

def plugin_header(env: dict[str, str]) -> pathlib.Path:
    """The qemu-plugin.h to build the plugin with: $QEMU_PLUGIN_H, else the
    one kept in the cache, else taken from Debian's QEMU source (apt-get
    source --download-only qemu, which needs a deb-src line) and kept."""
    if env.get("QEMU_PLUGIN_H"):
        h = pathlib.Path(env["QEMU_PLUGIN_H"])
        if not h.is_file() or "qemu_plugin_install" not in h.read_text(errors="replace"):
            raise CostError(f"QEMU_PLUGIN_H={h} is not QEMU's qemu-plugin.h")
        return h
    q = subprocess.run(["dpkg-query", "-W", "-f=${source:Version}", "qemu-system-x86"],
                       capture_output=True, text=True, check=False)
    version = q.stdout.strip()
    if q.returncode or not version:
        raise CostError("the Debian package 'qemu-system-x86' is not installed (or run "
                        "'make setup' as root); for another QEMU set QEMU_PLUGIN_H to its "
                        "qemu-plugin.h")
    keep = sfp_env.cache_dir(env) / f"qemu-plugin-{version.replace(':', '_')}" / "qemu-plugin.h"
    if keep.is_file():
        return keep
    keep.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=keep.parent.parent) as d:
        tmp = pathlib.Path(d)
        got = subprocess.run(["apt-get", "source", "--download-only", f"qemu={version}"],
                             cwd=tmp, capture_output=True, text=True, check=False)
        tars = sorted(t for t in tmp.glob("qemu_*.orig.tar.*") if not t.name.endswith(".asc"))
        if got.returncode or not tars:
            why = (got.stderr.strip().splitlines() or ["no orig tarball"])[-1]
            raise CostError("the cost plugin needs qemu-plugin.h from Debian's QEMU source, "
                            f"and 'apt-get source --download-only qemu' failed ({why}): add a "
                            "deb-src line to the apt sources and run 'apt-get update', or set "
                            f"QEMU_PLUGIN_H to the header of QEMU {version}")
        x = subprocess.run(["tar", "-xf", str(tars[-1]), "--wildcards", "--strip-components=3",
                            "*/include/qemu/qemu-plugin.h"], cwd=tmp, capture_output=True,
                           check=False)
        if x.returncode or not (tmp / "qemu-plugin.h").is_file():
            raise CostError(f"no include/qemu/qemu-plugin.h in {tars[-1].name}")
        keep.parent.mkdir(exist_ok=True)
        (tmp / "qemu-plugin.h").replace(keep)
    return keep


def build_plugin(header: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """bench/sfp_cost_plugin.c compiled against header into out."""
    r = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-fPIC", "-shared",
                        f"-I{header.parent}", "-o", str(out),
                        str(ROOT / "bench" / "sfp_cost_plugin.c")],
                       capture_output=True, text=True, check=False)
    if r.returncode:
        raise CostError("cannot build bench/sfp_cost_plugin.c: " +
                        " ".join(r.stderr.strip().splitlines()[:2]))
    return out.resolve()


# --- the figures -----------------------------------------------------------------

COUNTERS = ("entries", "skips", "skip_insns", "balances", "balance_insns", "irq_insns", "kernel",
            "user")
WORKLOADS = ("rr", "mix", "pool", "cgpool")
# (key, what): the figures of one workload in one boot.
FIGURES = (
    ("insns_per_idle", "newly-idle instructions per idle entry"),
    ("insns_per_skip", "instructions per call that skipped"),
    ("insns_per_balance", "instructions per call that balanced"),
    ("median_skip", "median instructions of a call that skipped"),
    ("median_balance", "median instructions of a call that balanced"),
    ("balances_per_idle", "calls that balanced per idle entry"),
    ("balances_vs_schedstat", "calls that balanced / schedstat's newly-idle attempts"),
    ("share_permille", "newly-idle share of kernel instructions (per mille)"),
    ("insns_per_request", "newly-idle instructions per request"),
    ("request_insns", "all instructions per request"),
    ("lat_p50_us", "request latency p50, guest us"),
    ("lat_p99_us", "request latency p99, guest us"),
)
# (key, scale, numerator, denominator): the figures that are ratios,
# left out where the denominator is 0.
RATIOS = (("insns_per_skip", 1, "skip_insns", "skips"),
          ("insns_per_balance", 1, "balance_insns", "balances"),
          ("balances_vs_schedstat", 1, "balances", "attempts"),
          ("insns_per_idle", 1, "insns", "idle_entries"),
          ("balances_per_idle", 1, "balances", "idle_entries"),
          ("share_permille", 1000, "insns", "kernel"),
          ("insns_per_request", 1, "insns", "requests"),
          ("request_insns", 1, "all", "requests"))

Marks = dict[int, dict[str, int]]
Hists = dict[tuple[int, str], dict[int, int]]


def _kv(text: str) -> dict[str, str]:
    return dict(w.split("=", 1) for w in text.split() if "=" in w)


def read_log(cost_log: pathlib.Path) -> tuple[Marks, Hists]:
    """The plugin's log: mark number -> its counters, and (mark number, kind
    of call) -> its histogram, how many calls so far cost each number of
    instructions (sums over the vCPUs). A line cut short (QEMU killed at
    the timeout; a histogram without its closing "end") is left out; of
    two histograms of one mark and kind the first is kept (a mark runs once)."""
    marks: Marks = {}
    hists: Hists = {}
    text = cost_log.read_text(errors="replace") if cost_log.is_file() else ""
    for ln in text.splitlines():
        w = ln.split()
        try:
            if ln.startswith("sfp-cost mark="):
                kv = _kv(ln)
                marks[int(kv["mark"])] = {c: int(kv[c]) for c in COUNTERS}
            elif ln.startswith("sfp-cost hist=") and ln.endswith(" end"):
                kv = _kv(" ".join(w[1:3]))
                h = {int(c): int(n) for c, n in (x.split(":", 1) for x in w[3:-1])}
                hists.setdefault((int(kv["hist"]), kv["kind"]), h)
        except (KeyError, ValueError):
            continue
    return marks, hists


def window_median(a: dict[int, int], b: dict[int, int]) -> float | None:
    """The median instruction count of the calls counted in histogram b
    but not yet in a (an earlier mark's); None when there are none. With
    an even number of calls, the mean of the two middle ones."""
    diff = sorted((c, b[c] - a.get(c, 0)) for c in b if b[c] > a.get(c, 0))
    upto = list(itertools.accumulate(k for _, k in diff))  # calls up to each count
    if not upto:
        return None
    n = upto[-1]  # the middle call(s) by rank, from 0
    return sum(diff[bisect.bisect_right(upto, r)][0] for r in ((n - 1) // 2, n // 2)) / 2


def figures(log: pathlib.Path) -> dict[str, dict[str, float]]:
    """Workload -> counters and figures of one boot: its guest log (log/
    guest.log) and the plugin's (log.cost). A workload without both marks
    is left out."""
    m, h = read_log(pathlib.Path(f"{log}.cost"))
    text = (log / "guest.log").read_text(errors="replace") if (log / "guest.log").is_file() else ""

    def line(wl: str, what: str) -> dict[str, str]:
        found = re.search(rf"^sfp-bench {wl} {what} (.*)$", text, re.M)
        return _kv(found.group(1)) if found else {}
    out: dict[str, dict[str, float]] = {}
    for wl in WORKLOADS:
        pair = re.search(rf"^sfp-bench {wl} cost marks=(\d+),(\d+)$", text, re.M)
        if not pair or int(pair.group(1)) not in m or int(pair.group(2)) not in m:
            continue
        ma, mb = int(pair.group(1)), int(pair.group(2))
        f: dict[str, float] = {c: float(m[mb][c] - m[ma][c]) for c in COUNTERS}
        lb, cnt = line(wl, "lb level=all"), line(wl, "count")
        f.update({q: float(cnt[q]) for q in ("lat_p50_us", "lat_p99_us")
                  if cnt.get(q, "").isdigit()})
        # attempts: the lowest level's newly-idle lb_count (a call that
        # balances at all balances there first); gained: tasks pulled by
        # newly-idle balancing, all levels, the useful work
        f.update(idle_entries=float(lb.get("idle_entries", 0)),
                 attempts=float(lb.get("attempts", 0)),
                 requests=float(cnt.get("transactions", 0)), gained=float(lb.get("lb_gained", 0)),
                 insns=f["skip_insns"] + f["balance_insns"])
        f.update({f"median_{k}": med for k in ("skip", "balance") if (ma, k) in h and (mb, k) in h
                  and (med := window_median(h[ma, k], h[mb, k])) is not None})
        every = {**f, "all": f["kernel"] + f["user"]}
        f.update({key: scale * every[num] / every[den] for key, scale, num, den in RATIOS
                  if every[den]})
        out[wl] = f
    return out


def progress(log: pathlib.Path) -> str:
    """The progress line's figure for a boot: rr's instructions per idle entry."""
    rr = figures(log).get("rr", {})
    return f"rr {rr['insns_per_idle']:.0f} newly-idle instructions per idle entry" \
        if "insns_per_idle" in rr else ""


# --- the report ------------------------------------------------------------------

def _num(v: float) -> str:
    if abs(v) >= 10:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _cell(v: list[float]) -> str:
    """median (min-max; spread), the spread being (max - min) / median."""
    sp = Spread.of(v)
    if sp is None:
        return "-"
    spread = f"{100 * (sp.high - sp.low) / sp.median:.1f}%" if sp.median else "-"
    return f"{_num(sp.median)} ({_num(sp.low)}-{_num(sp.high)}; {spread})"


BOOT = re.compile(r"^(baseline|patched)-(.+)-r(\d+)$")


def _boots(out: pathlib.Path) -> list[pathlib.Path]:
    """The boot directories of out/raw."""
    raw = out / "raw"
    return [d for d in sorted(raw.iterdir()) if BOOT.match(d.name) and d.is_dir()] \
        if raw.is_dir() else []


def collect(out: pathlib.Path) -> list[tuple[str, str, int, str, dict[str, float]]]:
    """(kernel, topology, repetition, workload, figures) of every boot in out/raw."""
    rows = []
    for d in _boots(out):
        k, t, r = BOOT.findall(d.name)[0]
        rows += [(k, t, int(r), wl, f) for wl, f in figures(d).items()]
    return rows


def write_report(out: pathlib.Path, command: str) -> int:
    """out/cost.tsv (every figure of every boot) and out/report.md (per
    topology and workload, baseline against patched: median, min-max and
    spread over the repetitions). 1 when a boot has no figures."""
    rows = collect(out)
    keys = [*COUNTERS, "insns", "idle_entries", "attempts", "gained", "requests",
            *(k for k, _ in FIGURES)]
    # the plugin's kernel and user counts, named apart from the kernel column
    head = [{"kernel": "kernel_insns", "user": "user_insns"}.get(c, c) for c in keys]
    tsv = ["kernel\ttopology\trep\tworkload\t" + "\t".join(head)]
    for k, t, r, wl, f in rows:
        tsv.append(f"{k}\t{t}\t{r}\t{wl}\t" + "\t".join(
            "" if c not in f else f"{f[c]:.0f}" if f[c] == int(f[c]) else f"{f[c]:.6g}"
            for c in keys))
    (out / "cost.tsv").write_text("\n".join(tsv) + "\n")
    boots = sorted({(k, t, r) for k, t, r, _, _ in rows})
    meta = _meta(out)
    L = ["# The newly-idle balance's cost in guest instructions", "",
         f"Made by: `{command}`", "",
         f"Kernel {meta.get('version', '?')}, newly-idle features: "
         f"{meta.get('newidle_features', '?')}; busy loops on the host during the boots: "
         f"{meta.get('busy_loops', '0')}; {len(boots)} boots with figures.", "",
         *([f"Deterministic guests (--icount): {meta['icount']}; repetitions' seeds: "
            f"{meta.get('seeds', '?')}. Guest time is the instruction count of all vCPUs "
            "together, 2 ns an instruction, so a latency in guest us is instructions "
            "x 2 ns.", ""] if "icount" in meta else []),
         "Counted by the QEMU plugin bench/sfp_cost_plugin.c: every guest instruction executed "
         "between the entry of the newly-idle balance and its return, interrupts taken meanwhile "
         "apart, in the calls that returned between two marks the guest makes around each "
         "workload. A call balanced when it entered the balance proper (sched_balance_rq, "
         "load_balance before v6.10), else it skipped. Idle entries and attempts (the lowest "
         "domain level's newly-idle lb_count) are schedstat's, read by the guest next to each "
         "mark. The median call of a kind is the middle one of the window's calls (from the "
         "plugin's histograms, the mean of the two middle ones for an even count). Both kernels "
         "were built with the balance marked noinline (cost-noinline-*.patch), so that it has an "
         "entry and return sites. Each cell: median (min-max; spread = (max - min) / median) "
         "over the repetitions.", ""]
    for t in sorted({t for _, t, _, _, _ in rows}):
        L += [f"## {t}", "", "| workload | figure | baseline | patched |", "|---|---|---|---|"]
        for wl, (key, what) in itertools.product(WORKLOADS, FIGURES):
            v = [[f[key] for kk, tt, _, w, f in rows if (kk, tt, w) == (k, t, wl) and key in f]
                 for k in KERNELS]
            if any(v):
                L.append(f"| {wl} | {what} | {_cell(v[0])} | {_cell(v[1])} |")
        L.append("")
    irq = sum(f["irq_insns"] for *_, f in rows)
    L.append(f"Instructions of interrupts taken inside the calls, all boots: {irq:.0f}.")
    # The guest reads schedstat next to each mark: the plugin's balances
    # and schedstat's attempts count the same calls but for those in
    # flight at a mark on other vCPUs.
    off = [f"{k}-{t}-r{r} {wl} ({f['balances']:.0f} against {f['attempts']:.0f})"
           for k, t, r, wl, f in rows if f["balances"] != f["attempts"]]
    L.append(f"Workload windows where the plugin's balanced calls differ from schedstat's "
             f"attempts: {len(off)} of {len(rows)}" + (": " + "; ".join(off) if off else "."))
    (out / "report.md").write_text("\n".join(L) + "\n")
    missing = sorted({d.name for d in _boots(out)} - {f"{k}-{t}-r{r}" for k, t, r in boots})
    for n in missing:
        print(f"sfp: {n}: no cost figures (no marks in its .cost log?)")
    return 1 if missing or not rows else 0


# --- across runs -----------------------------------------------------------------

# (key, what): the figures sfp bench-lines --insns puts side by side.
ACROSS = (("insns_per_idle", "newly-idle instructions per idle entry"),
          ("balances_per_idle", "calls that balanced per idle entry"),
          ("median_skip", "median call that skipped, instructions"),
          ("median_balance", "median call that balanced, instructions"))


def _made_from(runs: list[pathlib.Path]) -> str:
    return "Made from: " + "; ".join(f"`{_meta(r).get('command', '?')}` ({r.name})" for r in runs)


def across(runs: list[pathlib.Path], workloads: tuple[str, ...] = ("rr", "mix")) -> str:
    """One table across cost-mode runs (their cost.tsv and meta.tsv): per
    run, topology and workload, baseline's and patched's figures of ACROSS,
    each median (min-max; spread) over the repetitions."""
    L = ["| run | kernel | newly-idle features | busy loops | topology | workload | figure | "
         "baseline | patched |", "|---|---|---|---|---|---|---|---|---|"]
    # per figure: (cells within 1%, cells with two repetitions or more)
    within: dict[str, list[int]] = {key: [0, 0] for key, _ in ACROSS}
    # per run: its boots, its workload windows, and those whose balanced
    # calls equal schedstat's attempts (the count's check)
    checks: list[str] = []
    for run in runs:
        if not (run / "cost.tsv").is_file() or not (run / "meta.tsv").is_file():
            raise CostError(f"{run}: no cost.tsv and meta.tsv (an sfp bench --cost output "
                            "directory whose report was made)")
        meta, rows = _meta(run), cost_rows(run / "cost.tsv")
        boots = {(r["kernel"], r["topology"], r["rep"]) for r in rows}
        checks.append(f"| {run.name} | {len(boots)} | {len(rows)} | {windows_equal(rows)} |")
        head = (f"| {run.name} | {meta.get('version', '?')} | {meta.get('newidle_features', '?')} "
                f"| {meta.get('busy_loops', '0')} |")
        for t, wl, (key, what) in itertools.product(sorted({r["topology"] for r in rows}),
                                                    workloads, ACROSS):
            v = [[float(r[key]) for r in rows if (r["kernel"], r["topology"], r["workload"])
                  == (k, t, wl) and r.get(key)] for k in KERNELS]
            if not any(v):
                continue
            for vals in v:
                sp = Spread.of(vals)
                if sp is not None and len(vals) > 1 and sp.median:
                    within[key][1] += 1
                    within[key][0] += (sp.high - sp.low) / sp.median <= 0.01
            L.append(f"{head} {t} | {wl} | {what} | {_cell(v[0])} | {_cell(v[1])} |")
    L += ["", "Each cell: median (min-max; spread = (max - min) / median) over the repetitions. A "
          "median call is the middle call of the workload's window (the plugin's histogram of "
          "calls by instructions); the figures per idle entry are sums over the window.", "",
          "Cells (one kernel, topology and workload) whose repetitions are within 1% of "
          "their median: " + "; ".join(f"{what}: {w} of {n}" for (key, what), (w, n) in
                                        zip(ACROSS, within.values())) + ".", "",
          "The count's check: the calls that balanced and schedstat's newly-idle attempts at the "
          "lowest level, read next to the marks, count the same calls but for those made between "
          "a mark and the read beside it.", "",
          "| run | boots | workload windows | windows where they are equal |", "|---|---|---|---|",
          *checks, "", *_pulls(runs), _made_from(runs)]
    return "\n".join(L) + "\n"


def _pulls(runs: list[pathlib.Path]) -> list[str]:
    """The useful pulls under the mixed load per run and topology, and the
    power of their per-repetition ratios (under --icount both boots of a
    repetition have its seed). Empty for runs whose cost.tsv lacks them."""
    L = []
    for run in runs:
        rows = [r for r in cost_rows(run / "cost.tsv") if r["workload"] == "mix"
                and r.get("gained")]
        for t in sorted({r["topology"] for r in rows}):
            a, b = ({r["rep"]: float(r["gained"]) for r in rows
                     if (r["kernel"], r["topology"]) == (k, t)} for k in KERNELS)
            ratios = pull_ratios(a, b)
            pw = power(ratios)
            seen = "-" if pw.detectable_loss is None else f"{100 * pw.detectable_loss:.0f}%"
            need = "-" if pw.reps_for_loss is None else str(pw.reps_for_loss)
            bound = "-" if pw.lower is None else f"{pw.gmean:.3f}, at least {pw.lower:.3f}"
            L.append(f"| {run.name} | {t} | {_cell(list(a.values()))} | {_cell(list(b.values()))}"
                     f" | {_cell(ratios)} | {seen} | {need} | {bound} |")
    if not L:
        return []
    return ["Tasks pulled by newly-idle balancing under the mixed load (lb_gained, all levels), "
            "and the smallest loss of them a one-sided test at 5% with 80% power on the log of "
            "the per-repetition ratios would find (at least 3 repetitions), with the repetitions "
            "a 5% loss would need; from 30 repetitions on, the ratios' geometric mean and its "
            "one-sided 95% lower bound (normal quantile):", "",
            "| run | topology | baseline | patched | patched / baseline, per repetition | "
            "smallest loss seen | repetitions for a 5% loss | geometric mean ratio, 95% lower "
            "bound |", "|---|---|---|---|---|---|---|---|", *L, ""]


# The figures sfp bench-lines --insns --same reports the largest difference of.
SAME = (*ACROSS, ("lat_p50_us", "request latency p50, guest us"))


def _rel(a: str, b: str) -> float | None:
    """|b - a| / |a|, 0 for two equal values, None when a is 0 or either is missing."""
    if not a or not b:
        return None
    x, y = float(a), float(b)
    return 0.0 if x == y else abs(y - x) / abs(x) if x else None


def same(runs: list[pathlib.Path]) -> str:
    """Each later run against the first, workload window by window (same
    kernel, topology, repetition and workload): the windows in both, those
    identical in every column of cost.tsv, and the largest relative
    difference of each figure of SAME."""
    def load(run: pathlib.Path) -> tuple[Window, dict[str, str], tuple[str, str]]:
        if not (run / "cost.tsv").is_file():
            raise CostError(f"{run}: no cost.tsv (an sfp bench --cost output directory whose "
                            "report was made)")
        m = _meta(run)
        return windows(cost_rows(run / "cost.tsv")), m, \
            (m.get("images_baseline", ""), m.get("images_patched", ""))
    first, m0, img0 = load(runs[0])
    L = ["| run | busy loops | seeds | kernel and initramfs bytes | windows in both | "
         "identical in every counter | "
         + " | ".join(f"largest difference: {what}" for _, what in SAME) + " |",
         "|---" * (6 + len(SAME)) + "|"]
    for run in runs[1:]:
        other, m, img = load(run)
        keys = sorted(first.keys() & other.keys())
        if not keys:
            raise CostError(f"{run} and {runs[0]} have no workload window in common (kernel, "
                            "topology, repetition, workload)")
        cells = []
        for key, _ in SAME:
            d = [x for k in keys if (x := _rel(first[k].get(key, ""), other[k].get(key, "")))
                 is not None]
            cells.append(f"{100 * max(d):.2f}%" if d else "-")
        seeds = m.get("seeds", "none (no --icount)")
        if seeds != m0.get("seeds", "none (no --icount)"):
            seeds += f" (the first run: {m0.get('seeds', 'none')})"
        same_bytes = "not recorded" if not all(img + img0) else \
            "the same" if img == img0 else "differ"
        L.append(f"| {run.name} | {m.get('busy_loops', '0')} | {seeds} | {same_bytes} | "
                 f"{len(keys)} | {compare(first, other)[1]} | " + " | ".join(cells) + " |")
    L += ["", f"Each later run against {runs[0].name} (busy loops: {m0.get('busy_loops', '0')}; "
          f"seeds: {m0.get('seeds', 'none (no --icount)')}). A difference is |b - a| / a over "
          "the windows where both have the figure.", "", _made_from(runs)]
    return "\n".join(L) + "\n"


Window = dict[tuple[str, ...], dict[str, str]]


def windows(rows: list[dict[str, str]]) -> Window:
    """A run's rows by (kernel, topology, repetition, workload)."""
    return {(r["kernel"], r["topology"], r["rep"], r["workload"]): r for r in rows}


def compare(a: Window, b: Window) -> tuple[int, int]:
    """The windows both runs have, and those identical in every column
    both runs' cost.tsv have (a later sfp may add one)."""
    keys = a.keys() & b.keys()
    if not keys:
        return 0, 0
    k0 = next(iter(keys))
    cols = a[k0].keys() & b[k0].keys()
    return len(keys), sum(all(a[k][c] == b[k][c] for c in cols) for k in keys)


def cost_rows(tsv: pathlib.Path) -> list[dict[str, str]]:
    """The rows of a run's cost.tsv, one per workload window."""
    with tsv.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def windows_equal(rows: list[dict[str, str]]) -> int:
    """The windows whose balanced calls equal schedstat's attempts (the
    count's check)."""
    return sum(r["balances"] == r["attempts"] for r in rows)


def _meta(run: pathlib.Path) -> dict[str, str]:
    mt = run / "meta.tsv"
    return dict(ln.split("\t", 1) for ln in mt.read_text().splitlines() if "\t" in ln) \
        if mt.is_file() else {}
