# SPDX-License-Identifier: GPL-2.0
"""Boot one kernel N times in a row and tally the results and the
kselftests' measured figures (flake rates, spreads).

The kernel that `sfp run RUN-OPTIONS` names is built once (as `sfp run
--build-only` would, its output in DIR/build.out) and booted N times (as
`sfp run --boot-only -l DIR/BOOT`, each boot's output in DIR/BOOT.out);
each run is sfp_run's, in a process of its own (sfp_run.run_logged). Per boot
a row: the cases passed and failed, the newly-idle attempts per idle
entry that sched_fastpath_newidle measured under the light load and in
its overload control, the control's missed partner wakeups, and the
largest root tg_load_avg any CPU printed; then the failures per test
case over the N boots. `sfp mutate` boots each variant this way.
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import json
import pathlib
import re
import shutil
import subprocess
import threading
import time
from typing import Callable, TextIO

from harness import sfp_errors, sfp_results, sfp_run
from harness.sfp_run import RunRequest

_WIDTHS = (4, 7, 7, 18, 18, 7)  # sfp repeat's table
ROOT_TG = re.compile(r"cfs_rq\[[0-9]*\]:/ load_avg=[0-9-]* tg_load_avg_contrib=[0-9-]* "
                     r"tg_load_avg=([0-9-]*)")


class RepeatFailed(sfp_errors.Failed):
    """The build failed; the message names its log."""


@dataclasses.dataclass(frozen=True)
class Figures:
    """One run of the newly-idle kselftest: attempts per idle entry under
    the light load and in the overload control, as 'RATIO (ATTEMPTS/IDLE)',
    and the control's missed partner wakeups ('-': not printed)."""
    light: str = "-"
    control: str = "-"
    missed: str = "-"


def _ratio(line: str) -> str:
    """awk's '$(i+1) ($(i-8)/$(i-3))' at the last '=' field $i of LINE
    ('' without one)."""
    f = [line, *line.split(), ""]  # f[k]: awk's $k; '' past the last
    i = max((k for k in range(1, len(f) - 1) if f[k] == "="), default=0)
    return f"{f[i + 1]} ({f[i - 8] if i >= 8 else ''}/{f[i - 3] if i >= 3 else ''})" if i else ""


def newidle_figures(guest_log: pathlib.Path) -> list[Figures]:
    """The newly-idle kselftest's figures of each of its runs in a guest
    log, in order (a second try of the same run is listed after the first
    one's light load, joined by a comma)."""
    out: list[Figures] = []
    light = ctrl = late = ""

    def flush() -> None:
        nonlocal light, ctrl, late
        if light or ctrl:
            out.append(Figures(light or "-", ctrl or "-", late or "-"))
        light = ctrl = late = ""

    for line in sfp_results.text(guest_log).replace("\r", "").split("\n"):
        fields = line.split()
        if re.search(r"light load: [0-9]+ newly-idle balance attempts", line):
            if ctrl:
                flush()
            r = _ratio(line)
            light = f"{light},{r}" if light and r else r or light
        if re.search(r"overload control: [0-9]+ newly-idle balance attempts", line):
            ctrl = _ratio(line) or ctrl
        if re.search(r"overload control: [0-9]+ wakeups of a partner", line):
            late = next((fields[i - 1] for i in range(len(fields) - 1, 0, -1)
                         if fields[i] == "wakeups"), late)
    flush()
    return out


def root_tg_max(guest_log: pathlib.Path) -> str:
    """The largest root tg_load_avg a CPU printed ('' when none)."""
    vals = [m.group(1) for m in ROOT_TG.finditer(sfp_results.text(guest_log))]
    return str(max(int(v) for v in vals)) if vals else ""


def columns(widths: tuple[int, ...], *cells: str) -> str:
    """CELLS left-aligned in columns of WIDTHS; the last cell as it is."""
    return "".join(f"{c:<{w}} " for c, w in zip(cells, widths)) + cells[-1]


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


