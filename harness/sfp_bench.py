# SPDX-License-Identifier: GPL-2.0
"""The A/B benchmark: 'baseline' (both mechanisms backed out) and
'patched' (the series), built from the line's prepared work tree with the
same config (the fragments of kind bench in sfp.toml [kinds]; no KUnit
suites), then, for every repetition, booted once per guest CPU topology
each, alternating which goes first, running in the guest
(scripts/guest/sfp_bench.sh):

  rr        sfp_rr: request/response over UNIX sockets, servers pinned to
            half the vCPUs: the light load (patch 3: newly-idle balance
            attempts per idle entry, and how many found nothing to do)
  mix       sfp_rr -b: the same with bursts of unpinned CPU-bound threads,
            real overload between light phases (patch 3 must keep the
            useful pulls: tasks gained by newly-idle balancing)
  pool      sfp_pool: CPU-bound and wake/sleep threads in the root group
            (patch 2: the root group's tg_load_avg over time)
  cgpool    sfp_pool -g: the same in a child cgroup, whose load_avg
            updates patch 2 must leave alone

each once alone (counters, throughput, latency, the newly-idle
load-balance counters of /proc/schedstat per domain level), once under
write watchpoints (writes to root_task_group.load_avg and the indicator),
rr and mix once with a watchpoint on the idle CPUs' blocked-load refresh
(nohz.next_blocked: how often, and whether the newly-idle exit's kick
started it), and, rr and pool, once under the ftrace function profiler
and perf record -e cpu-clock (calls, time and sample shares of
sched_balance_newidle, sched_balance_rq and task_tick_fair). Then
OUTDIR/report.md with the tables and plots (scripts/bench-report.py).

Both kernels are built and booted by sfp run (-r REF -n bench-baseline /
bench-patched, then --boot-only per boot), in $BUILD/LINE/wt/bench-KERNEL;
a rebuild only compiles what changed. A boot that fails is retried once;
both attempts are kept and the report counts retries. The fields the
guest's write counter watches are located in each kernel as built (sfp
offsets) and passed on its command line.

With --icount the guests are deterministic: guest time is the
instruction count, the random numbers come from QEMU's -seed (repetition
R: seed N+R-1), the RTC follows the virtual clock, and the kernels and
initramfs are built byte for byte the same from the same source
(a reproducible build: a fixed build number and the last commit's date
in uname -v). A boot
of the same kernel, topology and seed then runs the same instructions on
a quiet host or a busy one, and boots may run at once (-j) without
changing a figure. meta.tsv records the seeds and the sha256 of every
image booted.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import fcntl
import functools
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Callable

from harness import sfp_benchlines
from harness import sfp_cost
from harness import sfp_prepare
from harness import sfp_env
from harness import sfp_repeat
from harness import sfp_results
from harness import sfp_run
from harness.sfp_data import ROOT, Data
from harness import sfp_errors

KERNELS = ("baseline", "patched")
MODES = ("measure", "shipped")
PROGRAMS = ("sfp_rr", "sfp_pool", "sfp_writes", "sfp_mark")

# The fields the write counter watches: NAME, the type, the field.
FIELDS = (
    ("tg_load_avg", "struct task_group", "load_avg"),
    ("rq_rd", "struct rq", "rd"),
    ("rd_overloaded", "struct root_domain", "overloaded"),
    ("rq_sd", "struct rq", "sd"),
    ("sd_lb_count", "struct sched_domain", "lb_count[CPU_NEWLY_IDLE]"),
    ("sd_lb_gained", "struct sched_domain", "lb_gained[CPU_NEWLY_IDLE]"),
    ("nohz_next_blocked", "typeof(nohz)", "next_blocked"),
)
# Before v6.10 (the 6.1 line) the indicator is int root_domain::overload.
FIELD_BEFORE_6_10 = ("rd_overloaded", "struct root_domain", "overload")
REQUIRED = ("tg_load_avg", "rq_rd")

OFFSETS_DOC = """\
The offsets of the scheduler fields that the benchmark's write counter
watches, as the kernel built in OBJ (an O= build directory whose
kernel/sched/fair.o is built) lays them out. fair.c is compiled with a
few offsetof() expressions appended, with exactly the command that built
fair.o (its .fair.o.cmd), to assembly only, the way the kernel's
asm-offsets are made; one 'NAME OFFSET' line per field this kernel has:
  tg_load_avg    struct task_group, load_avg
  rq_rd          struct rq, rd
  rd_overloaded  struct root_domain, overloaded, or overload before v6.10
                 (absent without the series)
  rq_sd          struct rq, sd (a CPU's lowest scheduling domain)
  sd_lb_count    struct sched_domain, lb_count[CPU_NEWLY_IDLE]
  sd_lb_gained   struct sched_domain, lb_gained[CPU_NEWLY_IDLE]
                 (the last two are schedstat fields: CONFIG_SCHEDSTATS)
  nohz_next_blocked
                 fair.c's static nohz, next_blocked: when the idle CPUs'
                 blocked load is next refreshed (CONFIG_NO_HZ_COMMON)
The guest program bench/sfp_writes.c turns them into addresses.
"""


class BenchError(sfp_errors.Failed):
    """The benchmark cannot run; the message is one line."""


class BenchRefused(sfp_errors.Refused, BenchError):
    """Bad input, found by plan() before any work; exit status 2."""


# --- the fields' offsets -----------------------------------------------------------

def _compile_command(obj: pathlib.Path) -> str:
    cmdfile = obj / "kernel" / "sched" / ".fair.o.cmd"
    if not cmdfile.is_file():
        raise BenchError(f"no {cmdfile}: build the kernel in {obj} first")
    # kbuild saves the command as savedcmd_..., before v6.2 as cmd_...
    m = re.search(r"^(?:saved)?cmd_kernel/sched/fair\.o := (.*)$",
                  cmdfile.read_text(errors="replace"), re.M)
    cmd = m.group(1).split(" ; ")[0] if m else ""
    marker = " -c -o kernel/sched/fair.o "
    if marker not in cmd:
        raise BenchError(f"unexpected compile command in {cmdfile}")
    return re.sub(r"-Wp,-MMD,[^ ]*", "", cmd.split(marker)[0])


def _offset_of(obj: pathlib.Path, cc: str, tmp: pathlib.Path, name: str, typ: str,
               field: str) -> tuple[str, str, str]:
    """(NAME, its offset or '', the compiler's error output)."""
    src, asm = tmp / f"{name}.c", tmp / f"{name}.s"
    src.write_text('#include "fair.c"\n#include <linux/kbuild.h>\n'
                   "void sfp_offsets(void);\nvoid sfp_offsets(void)\n{\n"
                   f"\tDEFINE(SFP_OFF, offsetof({typ}, {field}));\n}}\n")
    r = subprocess.run(["sh", "-c", f"{cc} -S -o {shlex.quote(str(asm))} "
                        f"{shlex.quote(str(src))}"], cwd=obj, capture_output=True, text=True,
                       check=False)
    m = re.search(r"->SFP_OFF [$#]*([0-9]+) ", asm.read_text(errors="replace")) \
        if r.returncode == 0 else None
    return name, m.group(1) if m else "", r.stderr


def offsets(obj: pathlib.Path) -> list[tuple[str, str]]:
    """(NAME, OFFSET) for each field of FIELDS this kernel has, in that
    order (the indicator's pre-6.10 name last, where it is the one)."""
    cc = _compile_command(obj)
    with tempfile.TemporaryDirectory() as t, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        tmp = pathlib.Path(t)
        got = list(pool.map(lambda f: _offset_of(obj, cc, tmp, *f), FIELDS))
        out = [(n, off) for n, off, _ in got if off]
        if not any(n == "rd_overloaded" for n, _ in out):
            n, off, _ = _offset_of(obj, cc, tmp, *FIELD_BEFORE_6_10)
            if off:
                out.append((n, off))
        errs = {n: e for n, _, e in got}
        for need in REQUIRED:
            if not any(n == need for n, _ in out):
                first = " ".join(errs.get(need, "").splitlines()[:3])
                raise BenchError(f"could not compute the offset of {need} with the command of "
                                 f"{obj}/kernel/sched/.fair.o.cmd: {first}")
    return out


# --- a run ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Bench(sfp_env.OnLine):
    """What a benchmark run is, checked whole before anything is written."""
    choice: sfp_env.LineChoice   # the line, its build directory
    topologies: tuple[str, ...]
    vcpus: dict[str, int]
    duration: int
    reps: int
    mode: str                    # measure or shipped
    out: pathlib.Path
    qemu_opts: str
    mem: int
    smoke: bool
    refs: dict[str, str]         # kernel -> commit of the work tree
    python: str                  # a python3 with matplotlib, for the report
    command: str
    jobs: int = 1                # boots at once (-j)
    cost: pathlib.Path | None = None  # --cost: the qemu-plugin.h to build the plugin with
    busy: int = 0                # --busy: busy loops on the host during the boots
    seed: int | None = None      # --icount: repetition R boots with -seed seed+R-1
    extra_append: str = ""       # BENCH_APPEND: more guest command line

    @property
    def reproducible(self) -> bool:
        """The kernels the same bytes from the same source (--icount)."""
        return self.seed is not None

    @property
    def tree(self) -> pathlib.Path:
        return self.build / "tree"

    @property
    def guest_append(self) -> str:
        return " ".join(filter(None, (f"sfp.dur={self.duration} sfp.newidle={self.mode}",
                                      sfp_env.ICOUNT_APPEND if self.reproducible else "",
                                      self.extra_append)))

    def boot_qemu_opts(self, rep: int) -> str:
        """The QEMU options of repetition rep's boots: -Q's, and under
        --icount the deterministic machine with that repetition's seed."""
        if self.seed is None:
            return self.qemu_opts
        return sfp_env.icount_qemu_opts(self.qemu_opts, self.seed + rep - 1)


def plan(data: Data, env: dict[str, str], *, topologies: str | None, vcpus: str | None,
         duration: str, reps: str, mode: str, out: str, qemu_opts: str | None, smoke: bool,
         command: str, jobs: int = 1, cost: bool = False, busy: int = 0,
         seed: int | None = None) -> Bench:
    """The run the options ask for, or BenchError naming what is wrong."""
    choice = sfp_env.select_line(data, env)
    topos = ("smp2 smp8 smt2x2x2 sock4x2" if topologies is None else topologies).split()
    if vcpus is not None:
        topos = [f"smp{v}" for v in vcpus.split()]
    if smoke:
        topos, duration, reps = ["smp2"], "3", "1"
    accel = sfp_env.accel(env)
    qopts = env.get("QEMU_OPTS", "") if qemu_opts is None else qemu_opts
    icount_no = sfp_env.icount_refused(data, choice.line, env, qopts) if seed is not None else ""
    for bad, why in (
            (not duration.isdigit() or int(duration) == 0,
             f"-d wants a whole number of seconds > 0, not '{duration}'"),
            (not reps.isdigit() or int(reps) == 0,
             f"--reps wants a number of repetitions > 0, not '{reps}'"),
            (not topos, "-t wants at least one topology"),
            (mode not in MODES, f"-F wants 'measure' or 'shipped', not '{mode}'"),
            (jobs < 1, f"-j wants a number of boots at once, 1 or more, not {jobs}"),
            (busy < 0, f"--busy wants a number of busy loops, 0 or more, not {busy}"),
            (cost and smoke, "--cost and --smoke do not go together"),
            (cost and accel != "tcg",
             f"--cost needs QEMU's TCG (its plugins see no KVM guest), not ACCEL={accel}"),
            (seed is not None and seed < 0, f"--seed wants a number, 0 or more, not {seed}"),
            (bool(icount_no), icount_no)):
        if bad:
            raise BenchRefused(why)
    counts = {}
    for t in topos:
        counts[t] = n = data.topology(t).vcpus
        if not 2 <= n <= 8:
            raise BenchRefused(f"topology {t} has {n} vCPUs, outside 2..8 (the config has "
                               "NR_CPUS=8; the workloads need 2)")
    sfp_env.check_numbers(env)
    tree = choice.build / "tree"
    if not (tree / ".git").is_dir():
        raise BenchRefused(f"no work tree at {tree}: run 'make prepare' first")
    refs = {k: env.get(f"BENCH_{k.upper()}") or k for k in KERNELS}
    for k, ref in refs.items():
        if subprocess.run(["git", "-C", str(tree), "rev-parse", "-q", "--verify",
                           f"{ref}^{{commit}}"], capture_output=True, check=False).returncode:
            raise BenchRefused(f"work tree {tree} has no commit '{ref}' for {k}: run "
                               "'make prepare'")
    sfp_env.need_tools(BenchRefused, ("gcc", "gcc"))
    with sfp_errors.raised_as(BenchRefused, sfp_benchlines.RunError):
        python = sfp_benchlines.python_with_matplotlib()
    sfp_env.need_tools(BenchRefused, ("perf", "linux-perf"))
    bdir = choice.build / "bench"
    outdir = pathlib.Path(out) if out else bdir / "smoke" if smoke else \
        bdir / ("run-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    if (out or not smoke) and (outdir.is_file() or outdir.is_dir() and any(outdir.iterdir())):
        raise BenchRefused(f"output directory '{outdir}' is not empty: name a new one with -o")
    header = None
    if cost:
        for what, d in (("output directory", outdir), ("build directory", choice.build)):
            if re.search(r"[,\s]", str(d.resolve())):
                raise BenchRefused(f"--cost: the {what} '{d}' has a comma or a space, which "
                                   "QEMU's -plugin and -D options cannot take")
        with sfp_errors.raised_as(BenchRefused, sfp_cost.CostError):
            header = sfp_cost.plugin_header(env)
    return Bench(choice, tuple(topos), counts, int(duration), int(reps), mode, outdir, qopts,
                 int(env.get("MEM") or sfp_env.LOADED_MEM), smoke, refs, python, command, jobs,
                 header, busy, seed, env.get("BENCH_APPEND", ""))


def _first(text: str, pattern: str, fmt: str) -> str:
    """FMT expanded from the first line of TEXT that PATTERN matches, or ''."""
    return next((m.expand(fmt) for ln in text.splitlines() if (m := re.match(pattern, ln))), "")


def progress_figures(guest_log: pathlib.Path) -> tuple[str, str, str]:
    """rr, mix and pool's headline figures from a boot's guest log, for the
    progress line ('' where a figure is missing)."""
    text = sfp_results.text(guest_log)
    return (_first(text, r"^sfp-bench rr count .*tps=([0-9.]*).* newidle_per_idle=([0-9.]*)",
                   r"\2 newly-idle attempts per idle entry, \1 tps"),
            _first(text, r"^sfp-bench mix lb level=all .* lb_gained=([0-9]*)", r"\1 tasks gained"),
            _first(text, r"^sfp-bench pool count .*tg_load_avg_changes=([0-9]*)",
                   r"\1 root tg_load_avg changes"))


def boot_status(log: pathlib.Path) -> str:
    """'ok', or what went wrong with the boot whose logs are in LOG (and
    sfp run's output in LOG.boot)."""
    out = sfp_results.text(pathlib.Path(f"{log}.boot"))
    rows = sfp_results.text(log / "results.tsv").splitlines()
    if not rows or any(r.startswith("boot\t") for r in rows):
        why = next((ln for ln in out.splitlines() if "sfp: error" in ln),
                   (out.splitlines() or [""])[-1])
        return f"boot failed ({why})"
    guest = sfp_results.text(log / "guest.log")
    if not re.search(r"^sfp-end: sfp_bench rc=0", guest, re.M):
        why = next((ln for ln in guest.splitlines() if "sfp-bench error" in ln), "see guest.log")
        return f"workload failed: {why}"
    if not re.search(r"^ok 1 guest_preconditions", guest, re.M):
        return "guest preconditions failed (wrong kernel?)"
    return "ok"


def meta(b: Bench, data: Data, offs: dict[str, str], fragments: list[pathlib.Path]) -> str:
    """meta.tsv: what the run was and where it ran."""
    def out(*cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def images(k: str) -> str:
        obj = sfp_run.kernel_obj(b.build, f"bench-{k}", ref=True)
        return " ".join(f"{f.name}:{hashlib.sha256(f.read_bytes()).hexdigest()[:16]}"
                        for f in (obj / "arch" / "x86" / "boot" / "bzImage",
                                  obj / "initramfs.cpio.gz") if f.is_file())
    names = ["kernel-config/" + str(f).split("/kernel-config/", 1)[1]
             if "/kernel-config/" in str(f) else str(f) for f in fragments]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in fragments)).hexdigest()[:16]
    read = sfp_results.text
    mem_kib = int(_first(read(pathlib.Path("/proc/meminfo")), r"^MemTotal:\s*(\d+)", r"\1") or 0)
    perf = out("perf", "--version")
    rows = [("command", b.command), ("topologies", " ".join(b.topologies)),
            ("dur", str(b.duration)), ("reps", str(b.reps)), ("mem", str(b.mem)),
            ("newidle_features", b.mode),
            ("cost", "plugin; both kernels with the newly-idle balance noinline "
                     "(cost-noinline-KERNEL.patch)" if b.cost else "off"),
            ("busy_loops", str(b.busy)),
            *((f"topology_{t}", f"{o.vcpus}\t{o.smp}\t{','.join(o.nodes) or '-'}\t{o.levels}")
              for t, o in ((t, data.topology(t)) for t in b.topologies)),
            *([("boots_at_once", str(b.jobs))] if b.jobs > 1 else []),
            ("qemu_opts", "-accel tcg -cpu max" + (f" {b.qemu_opts}" if b.qemu_opts else "")),
            *([("icount", f"{sfp_env.ICOUNT}; guest: {sfp_env.ICOUNT_APPEND}"),
               ("seeds", " ".join(str(b.seed + r) for r in range(b.reps)))]
              if b.seed is not None else []),
            ("append", f"{data.kind('bench').append} {b.guest_append}"),
            *((f"offsets_{k}", offs[k]) for k in KERNELS),
            *((f"images_{k}", images(k)) for k in KERNELS),
            ("version", sfp_env.makefile_version(
                (sfp_run.kernel_wt(b.build, "bench-patched") / "Makefile").read_text())),
            ("source", sfp_prepare.wt_meta(b.tree, "source")),
            *((f"commit_{k}", out("git", "-C", str(sfp_run.kernel_wt(b.build, f"bench-{k}")),
                                  "log", "-1", "--format=%H %s").stdout.strip()) for k in KERNELS),
            ("config", f"{' '.join(names)} (sha256 {digest})"),
            ("host_cpu", _first(read(pathlib.Path("/proc/cpuinfo")), r"^model name\s*: (.*)$",
                                r"\1")),
            ("host_cpus", str(os.cpu_count())),
            ("host_mem", f"{mem_kib / 1048576:.1f} GiB"),
            ("host_os", _first(read(pathlib.Path("/etc/os-release")),
                               r'^PRETTY_NAME="?([^"]*)"?$', r"\1")),
            ("qemu", (out("qemu-system-x86_64", "--version").stdout.splitlines() or [""])[0]),
            ("perf", perf.stdout.strip() if perf.returncode == 0 else "none"),
            ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))]
    return "".join(f"{k}\t{v}\n" for k, v in rows)


