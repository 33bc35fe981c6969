# SPDX-License-Identifier: GPL-2.0
"""The sched/debug race of 6.12.117 (fixed upstream by e08d007f9d81, the
series' prerequisite patch): a deterministic lockdep check and the oops
rate under load, without and with the fix. Every kernel goes through
sfp run.

1. Deterministic (lockdep): 'patched' (which carries the fix) and
   'patched' with the fix reverse-applied, both of kind debug
   (kernel-config/debug.config: PROVE_LOCKING, KASAN, UBSAN...; the debug
   hook tests/debug/avg_vruntime-assert-rq-lock.patch, which puts
   lockdep_assert_rq_held() in avg_vruntime(); panic_on_warn=1). The
   guest runs the KUnit suites, the kselftests and reads
   /sys/kernel/debug/sched/debug. Without the fix the first read (the
   guest's preconditions check) must make lockdep report avg_vruntime()
   called without the rq lock, from print_cfs_rq(); with it the kernel
   must pass every test and boot clean.
2. Oops rate: 'base' (the source as it is, e.g. Debian's 6.12.117) as
   'unfixed' and base + the fix as 'fixed', of kind race (the benchmark's
   config, no debug options), BOOTS boots each at VCPUS vCPUs under
   multi-threaded TCG, each running SECONDS of load (bench/sfp_pool.c and
   usleep loops) while 4 readers cat sched/debug
   (scripts/guest/sched_debug_race.sh). An oops ends a boot (oops=panic);
   the table counts them.

Output: $BUILD/LINE/race/report.md (the tables) and every boot's console log
under $BUILD/LINE/race/. Exit status 1 if the lockdep check does not behave as
stated or the fixed kernel oopses.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import pathlib
import re
import shutil
import subprocess
import sys
from typing import Callable

from harness import sfp_env, sfp_errors, sfp_results, sfp_run, sfp_series
from harness.sfp_data import ROOT, Data

MAX_VCPUS = 8  # the configs' NR_CPUS
CALLER = re.compile(r"print_cfs_rq\+0x[0-9a-f]+")
RIP = re.compile(r"RIP: 0010:([A-Za-z0-9_.]+\+0x[0-9a-f]+)")
READS = re.compile(r"sched_debug_race: .*\(([0-9]*) reads\)")


class RaceRefused(sfp_errors.Refused):
    """Bad input, found before any work; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Race:
    boots: int
    secs: int
    vcpus: int
    lockdep_only: bool
    fix: pathlib.Path   # the series' prerequisite patch
    hook: pathlib.Path  # the debug kind's hook, named in the report


def plan(data: Data, line: str, *, boots: int, secs: int, vcpus: int,
         lockdep_only: bool) -> Race:
    for v in (boots, secs, vcpus):
        if v <= 0:
            raise RaceRefused(f"-k, -d and -s want whole numbers > 0, not '{v}'")
    if vcpus > MAX_VCPUS:
        raise RaceRefused(f"-s {vcpus}: the config has NR_CPUS={MAX_VCPUS}")
    with sfp_errors.raised_as(RaceRefused, sfp_series.SeriesError):
        series = sfp_series.load(ROOT / "patches" / line)
    fixes = [p.path for p in series if p.role == "prereq"]
    if not fixes:
        raise RaceRefused(f"patches/{line}/series has no prerequisite fix")
    hook = ROOT / data.kind("debug").patches[0]
    return Race(boots, secs, vcpus, lockdep_only, fixes[-1], hook)


def _why(res: sfp_run.RunResult) -> str:
    """What ended a run that did not pass."""
    if res.error:
        return res.error
    return f"{', '.join(res.failed)} failed" if res.failed else f"exit status {res.status}"


def _append(path: pathlib.Path, *lines: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(ln + "\n" for ln in lines))


def _boot(req: sfp_run.RunRequest, env: dict[str, str], build: pathlib.Path, log: pathlib.Path,
          *keep: str) -> sfp_run.RunResult:
    """REQ run, its output in LOG.out; its logs KEEP (file names) copied
    beside it, to LOG.NAME."""
    res = sfp_run.run_logged(req, env, pathlib.Path(f"{log}.out"))
    for what in keep:
        src = sfp_run.kernel_logs(build, req.name) / what
        if src.is_file():
            shutil.copyfile(src, f"{log}.{what}")
    return res


def lockdep_verdict(kernel: str, rc: int, console: pathlib.Path, why: str) -> \
        tuple[bool, str, str]:
    """(as stated, first splat, verdict) of one lockdep boot; WHY: what
    ended it, if it failed."""
    splat = (sfp_results.first_splats(console, limit=1) or [""])[0]
    caller = CALLER.search(sfp_results.text(console))
    if kernel == "unfixed":
        if rc and "avg_vruntime" in splat and caller:
            return True, splat, f"fires as expected (called from {caller.group(0)})"
        return False, splat, "MISSED: no lockdep report from avg_vruntime()"
    if rc == 0:
        return True, splat, "clean as expected"
    return False, splat, f"FAILED: {why}"