def repeat(req: RunRequest, n: int, out: pathlib.Path, busy: int, env: dict[str, str],
           say: Callable[[str], None], table: TextIO) -> None:
    """Build REQ's kernel once, boot it N times; the table on TABLE."""
    say(f"building ({sfp_run.command(req)})")
    _build(req, out, env)
    failures: collections.Counter[str] = collections.Counter()
    with busy_loops(busy, say):
        print(columns(_WIDTHS, "boot", "passed", "failed", "light load", "overload control",
                      "missed", "root tg_load_avg (max over CPUs)"), file=table, flush=True)
        for i in range(1, n + 1):
            log = out / str(i)
            res = sfp_run.run_logged(dataclasses.replace(req, boot_only=True, logdir=str(log)),
                                     env, out / f"{i}.out")
            failures.update(res.failed)
            fig = (newidle_figures(log / "guest.log") or [Figures()])[0]
            print(columns(_WIDTHS, str(i), str(res.passed),
                          str(len(res.failed)) if res.cases else "no result", fig.light,
                          fig.control, fig.missed, root_tg_max(log / "guest.log") or "-"),
                  file=table, flush=True)
    print(f"\nfailures per test case over {n} boots:", file=table)
    print("".join(f"  {c}: {failures[c]}\n" for c in sorted(failures)) or "  none\n", end="",
          file=table, flush=True)


def default_out(build: pathlib.Path, req: RunRequest) -> pathlib.Path:
    """Where sfp repeat of REQ puts its logs without -o."""
    return build / "logs" / f"{req.name or 'patched'}-repeat"


# A job set: every variant built in turn, then all boots at once. What a
# boot needs of a build is kept per build, so that the next build in the
# same worktree cannot change it under a boot still to run.
IMAGES = ("arch/x86/boot/bzImage", "initramfs.cpio.gz", ".config")


@dataclasses.dataclass(frozen=True)
class BootJob:
    """One boot of a job set: REQUEST booted (--boot-only) from the saved
    IMAGES, its logs in LOGDIR (its output in LOGDIR.out)."""
    name: str                      # the variant's directory name: NAME or NAME.debug
    boot: int
    request: RunRequest
    images: pathlib.Path
    logdir: pathlib.Path
    env: dict[str, str] | None = None  # the boot's own environment, else run_jobs' ENV


@dataclasses.dataclass(frozen=True)
class Done:
    job: BootJob
    seconds: float
    status: int
    passed: int
    failed: int
    lava: str = ""       # the LAVA jobs it took: ID@DEVICE (sfp_lab)
    queued: float = 0.0  # of those jobs: seconds queued on the server
    ran: float = 0.0     # and seconds running on a device
    result: sfp_run.RunResult | None = None  # what the boot's run gave


def _build(req: RunRequest, out: pathlib.Path, env: dict[str, str]) -> sfp_run.RunResult:
    """REQ's kernel built once (OUT emptied first, OUT/build.out);
    RepeatFailed when the build fails."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    built = sfp_run.run_logged(dataclasses.replace(req, build_only=True), env, out / "build.out")
    if built.status or built.obj is None:
        raise RepeatFailed(f"{sfp_run.command(req)} --build-only failed (see {out}/build.out)")
    return built


def build_saved(req: RunRequest, out: pathlib.Path,
                env: dict[str, str]) -> tuple[pathlib.Path, sfp_run.RunResult]:
    """_build(), and what its boots need copied to OUT/images; that
    directory, and the build's RunResult."""
    built = _build(req, out, env)
    assert built.obj is not None
    for rel in IMAGES:
        dest = out / "images" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built.obj / rel, dest)
    return out / "images", built