def lock(bdir: pathlib.Path, out: pathlib.Path) -> IO[str]:
    """Hold BUILD/LINE/bench/lock for the run: two runs of one line and
    BUILD would rebuild the same two kernels, programs and plugin under
    each other's boots (a count run's kernels lack the cost mode's
    noinline balance, which 6.19 and later inline). Released when the
    file is closed, or with the process, however it ends."""
    bdir.mkdir(parents=True, exist_ok=True)
    f = open(bdir / "lock", "a+", encoding="utf-8")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        who = f.read().strip() or "a process"
        f.close()
        raise BenchError(f"{bdir.parent}: another sfp bench is running there ({who}); it "
                         "builds the same kernels: wait for it, or give this run another BUILD")
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}, output {out}\n")
    f.flush()
    return f


def run(b: Bench, data: Data, env: dict[str, str], say: Callable[[str], None]) -> int:
    """Build, boot, report; the exit status (1 when a boot failed after
    its retry, or the smoke checks failed)."""
    with lock(b.build / "bench", b.out):
        return _run(b, data, env, say)


def _run(b: Bench, data: Data, env: dict[str, str], say: Callable[[str], None]) -> int:
    bdir = b.build / "bench"
    if b.smoke and b.out == bdir / "smoke" and b.out.exists():
        shutil.rmtree(b.out)  # the smoke round's own directory, remade each time
    (b.out / "raw").mkdir(parents=True, exist_ok=True)
    stages = sfp_run.Stages(b.out / "stage-times.tsv")
    out = b.out.resolve()
    bins = bdir / "bin"
    bins.mkdir(parents=True, exist_ok=True)
    if not b.smoke:
        latest = bdir / "latest"
        if latest.is_symlink() or not latest.exists():
            latest.unlink(missing_ok=True)
            latest.symlink_to(out)
    fragments = sfp_run.kind_fragments(data, "bench", b.tree)

    with stages.stage("workload programs"):
        for p in PROGRAMS:
            if subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-static", "-pthread", "-o",
                               str(bins / p), str(ROOT / "bench" / f"{p}.c")],
                              check=False).returncode:
                raise BenchError(f"cannot build bench/{p}.c")
        shutil.copyfile(ROOT / "scripts" / "guest" / "sfp_bench.sh", bins / "sfp_bench")
        (bins / "sfp_bench").chmod(0o755)
    plugin = None
    if b.cost:
        with stages.stage("the cost plugin"):
            plugin = sfp_cost.build_plugin(b.cost, bins / "libsfp_cost.so")

    # Each kernel is built as sfp run -r REF -n bench-KERNEL builds it, in
    # its own worktree laid out like the main tree, so ccache serves the
    # second build from the first; later runs only rebuild what changed.
    guest = ("-x", str(bins / "sfp_bench"), *[a for p in PROGRAMS for a in ("-b", str(bins / p))],
             "-p")
    objs = {k: sfp_run.kernel_obj(b.build, f"bench-{k}", ref=True) for k in KERNELS}
    # The cost mode's one change to both kernels: the newly-idle balance
    # out of line (sfp_cost.noinline_patch), so that the plugin sees it.
    mark: dict[str, list[str]] = {k: [] for k in KERNELS}
    # Any harness error of a step, as a BenchError that says which step.
    _failing = functools.partial(sfp_errors.raised_as, BenchError, sfp_errors.SfpError)
    for k in KERNELS if plugin else ():
        src = subprocess.run(["git", "-C", str(b.tree), "show", f"{b.refs[k]}:kernel/sched/fair.c"],
                             capture_output=True, text=True, check=False)
        if src.returncode:
            raise BenchError(f"{k}: no kernel/sched/fair.c at {b.refs[k]} in {b.tree}")
        with _failing(prefix=f"{k}: "):
            (out / f"cost-noinline-{k}.patch").write_text(sfp_cost.noinline_patch(src.stdout))
        mark[k] = [str(out / f"cost-noinline-{k}.patch")]
    for k in KERNELS:
        with stages.stage(f"build {k} ({b.refs[k]})"), \
                _failing(prefix=f"building {k} ({b.refs[k]}) failed: "):
            req = sfp_run.RunRequest(kind="bench", ref=b.refs[k], patches=tuple(mark[k]),
                                     name=f"bench-{k}", guest_args=guest, build_only=True,
                                     reproducible=b.reproducible, choice=b.choice)
            sfp_run.execute(sfp_run.plan_request(data, env, req), data, env, say)
    offs = {}
    for k in KERNELS:
        with _failing(prefix=f"cannot compute the field offsets of {k}: "):
            offs[k] = ",".join(f"{n}:{o}" for n, o in offsets(objs[k]))
    # The same options set on both sides (patched's tree also knows the
    # unset options of the test patches).
    opts = {k: [ln for ln in (objs[k] / ".config").read_text().splitlines()
                if ln.startswith("CONFIG_")] for k in KERNELS}
    if opts["baseline"] != opts["patched"]:
        raise BenchError(f"baseline and patched were built with different configs "
                         f"({objs['baseline'] / '.config'}, {objs['patched'] / '.config'})")
    (out / "meta.tsv").write_text(meta(b, data, offs, fragments))
    syms = {}
    for k in KERNELS if plugin else ():
        with _failing(prefix=f"{k}: "):
            sy = sfp_cost.symbols(objs[k])
        syms[k] = out / f"cost-symbols-{k}.txt"
        syms[k].write_text(sy.text())
        say(f"{k}: {sy.name} at {sy.entry:#x}, {len(sy.rets)} return sites, "
            f"{len(sy.irqs)} interrupt entries")

    total = b.reps * len(b.topologies) * 2
    t_runs = time.monotonic()
    mutex = threading.Lock()
    tally = {"done": 0, "failed": 0, "retried": 0}

    def boot_once(k: str, topo: str, rep: int, log: pathlib.Path) -> str:
        qopts, append = b.boot_qemu_opts(rep), f"{b.guest_append} sfp.offsets={offs[k]}"
        if plugin:
            qopts = f"{qopts} -plugin {plugin},syms={syms[k]} -d plugin -D {log}.cost".strip()
            append += " sfp.cost=1"
            pathlib.Path(f"{log}.cost").unlink(missing_ok=True)
        e = dict(env, TOPOLOGY=topo, MEM=str(b.mem), QEMU_OPTS=qopts,
                 BOOT_TIMEOUT=str(300 + 60 * b.duration * b.vcpus[topo]), APPEND=append)
        sfp_run.run_logged(sfp_run.RunRequest(kind="bench", ref=b.refs[k], name=f"bench-{k}",
                                              boot_only=True, logdir=str(log), choice=b.choice),
                           e, pathlib.Path(f"{log}.boot"))
        return boot_status(log)

    def one(rep: int, topo: str, k: str) -> None:
        log = out / "raw" / f"{k}-{topo}-r{rep}"
        t0 = time.monotonic()
        status = boot_once(k, topo, rep, log)
        if status != "ok":
            # One retry: an emulator fault (a hang, a guest-time jump)
            # should not void a 30-boot run.
            say(f"rep {rep}, {topo:<8} {k:<8} FAILED: {status}; retrying once")
            for ext in ("", ".boot", ".cost"):
                if pathlib.Path(f"{log}{ext}").exists():
                    pathlib.Path(f"{log}{ext}").rename(f"{log}.failed{ext}")
            with mutex:
                tally["retried"] += 1
            status = boot_once(k, topo, rep, log)
        figs = (sfp_cost.progress(log) or "-") if plugin else "rr: {}; mix: {}; pool: {}".format(
            *(f or "-" for f in progress_figures(log / "guest.log")))
        bad = "" if status == "ok" else f"  FAILED: {status}"
        with mutex:
            tally["done"] += 1
            tally["failed"] += status != "ok"
            print(f"[{tally['done']}/{total}] rep {rep}, {topo:<8} {k:<8} "
                  f"{int(time.monotonic() - t0):4d}s  {figs}{bad}", file=sys.stderr, flush=True)

    # Alternate which kernel boots first, so drift hits both alike.
    boots = [(rep, topo, k) for rep in range(1, b.reps + 1)
             for j, topo in enumerate(b.topologies)
             for k in (KERNELS if (rep + j) % 2 == 1 else KERNELS[::-1])]
    at_once = f", {b.jobs} at once" if b.jobs > 1 else ""
    busy = f", {b.busy} busy loops on the host" if b.busy else ""
    with stages.stage(f"A/B runs: {b.reps} repetitions x topologies ({' '.join(b.topologies)})"
                      f" x 2 kernels = {total} boots{at_once}{busy}"), \
            sfp_repeat.busy_loops(b.busy, say):
        if b.jobs > 1:
            sfp_run.map_runs(lambda a: one(*a), boots, b.jobs)
        else:
            for a in boots:
                one(*a)
    with open(out / "meta.tsv", "a", encoding="utf-8") as f:
        f.write(f"retried\t{tally['retried']}\n")
        f.write(f"wall\t{total} boots in {int(time.monotonic() - t_runs)} s\n")

    with stages.stage("report"):
        if plugin:
            rc = sfp_cost.write_report(out, b.command)
        else:
            rc = subprocess.run([b.python, str(ROOT / "scripts" / "bench-report.py"),
                                 *(["--check"] if b.smoke else []), str(out)],
                                check=False).returncode
    say(f"report: {out}/report.md")
    if tally["failed"]:
        raise BenchError(f"{tally['failed']} of {total} boots failed (logs under {out}/raw)")
    return rc
