# SPDX-License-Identifier: GPL-2.0
"""Boot one kernel N times in a row and tally the results and the
kselftests' measured figures (flake rates, spreads).

The kernel that `sfp run RUN-OPTIONS` names is built once (`sfp run
--build-only`, its output in DIR/build.out) and booted N times (`sfp run
--boot-only -l DIR/BOOT`, each boot's output in DIR/BOOT.out). Per boot
a row: the cases passed and failed, the newly-idle attempts per idle
entry that sched_fastpath_newidle measured under the light load and in
its overload control, the control's missed partner wakeups, and the
largest root tg_load_avg any CPU printed; then the failures per test
case over the N boots. `sfp mutate` boots each variant this way.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
from typing import Callable, TextIO

import sfp_results
from sfp_data import ROOT

ROOT_TG = re.compile(r"cfs_rq\[[0-9]*\]:/ load_avg=[0-9-]* tg_load_avg_contrib=[0-9-]* "
                     r"tg_load_avg=([0-9-]*)")


class RepeatFailed(Exception):
    """The build failed; the message names its log."""


@dataclasses.dataclass(frozen=True)
class Figures:
    """One run of the newly-idle kselftest: attempts per idle entry under
    the light load and in the overload control, as 'RATIO (ATTEMPTS/IDLE)',
    and the control's missed partner wakeups ('-': not printed)."""
    light: str = "-"
    control: str = "-"
    missed: str = "-"

    def tsv(self) -> str:
        return f"{self.light}\t{self.control}\t{self.missed}"


def newidle_figures(guest_log: pathlib.Path) -> list[Figures]:
    """The newly-idle kselftest's figures of each of its runs in a guest
    log, in order (a second try of the same run is listed after the first
    one's light load, joined by a comma)."""
    text = sfp_results.text(guest_log)
    out: list[Figures] = []
    light = ctrl = late = ""

    def ratio(fields: list[str], line: str, prefix: str = "") -> str:
        def fld(k: int) -> str:  # awk's $(k + 1): $0 is the whole line
            return line if k == -1 else fields[k] if 0 <= k < len(fields) else ""
        got = ""
        for i, f in enumerate(fields):
            if f == "=":
                got = f"{prefix}{fld(i + 1)} ({fld(i - 8)}/{fld(i - 3)})"
        return got

    def flush() -> None:
        nonlocal light, ctrl, late
        if light or ctrl:
            out.append(Figures(light or "-", ctrl or "-", late or "-"))
        light = ctrl = late = ""

    for line in text.replace("\r", "").split("\n"):
        fields = line.split()
        if re.search(r"light load: [0-9]+ newly-idle balance attempts", line):
            if ctrl:
                flush()
            light = ratio(fields, line, f"{light}," if light else "") or light
        if re.search(r"overload control: [0-9]+ newly-idle balance attempts", line):
            ctrl = ratio(fields, line) or ctrl
        if re.search(r"overload control: [0-9]+ wakeups of a partner", line):
            for i, f in enumerate(fields):
                if f == "wakeups" and i > 0:
                    late = fields[i - 1]
    flush()
    return out


def root_tg_max(guest_log: pathlib.Path) -> str:
    """The largest root tg_load_avg a CPU printed ('' when none)."""
    vals = [m.group(1) for m in ROOT_TG.finditer(sfp_results.text(guest_log))]
    return str(max(int(v) for v in vals)) if vals else ""


def _row(*cells: str) -> str:
    widths = (4, 7, 7, 18, 18, 7)
    return "".join(f"{c:<{w}} " for c, w in zip(cells, widths)) + cells[-1]


def _name(run_args: list[str]) -> str:
    name = "patched"
    for i, a in enumerate(run_args):
        if a in ("-n", "--name"):
            name = run_args[i + 1] if i + 1 < len(run_args) else ""
    return name


@contextlib.contextmanager
def busy_loops(n: int, say: Callable[[str], None]):
    """N busy loops on the host ('yes') while the block runs: a host whose
    cores other work shares, like a busy CI machine."""
    loops = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(n)]
    if n:
        say(f"{n} busy loops on the host while the guests run")
    try:
        yield
    finally:
        for p in loops:
            p.kill()
            p.wait()


def repeat(run_args: list[str], n: int, out: pathlib.Path, busy: int, env: dict[str, str],
           say: Callable[[str], None], table: TextIO) -> None:
    """Build once, boot N times; the table on TABLE."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    sfp = [str(ROOT / "sfp"), "run", *run_args]
    say(f"building (./sfp run {' '.join(run_args)})")
    with open(out / "build.out", "wb") as log:
        if subprocess.run(sfp + ["--build-only"], stdout=log, stderr=subprocess.STDOUT, env=env,
                          check=False).returncode:
            raise RepeatFailed(f"./sfp run {' '.join(run_args)} --build-only failed "
                               f"(see {out}/build.out)")
    failures: collections.Counter[str] = collections.Counter()
    with busy_loops(busy, say):
        print(_row("boot", "passed", "failed", "light load", "overload control", "missed",
                   "root tg_load_avg (max over CPUs)"), file=table, flush=True)
        for i in range(1, n + 1):
            log = out / str(i)
            with open(out / f"{i}.out", "wb") as o:
                subprocess.run(sfp + ["--boot-only", "-l", str(log)], stdout=o,
                               stderr=subprocess.STDOUT, env=env, check=False)
            cases = sfp_results.read_tsv(log / "results.tsv")
            failed = [c.name for c in cases if c.failed]
            failures.update(failed)
            fig = (newidle_figures(log / "guest.log") or [Figures()])[0]
            print(_row(str(i), str(sum(c.status == "PASS" for c in cases)),
                       str(len(failed)) if cases else "no result", fig.light, fig.control,
                       fig.missed, root_tg_max(log / "guest.log") or "-"), file=table, flush=True)
    print(f"\nfailures per test case over {n} boots:", file=table)
    for case in sorted(failures):
        print(f"  {case}: {failures[case]}", file=table)
    if not failures:
        print("  none", file=table)
    table.flush()


def default_out(build: pathlib.Path, run_args: list[str]) -> pathlib.Path:
    return build / "logs" / f"{_name(run_args)}-repeat"


def environ() -> dict[str, str]:
    return dict(os.environ)