class JobRunner:
    """Boots of a job set, WORKERS at a time, each started as soon as it is
    given (start); results() waits for all of them, in the order given.
    With BOOT_BACKEND=lava-server each boot is a job on the LAVA server,
    which queues and schedules it: WORKERS then only bounds the waiting
    clients, and run_jobs gives every job its own."""

    def __init__(self, workers: int, env: dict[str, str], say: Callable[[str], None]):
        self.env, self.say = env, say
        self.lock = threading.Lock()
        self.finished, self.given = 0, 0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers))
        self.futures: list[concurrent.futures.Future[Done]] = []

    def _one(self, job: BootJob) -> Done:
        t0 = time.monotonic()
        res = sfp_run.run_logged(dataclasses.replace(job.request, boot_only=True,
                                                     images=str(job.images),
                                                     logdir=str(job.logdir)),
                                 job.env or self.env, pathlib.Path(f"{job.logdir}.out"))
        done = Done(job, time.monotonic() - t0, res.status, res.passed, len(res.failed),
                    *lava_jobs(job.logdir / "lava" / "jobs.json"), result=res)
        with self.lock:
            self.finished += 1
            where = f" (LAVA {done.lava})" if done.lava else ""
            self.say(f"[{self.finished}/{self.given}] {job.name} boot {job.boot}: "
                     f"{int(done.seconds)}s, {done.passed} passed, {done.failed} failed{where}"
                     + ("" if res.cases else f" (no result: see {job.logdir}.out)"))
        return done

    def start(self, jobs: list[BootJob]) -> None:
        with self.lock:
            self.given += len(jobs)
        self.futures += [self.pool.submit(self._one, j) for j in jobs]

    def results(self) -> list[Done]:
        return sfp_run.wait_runs(self.pool, self.futures)

    def stop(self) -> None:
        """No given boot starts, and the running ones end (their LAVA jobs
        cancelled): for a caller stopped before it waits (Ctrl-C, SIGTERM)."""
        self.pool.shutdown(wait=False, cancel_futures=True)
        sfp_run.stop_runs()


def lava_jobs(path: pathlib.Path) -> tuple[str, float, float]:
    """The LAVA jobs a boot took (sfp_lab.run_job's jobs.json), as
    'ID@DEVICE' joined by ' then ' (a resubmission), with their seconds
    queued and running; ('', 0, 0) for none."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", 0.0, 0.0
    return (" then ".join(f"{r.get('job_id', '?')}@{r.get('device') or '-'}" for r in rows),
            sum(float(r.get("queued") or 0) for r in rows),
            sum(float(r.get("ran") or 0) for r in rows))


def run_jobs(jobs: list[BootJob], workers: int, env: dict[str, str],
             say: Callable[[str], None]) -> list[Done]:
    """Every job, at most WORKERS at a time, in the order given; what each
    took and gave."""
    runner = JobRunner(workers, env, say)
    runner.start(jobs)
    return runner.results()


def jobs_table(done: list[Done], workers: int, wall: float, how: str = "") -> str:
    """jobs.tsv: a row per job, then the job set's wall time against the
    sum of its jobs (HOW says what ran at once; default: WORKERS boots).
    For LAVA jobs, also each one's job and device and its seconds queued
    and running (the server's stamps); the sum is then of the running."""
    lava = any(d.lava for d in done)
    how = how or f"{workers} at once"
    rows = ["variant\tboot\tseconds\texit\tpassed\tfailed"
            + ("\tlava\tqueued\tran" if lava else "")]
    rows += [f"{d.job.name}\t{d.job.boot}\t{d.seconds:.0f}\t{d.status}\t{d.passed}\t{d.failed}"
             + (f"\t{d.lava or '-'}\t{d.queued:.0f}\t{d.ran:.0f}" if lava else "")
             for d in done]
    if lava:
        ran = sum(d.ran for d in done)
        queued = [d.queued for d in done if d.lava]
        rows.append(f"# {len(done)} boots, {ran:.0f} s running on the devices, queued "
                    f"{sum(queued) / len(queued):.0f} s on average and {max(queued):.0f} s at "
                    f"most, {wall:.0f} s wall with {how} "
                    f"({ran / wall if wall else 0:.2f} devices busy on average)")
    else:
        total = sum(d.seconds for d in done)
        rows.append(f"# {len(done)} boots, {total:.0f} s of boots, {wall:.0f} s wall with "
                    f"{how} ({total / wall if wall else 0:.2f}x)")
    return "\n".join(rows) + "\n"