def race(r: Race, choice: sfp_env.LineChoice, env: dict[str, str],
         say: Callable[[str], None]) -> bool:
    """Both parts (or the first) on CHOICE's line; whether everything
    behaved as stated. Stage times in race/stage-times.tsv."""
    out, tree = choice.build / "race", choice.build / "tree"
    if not (tree / ".git").exists():
        raise RaceRefused(f"no work tree at {tree}: run 'make prepare' first")
    unfix = subprocess.run(["git", "-C", str(tree), "diff", "baseline", "series-base", "--",
                            "kernel/sched"], capture_output=True, check=False).stdout
    if not unfix:
        raise RaceRefused("'baseline' and 'series-base' do not differ: the source already "
                          "carries the fix")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "unfix.patch").write_bytes(unfix)
    (out / "report.md").write_text("")
    stages = sfp_run.Stages(out / "stage-times.tsv")
    with stages.stage("lockdep: one read of sched/debug, unfixed and fixed"):
        ok = _lockdep(r, choice, out, env, say)
    if not r.lockdep_only:
        with stages.stage(f"oops rate: {r.boots} boots x 2 kernels, {r.vcpus} vCPUs, "
                          f"{r.secs}s each"):
            ok &= _oops_rate(r, choice, out, env, say)
    print(file=sys.stderr)
    print(sfp_results.text(out / "report.md"), end="")
    return ok


def _lockdep(r: Race, choice: sfp_env.LineChoice, out: pathlib.Path, env: dict[str, str],
             say: Callable[[str], None]) -> bool:
    """Part 1: patched with and without the fix on the debug kernel."""
    report = functools.partial(_append, out / "report.md")
    ok = True
    subject = subprocess.run(["git", "-C", str(choice.build / "tree"), "log", "-1", "--format=%s",
                              "base"], capture_output=True, text=True, check=False).stdout.strip()
    report(f"# The sched/debug race: {subject}", "", "## Deterministic check (lockdep)", "",
           "Command: `./sfp race`. Kernels: `patched` (fixed) and `patched` with",
           f"`patches/{r.fix.name}` reverse-applied (unfixed), both with",
           f"`kernel-config/debug.config` and `tests/debug/{r.hook.name}`, booted",
           "with `panic_on_warn=1`.", "",
           "| kernel | boot | first splat | verdict |", "|---|---|---|---|")
    for k in ("unfixed", "fixed"):
        log = out / f"lockdep-{k}"
        req = sfp_run.RunRequest(
            kind="debug", ref="patched",
            patches=(str(out / "unfix.patch"),) if k == "unfixed" else (), name="debug",
            guest_args=("-x", str(ROOT / "scripts" / "guest" / "read_sched_debug.sh")),
            choice=choice)
        res = _boot(req, env, choice.build, log, "console.log")
        good, splat, verdict = lockdep_verdict(k, res.status, pathlib.Path(f"{log}.console.log"),
                                               _why(res))
        ok &= good
        report(f"| {k} | {'failed' if res.status else 'passed'} | {splat or 'none'} | "
               f"{verdict} |")
        say(f"lockdep, {k}: {verdict}")
    return ok


def _oops_rate(r: Race, choice: sfp_env.LineChoice, out: pathlib.Path, env: dict[str, str],
               say: Callable[[str], None]) -> bool:
    """Part 2: base and base + the fix, BOOTS boots each under load."""
    report = functools.partial(_append, out / "report.md")
    pool = out / "sfp_pool"
    if subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-static", "-pthread", "-o", str(pool),
                       str(ROOT / "bench" / "sfp_pool.c")], check=False).returncode:
        raise sfp_errors.Failed("cannot build bench/sfp_pool.c")
    report("", "## Oops rate under load", "",
           f"Command: `./sfp race -k {r.boots} -d {r.secs} -s {r.vcpus}`: {r.vcpus} vCPUs under",
           f"multi-threaded TCG on a {os.cpu_count()}-core host; per boot {r.secs} s of "
           "sfp_pool and 4",
           "`usleep 300` loops while 4 readers cat sched/debug.", "",
           "| kernel | boots | minutes of load (an oops ends a boot early) | oopses | where | "
           "reads of sched/debug (boots that finished) |",
           "|---|---|---|---|---|---|")
    child = dict(env, SMP=str(r.vcpus), MEM="1024", BOOT_TIMEOUT=str(600 + 20 * r.secs),
                 APPEND=" ".join(a for a in (f"sfp.racedur={r.secs}", env.get("APPEND", ""))
                                 if a))
    ok = True
    for k in ("unfixed", "fixed"):
        oops, where, reads = 0, [], 0
        for i in range(1, r.boots + 1):
            log = out / f"rate-{k}-{i}"
            req = sfp_run.RunRequest(
                kind="race", ref="base", patches=(str(r.fix),) if k == "fixed" else (),
                name="race", guest_args=("-x", str(ROOT / "scripts" / "guest" /
                                                    "sched_debug_race.sh"), "-b", str(pool)),
                choice=choice)
            res = _boot(req, child, choice.build, log, "console.log", "guest.log")
            console = sfp_results.text(pathlib.Path(f"{log}.console.log"))
            status = "clean"
            if sfp_results.first_splats(pathlib.Path(f"{log}.console.log"), limit=1):
                oops += 1
                where.append(rip[1] if (rip := RIP.search(console)) else "?")
                status = f"OOPS at {where[-1]}"
            elif res.status:
                status = f"failed without an oops: {_why(res)}"
                ok &= k != "fixed"
            n = READS.search(sfp_results.text(pathlib.Path(f"{log}.guest.log")))
            reads += int(n.group(1) or 0) if n else 0
            say(f"{k} boot {i}/{r.boots}: {status}")
        ok &= not (k == "fixed" and oops)
        report(f"| {k} | {r.boots} | {round(r.boots * r.secs / 60)} | {oops} | "
               f"{', '.join(where) or '-'} | {reads} |")
    return ok
