# SPDX-License-Identifier: GPL-2.0
"""The series under a debug kernel with stress: KUnit, kselftests, then a
stress phase, on patched (and baseline).

Each KERNEL (default: patched; also baseline) is built with the kind's
config (kind debug: kernel-config/debug.config, with lockdep, KASAN,
UBSAN, DEBUG_LIST, atomic sleep, hung task and soft lockup detection,
and the debug hook tests/debug/avg_vruntime-assert-rq-lock.patch) and
booted with panic_on_warn=1. The guest runs the KUnit suites (patched),
the kselftests, then scripts/guest/stress.sh for the given time:
stress-ng CPU offline/online, affinity churn and fork storms, hackbench,
cgroup create/destroy with a task moved in and out, sched/debug and
/proc/schedstat readers; then its invariants. Every kernel goes through
sfp run (-n KIND: one worktree and build for both kernels).

A splat on the console (lockdep, KASAN, UBSAN, WARNING:, BUG:, RCU
stall, hung task, oops) fails the run and is printed; the logs stay in
$BUILD/LINE/stress/KERNEL/. Baseline gets the series' kselftests (no KUnit),
and exactly the cases that guard the two mechanisms must fail there
(sfp.toml expect.baseline_fails, their programs' runner verdicts, and
the stress phase's stress.root_tg_load_avg_zero and
stress.indicator_clear_after_stress); any other failure is a finding.

With -N, each kernel is booted RUNS times (built by the first) and
tallied: result, the newly-idle figures of both kselftest runs and the
control's missed partner wakeups; run I's logs are in
$BUILD/LINE/stress/KERNEL-I/. With -t or another -K the logs go to
$BUILD/LINE/stress/KIND-TOPOLOGY/ instead of $BUILD/LINE/stress/.
"""
from __future__ import annotations

import dataclasses
import pathlib
import shutil
import sys
from typing import Callable

from harness import sfp_env, sfp_errors, sfp_mutate, sfp_repeat, sfp_results, sfp_run
from harness.sfp_data import ROOT, Data

TOOLS = (("stress-ng", "stress-ng"), ("hackbench", "rt-tests"))
KERNELS = ("patched", "baseline")
BASELINE_ALSO = ("stress.root_tg_load_avg_zero", "stress.indicator_clear_after_stress")
MAX_VCPUS = 8  # the configs' NR_CPUS
_WIDTHS = (4, 6, 6, 18, 18, 7, 18, 7)  # the -N tally's columns


