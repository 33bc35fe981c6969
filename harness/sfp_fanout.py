# SPDX-License-Identifier: GPL-2.0
"""The wall time of a set of measured jobs on N workers, scheduled on paper.

A run of `sfp mutate` leaves, per variant NAME, the build's log
(OUT/NAME/build.out, with sfp run's '<== build: Ns' and '<== guest: Ns'
stage lines) and per boot its stage times (OUT/NAME/B/stage-times.tsv:
boot and tests). As LAVA jobs each boot is one job, which can start once
its variant's build has finished; builds are independent of each other.
This schedules those measured durations on N identical workers (list
scheduling, the longest ready job first) and reports the finish time:
what N workers would take, from the times this machine measured. It
assumes a worker builds a variant as fast as the measured incremental
build in one worktree did, and that nothing but the jobs shares a
worker.
"""
from __future__ import annotations

import dataclasses
import heapq
import pathlib
import re


@dataclasses.dataclass(frozen=True)
class Job:
    name: str
    seconds: float
    after: str = ""  # the job that must finish first ('' for none)


def parse_build(build_out: pathlib.Path) -> float:
    """Seconds sfp run --build-only spent: its tree, build and guest stages."""
    try:
        text = build_out.read_text(errors="replace")
    except FileNotFoundError:
        return 0.0
    return float(sum(int(s) for s in re.findall(r"^<== (?:tree|build|guest): (\d+)s$", text, re.M)))


def parse_boot(logdir: pathlib.Path) -> float:
    try:
        rows = (logdir / "stage-times.tsv").read_text().splitlines()
    except FileNotFoundError:
        return 0.0
    return float(sum(int(r.split("\t")[1]) for r in rows
                     if r.split("\t")[0] in ("boot", "tests") and r.split("\t")[1].isdigit()))


def mutate_jobs(out: pathlib.Path, names: list[str] | None = None) -> list[Job]:
    """The jobs of a saved `sfp mutate` run: a build per variant, a boot per boot."""
    jobs = []
    variants = names or sorted(p.name for p in out.iterdir()
                               if p.is_dir() and (p / "build.out").exists())
    for v in variants:
        build = parse_build(out / v / "build.out")
        jobs.append(Job(f"{v}/build", build))
        b = 1
        while (out / v / str(b)).is_dir():
            jobs.append(Job(f"{v}/boot{b}", parse_boot(out / v / str(b)), f"{v}/build"))
            b += 1
    return jobs


def makespan(jobs: list[Job], workers: int) -> float:
    """Finish time of JOBS on WORKERS, the longest ready job first."""
    if workers < 1:
        raise ValueError("workers must be 1 or more")
    done_at: dict[str, float] = {}
    waiting = list(jobs)
    ready: list[tuple[float, int, Job]] = []
    free = [0.0] * workers  # when each worker is free
    heapq.heapify(free)
    seq = 0
    now = 0.0
    running: list[tuple[float, str]] = []
    while waiting or ready or running:
        still = []
        for j in waiting:
            if not j.after or j.after in done_at and done_at[j.after] <= now:
                heapq.heappush(ready, (-j.seconds, seq, j))
                seq += 1
            else:
                still.append(j)
        waiting = still
        while ready and free[0] <= now:
            _, _, j = heapq.heappop(ready)
            heapq.heappop(free)
            end = now + j.seconds
            heapq.heappush(free, end)
            heapq.heappush(running, (end, j.name))
        if not running:
            if waiting and not ready:
                raise ValueError(f"job {waiting[0].name} waits for a job that is not there")
            continue
        end, name = heapq.heappop(running)
        now = max(now, end)
        done_at[name] = end
    return now


def table(jobs: list[Job], counts: tuple[int, ...] = (1, 4, 16, 64)) -> str:
    builds = [j for j in jobs if not j.after]
    boots = [j for j in jobs if j.after]
    total = sum(j.seconds for j in jobs)
    longest = max((j.seconds + max((b.seconds for b in boots if b.after == j.name), default=0))
                  for j in builds) if builds else 0
    lines = [f"{len(builds)} builds ({sum(j.seconds for j in builds):.0f} s) and {len(boots)} "
             f"boots ({sum(j.seconds for j in boots):.0f} s): {total:.0f} s of jobs; the longest "
             f"chain (a build and its longest boot) {longest:.0f} s",
             "", "| workers | wall time | speed-up |", "|---|---|---|"]
    for n in counts:
        m = makespan(jobs, n)
        lines.append(f"| {n} | {m:.0f} s ({m / 60:.1f} min) | {total / m if m else 0:.1f}x |")
    return "\n".join(lines) + "\n"