class StressRefused(sfp_errors.Refused):
    """Bad input, found before any work; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Stress:
    """One make stress: what boots, how long it stresses, where."""
    secs: int
    vcpus: int
    kind: str
    topology: str
    runs: int
    busy: int
    kernels: tuple[str, ...]
    jobs: int = 1  # runs booted at once after the first (-j)

    def tag(self) -> str:
        return self.kind + (f"-{self.topology}" if self.topology else "")

    def out(self, build: pathlib.Path) -> pathlib.Path:
        return build / "stress" if self.tag() == "debug" else build / "stress" / self.tag()


def plan(data: Data, *, secs: int, vcpus: int, kind: str, topology: str, runs: int, busy: int,
         kernels: list[str], jobs: int = 1) -> Stress:
    """The Stress the flags ask for, or StressRefused (the topology's
    fit with the kind is sfp_env.validate's, done by the caller)."""
    if secs <= 0:
        raise StressRefused(f"the stress time must be a whole number > 0, not '{secs}'")
    if not 2 <= vcpus <= MAX_VCPUS:
        raise StressRefused(f"-s wants 2 to {MAX_VCPUS} vCPUs, not '{vcpus}'")
    k = data.kind(kind)
    if not any("/tests/debug/" in f"/{p}" for p in k.patches):
        raise StressRefused(f"kind '{kind}' has no debug hook (tests/debug/): not a debug kernel")
    if topology:
        vcpus = data.topology(topology).vcpus
    if runs < 1:
        raise StressRefused(f"-N wants a number of runs > 0, not '{runs}'")
    if busy < 0:
        raise StressRefused(f"-b wants a number of busy loops, not '{busy}'")
    if jobs < 1:
        raise StressRefused(f"-j wants a number of boots at once, 1 or more, not '{jobs}'")
    if bad := [kern for kern in kernels if kern not in KERNELS]:
        raise StressRefused(f"unknown kernel '{bad[0]}': patched or baseline")
    sfp_env.need_tools(StressRefused, *((f"/usr/bin/{cmd}", pkg) for cmd, pkg in TOOLS))
    return Stress(secs, vcpus, kind, topology, runs, busy, tuple(kernels or ["patched"]), jobs)


def run_env(s: Stress, env: dict[str, str]) -> dict[str, str]:
    """sfp run's environment for a stress boot."""
    child = dict(env, SMP=str(s.vcpus), MEM=env.get("MEM") or str(sfp_env.LOADED_MEM),
                 BOOT_TIMEOUT=str(900 + 3 * s.secs),
                 APPEND=" ".join(a for a in (f"sfp.stress={s.secs}", env.get("APPEND", "")) if a))
    child.pop("TOPOLOGY", None)
    if s.topology:
        child["TOPOLOGY"] = s.topology
    return child


def stress_figures(guest_log: pathlib.Path) -> str:
    """The guest stress phase's figure line ('# sfp-stress ...'), or ''."""
    return next((ln.removeprefix("# sfp-stress ") for ln in sfp_results.text(guest_log)
                 .replace("\r", "").splitlines() if ln.startswith("# sfp-stress ")), "")


@dataclasses.dataclass
class Boot:
    """One stress boot's outcome."""
    ok: bool
    passed: int
    failed: list[str]


def boot(s: Stress, kernel: str, log: pathlib.Path, out: pathlib.Path, data: Data,
         env: dict[str, str], say: Callable[[str], None], choice: sfp_env.LineChoice,
         boot_only: bool = False) -> Boot:
    """Boot KERNEL of CHOICE's line once into LOG; whether it gave what
    KERNEL must give."""
    shutil.rmtree(log, ignore_errors=True)
    req = sfp_run.RunRequest(
        kind=s.kind, ref=kernel,
        patches=(str(out / "selftests.patch"),) if kernel == "baseline" else (),
        boot_only=boot_only, name=s.kind, logdir=str(log),
        guest_args=("-x", str(ROOT / "scripts" / "guest" / "stress.sh"),
                    "-d", "/usr/bin/stress-ng", "-d", "/usr/bin/hackbench"), choice=choice)
    res = sfp_run.run_logged(req, run_env(s, env), pathlib.Path(f"{log}.out"))
    say(f"{kernel}: {stress_figures(log / 'guest.log') or 'no figures'}")
    ok = False
    if res.error:
        say(f"{kernel}: sfp: error: {res.error}")
        print(sfp_results.splat_context(log / "console.log"), end="", file=sys.stderr)
    elif kernel == "baseline" and not res.cases:
        say(f"baseline: no results in {log}")
    elif kernel == "baseline":
        ok, line = sfp_mutate.baseline_verdict(sfp_mutate.baseline_expect(data, BASELINE_ALSO),
                                               sfp_results.Result(str(log), list(res.cases)))
        say(line)
    elif res.status:
        say(f"{kernel}: failed: {' '.join(res.failed) + ' ' if res.failed else f'see {log}.out'}")
    else:
        ok = True
        say(f"{kernel}: clean, {res.passed} cases passed")
    return Boot(ok, res.passed, res.failed)


def stress(s: Stress, choice: sfp_env.LineChoice, data: Data, env: dict[str, str],
           say: Callable[[str], None]) -> bool:
    """Every kernel of S on CHOICE's line, each once or RUNS times; whether
    all gave what they must. Stage times in the output's stage-times.tsv."""
    out = s.out(choice.build)
    out.mkdir(parents=True, exist_ok=True)
    ok = True
    stages = sfp_run.Stages(out / "stage-times.tsv")
    with sfp_repeat.busy_loops(s.busy, say):
        for k in s.kernels:
            runs = f", {s.runs} runs, {s.busy} busy loops" if s.runs > 1 else ""
            with stages.stage(f"stress {k}: debug kernel ({s.kind}), {s.vcpus} vCPUs"
                              f"{f' ({s.topology})' if s.topology else ''}, {s.secs}s{runs}"):
                if s.runs == 1:
                    ok &= boot(s, k, out / k, out, data, env, say, choice).ok
                else:
                    ok &= _tally(s, k, out, data, env, say, choice)
    return ok


def _tally(s: Stress, k: str, out: pathlib.Path, data: Data, env: dict[str, str],
           say: Callable[[str], None], choice: sfp_env.LineChoice) -> bool:
    tally = out / f"{k}-runs.txt"
    tally.write_text(f"sfp stress -S {s.secs} {f'-t {s.topology} ' if s.topology else ''}"
                     f"-s {s.vcpus} -K {s.kind} -N {s.runs} -b {s.busy} {k}: {s.busy} busy loops "
                     "on the host\n" + sfp_repeat.columns(
                         _WIDTHS, "run", "result", "passed", "light load", "overload control",
                         "missed", "after stress: ctrl", "missed", "failed") + "\n",
                     encoding="utf-8")
    with open(out / f"{k}-runs.err", "a", encoding="utf-8") as err:
        def note(msg: str) -> None:
            print(f"sfp: {msg}", file=err, flush=True)

        def one(i: int) -> Boot:
            return boot(s, k, out / f"{k}-{i}", out, data, env, note, choice, boot_only=i > 1)
        # The runs after the first boot what it built: J at once with -j.
        done = [one(1)] + sfp_run.map_runs(one, list(range(2, s.runs + 1)), s.jobs)
    rows = []
    for i, b in enumerate(done, 1):
        figs = sfp_repeat.newidle_figures(out / f"{k}-{i}" / "guest.log") + \
            [sfp_repeat.Figures()] * 2
        rows.append(sfp_repeat.columns(
            _WIDTHS, str(i), "clean" if b.ok else "FAILED", str(b.passed), figs[0].light,
            figs[0].control, figs[0].missed, figs[1].control, figs[1].missed, " ".join(b.failed)))
    clean = sum(b.ok for b in done)
    rows.append(f"{k}: {clean} of {s.runs} runs clean")
    print("\n".join(rows), flush=True)
    with open(tally, "a", encoding="utf-8") as f:
        f.write("".join(r + "\n" for r in rows))
    say(f"tally in {tally}")
    return clean == s.runs
