# SPDX-License-Identifier: GPL-2.0
"""The point-release matrix: every version of linux-source-LINE that the
Debian archive serves (apt-cache madison; fetched with apt-get download,
no other network), for every line with a series and a Debian package,
and for a line without a package its one source where one is given
(SFP_SRC_<LINE>, say SFP_SRC_6_19=/path/to/linux: a directory, git
checkout or tarball; without one, a row says so), checked against that
line's series:

  features   per feature patch of the line's series: contained (it
             reverse-applies), drifted (the source has the change with
             other context: it neither applies nor reverse-applies) or
             absent (it applies)
  baseline   whether every feature the source has backs out
             ('series-base'): plainly, else with a three-way merge
  applies    whether the series applies to series-base: 'git am', else
             'git am --3way', else the patch and the file that conflict
             (three-way merges read the blobs of the line's prepared work
             tree, $BUILD/LINE/tree, where it exists: make prepare)
  reproduced whether series-base + the feature patches gives back the
             source's kernel/sched/ byte for byte (+ any prerequisite the
             source lacks)

These four need only the files the series touches, taken from the
source. Then, for the newest and the oldest version of each line (the
one source of a line without a package), the main job (sfp run: build,
boot, KUnit, kselftests) on the whole source (with THREEWAY_FROM where
the checks needed a three-way merge), unless --no-boot.

With -j J the boots are a job set, as sfp mutate -j makes them: every
version's kernel is built first, in turn (sfp run --build-only, its
images kept in $BUILD/matrix/jobs-VERSION), then the boots run J at once
(sfp run --boot-only; with BOOT_BACKEND=lava-server, J jobs on the LAVA
server at once, each waited for by its own client). $BUILD/matrix/jobs.tsv has each boot's time.

Work and downloads go to $BUILD/matrix: the .deb files are kept and not
fetched again. Exit status 1 if a version fails a check or a build and
boot fails; the table lists every version, failing ones with the reason.
"""
from __future__ import annotations

import dataclasses
import datetime
import pathlib
import re
import shutil
import subprocess
import time
from typing import Callable

from harness import sfp_env, sfp_errors, sfp_prepare, sfp_repeat, sfp_run, sfp_series as S
from harness.sfp_data import ROOT, Data

TOOLS = (("apt-get", "apt"), ("apt-cache", "apt"), ("dpkg-deb", "dpkg"), ("git", "git"))

HEAD = """\
# Point-release matrix

Made by `{cmd}` (`make matrix`), {day}: every
`linux-source-LINE` version the Debian archive served that day. Features
are the line's feature patches by number (`patches/LINE/`): contained (the
patch reverse-applies), drifted (the source has the change with other
context: neither applies) or absent. "3way" means a three-way merge
(`git apply -R --3way` to back a drifted feature out, `git am --3way`
to apply), reading the blobs of the line's prepared work tree, was
needed. "identical" means series-base + the feature patches gives back
the source's `kernel/sched/` (plus any prerequisite fix it lacks) byte
for byte.

| line | version | features contained | drifted | absent | baseline | series applies | kernel/sched reproduced |
|---|---|---|---|---|---|---|---|
"""

BOOTS_HEAD = """
The newest and the oldest version of each line, built from the whole
source and booted with the tests (a version whose series needed a
three-way merge is prepared with `THREEWAY_FROM=build/LINE/tree`):
| line | version | main job (build, boot, KUnit, kselftests) | wall time per stage |
|---|---|---|---|
"""


class MatrixError(sfp_errors.Failed):
    """The matrix cannot be made; the message is one line."""


@dataclasses.dataclass
class Row:
    """One version's checks. ok: every check passed (the row counts
    against the exit status otherwise)."""
    line: str
    version: str
    have: str = ""
    drift: str = ""
    absent: str = ""
    base: str = ""
    applies: str = ""
    repro: str = ""
    note: str = ""  # a row that was not checked: why

    @property
    def ok(self) -> bool:
        checks = f"{self.base}|{self.applies}|{self.repro}"
        return not self.note and bool(self.have or self.drift) and \
            not any(w in checks for w in ("no:", "n/a", "differs"))

    @property
    def threeway(self) -> bool:
        return "3way" in f"{self.base}|{self.applies}"

    def md(self) -> str:
        if self.note:
            return f"| {self.line} | {self.version} | {self.note} | | | | | |"
        return (f"| {self.line} | {self.version} |{self.have or ' none'} |"
                f"{self.drift or ' none'} |{self.absent or ' none'} | {self.base} | "
                f"{self.applies} | {self.repro} |")

    def says(self) -> str:
        return (f"{self.line} {self.version}: features{self.have or ' none'}, "
                f"drifted{self.drift or ' none'}, absent{self.absent or ' none'}; "
                f"baseline {self.base}; applies {self.applies}; reproduced {self.repro}")


def _vkey(v: str) -> list:
    """A sort key close to sort -V's: runs of digits compare as numbers,
    '~' before anything, even the end (as in Debian's versions)."""
    return [(2, int(p), "") if p.isdigit() else (-1, 0, "") if p == "~" else (1, 0, p)
            for p in re.findall(r"\d+|~|[^\d~]+", v)] + [(0, 0, "")]


def versions(line_pkg: str) -> list[str]:
    """The versions of the package that the archive serves, newest first."""
    r = subprocess.run(["apt-cache", "madison", line_pkg], capture_output=True, text=True,
                       check=False)
    vs = {f[1].strip() for f in (ln.split("|") for ln in r.stdout.splitlines())
          if len(f) > 2 and f[1].strip()}
    return sorted(vs, key=_vkey, reverse=True)


def fetch(debs: pathlib.Path, pkg: str, version: str) -> tuple[pathlib.Path | None, str]:
    """PKG's .deb of VERSION in DEBS, downloaded once; or None and apt's
    last error line."""
    name = f"{pkg}_{version.replace(':', '%3a')}_all.deb"
    if not (debs / name).is_file():
        r = subprocess.run(["apt-get", "download", "-q", f"{pkg}={version}"], cwd=debs,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           check=False)
        if r.returncode or not (debs / name).is_file():
            return None, (r.stderr.strip().splitlines() or ["apt-get download failed"])[-1]
    return debs / name, ""


def source_tarball(deb: pathlib.Path, out: pathlib.Path) -> None:
    """The kernel source tarball inside DEB, to OUT (written whole or not
    at all)."""
    part = out.with_name(out.name + ".part")
    with open(part, "wb") as f:
        fsys = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                                stdout=subprocess.PIPE)
        tar = subprocess.run(["tar", "-xO", "--wildcards", "./usr/src/linux-source-*.tar.xz"],
                             stdin=fsys.stdout, stdout=f, check=False)
        assert fsys.stdout
        fsys.stdout.close()
        if fsys.wait() or tar.returncode:
            part.unlink()
            raise MatrixError(f"no source tarball in {deb}")
    part.rename(out)


def check_version(line: str, version: str, src: pathlib.Path, work: pathlib.Path,
                  patches: pathlib.Path, threeway_from: pathlib.Path | None) -> Row:
    """The four checks of one version, in the scratch tree WORK."""
    row = Row(line, version)
    series = S.load(patches)
    shutil.rmtree(work, ignore_errors=True)
    try:
        S.mini_tree(src, work, patches)
    except S.GitFailed as e:
        row.note = f"not checked: {e}"
        return row
    # baseline: back every feature the source has out; features:
    # contained (reverse-applies), absent (applies) or drifted (neither).
    row.base = "yes"
    S.git(work, "checkout", "-q", "-b", "series-base")
    try:
        out = S.back_out(work, series, threeway_from)
    except S.GitFailed:
        row.base, out = "no: git failed backing out", S.BackOut()
    for i in sorted(out.state):
        n = " " + series[i].name[:4]
        state = out.state[i]
        if state == "contained":
            row.have += n
        elif state == "absent":
            row.absent += n
        else:
            row.drift += n
            if state == "drifted" and row.base == "yes":
                row.base = f"yes (3way:{n})"
            elif state == "stuck" and not row.base.startswith("no:"):
                row.base = f"no:{n} does not back out" + (
                    f", even with --3way (conflict in {out.conflicts.get(i) or '?'})"
                    if threeway_from else "")
    # applies: git am, else git am --3way, else the conflict named
    S.git(work, "checkout", "-q", "-b", "patched")
    applied = S.apply(work, series, threeway_from=threeway_from)
    if applied.failed is None:
        row.applies = next((f"3way ({series[i].name[:4]})" for i in sorted(applied.how)
                            if applied.how[i] == "3way"), "am")
    else:
        row.applies = (f"no: {series[applied.failed].name} conflicts in "
                       f"{applied.fail_conflicts or '?'}"
                       + (f" ({applied.fail_err})" if applied.fail_err else ""))
    if row.base.startswith("no:"):
        row.applies = "n/a (no baseline)"
    # reproduced: kernel/sched of series-base + prerequisites + features
    # against the source + the prerequisites it lacks
    row.repro = "n/a"
    if not row.applies.startswith(("no:", "n/a")):
        try:
            feat, fixed = S.features_end(work, series), S.source_fixed(work, series)
        except S.GitFailed as e:
            row.repro = f"differs: {e}"
        else:
            if S.git(work, "diff", "--quiet", fixed, feat, "--", "kernel/sched").returncode == 0:
                row.repro = "identical"
            else:
                names = S.git(work, "diff", "--name-only", fixed, feat, "--",
                              "kernel/sched").stdout.split()
                row.repro = "differs: " + "".join(f"{n} " for n in names)
    return row


@dataclasses.dataclass(frozen=True)
class Boot:
    """The main job of one version: sfp run with ENV; its logs in LOGS."""
    line: str
    version: str
    env: dict[str, str]
    logs: pathlib.Path


def boot_plan(row: Row, src: pathlib.Path, top: pathlib.Path, m: pathlib.Path,
              env: dict[str, str]) -> Boot | None:
    """The main job on the whole source, when its checks passed."""
    if not (row.ok and row.repro == "identical"):
        return None
    run_env = {k: val for k, val in env.items() if k != "LINE"}
    run_env.update(KSRC=str(src), BUILD=str(m / f"build-{row.version}"),
                   THREEWAY_FROM=str(top / row.line / "tree") if row.threeway else "")
    return Boot(row.line, row.version, run_env,
                m / f"build-{row.version}" / row.line / "logs" / "patched")


def boot_row(b: Boot, res: sfp_run.RunResult, log: str,
             times: tuple[tuple[str, int], ...] = ()) -> tuple[str, bool]:
    """A row of the boots table from B's run RES, and whether it passed;
    TIMES: stage times before the boot's own (a job set's build)."""
    counts = (f"{res.passed} passed, {len(res.failed)} failed" if res.cases
              else f"no result (exit {res.status}, see {log})")
    shown = ", ".join(f"{n} {s}s" for n, s in (*times, *res.stages))
    return f"| {b.line} | {b.version} | {counts} | {shown} |", res.status == 0


def boot_version(b: Boot, m: pathlib.Path, stages: sfp_run.Stages) -> tuple[str, bool]:
    """The main job of B in turn: build, boot, tests."""
    with stages.stage(f"line {b.line}, Linux {b.version}: build, boot, tests"):
        res = sfp_run.run_logged(sfp_run.RunRequest(), b.env, m / f"run-{b.version}.log")
    return boot_row(b, res, f"run-{b.version}.log")


def boot_set(plans: list[Boot], m: pathlib.Path, workers: int, stages: sfp_run.Stages,
             say: Callable[[str], None]) -> list[tuple[str, bool]]:
    """The main jobs of PLANS as a job set: each built in turn, then the
    boots WORKERS at once; a boots-table row of each, in PLANS' order."""
    jobs: list[sfp_repeat.BootJob] = []
    rows: dict[str, tuple[str, bool]] = {}
    built: dict[str, tuple[tuple[str, int], ...]] = {}
    for b in plans:
        out = m / f"jobs-{b.version}"
        with stages.stage(f"line {b.line}, Linux {b.version}: build"):
            try:
                images, saved = sfp_repeat.build_saved(sfp_run.RunRequest(), out, b.env)
            except sfp_repeat.RepeatFailed as e:
                say(str(e))
                rows[b.version] = (f"| {b.line} | {b.version} | no result (the build failed, "
                                   f"see jobs-{b.version}/build.out) | |", False)
                continue
        built[b.version] = saved.stages
        jobs.append(sfp_repeat.BootJob(b.version, 1, sfp_run.RunRequest(), images, b.logs,
                                       b.env))
    if jobs:
        with stages.stage(f"{len(jobs)} boots as jobs, {workers} at once"):
            t0 = time.monotonic()
            done = sfp_repeat.run_jobs(jobs, workers, plans[0].env, say)
            table = sfp_repeat.jobs_table(done, workers, time.monotonic() - t0)
            (m / "jobs.tsv").write_text(table)
            say(table.splitlines()[-1].lstrip("# ") + f"; per job: {m}/jobs.tsv")
        by_version = {b.version: b for b in plans}
        for d in done:
            res = d.result or sfp_run.RunResult(d.status)
            rows[d.job.name] = boot_row(by_version[d.job.name], res, f"{d.job.logdir}.out",
                                        built[d.job.name])
    return [rows[b.version] for b in plans]


def run(data: Data, lines: list[str], boot: bool, out: pathlib.Path | None, cmd: str,
        env: dict[str, str], say: Callable[[str], None], workers: int = 0) -> bool:
    """The table, written to $BUILD/matrix/matrix.md (and OUT); False when
    a version failed a check or its boot. WORKERS: boot as a job set, that
    many at once (0: each version built and booted in turn)."""
    if workers < 0:
        raise MatrixError(f"-j wants a number of boots at once, not {workers}")
    for ln in lines:
        if ln not in data.lines:
            raise MatrixError(f"no line '{ln}': lines are {' '.join(data.line_names())}")
    sfp_env.need_tools(MatrixError, *TOOLS)
    if out and out.exists() and out.is_dir():
        raise MatrixError(f"-o {out} is a directory; a file is wanted")
    top = sfp_env.select_line(data, env).build.parent
    m = top / "matrix"
    debs = m / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    stages = sfp_run.Stages(m / "stage-times.tsv")
    rows: list[str] = []
    plans: list[Boot | str] = []  # a boot, or the row of a version not booted
    ok = True
    for line in lines:
        rec = data.lines[line]
        tw = top / line / "tree"
        threeway_from = tw if (tw / ".git" / "objects").is_dir() else None
        srcs: dict[str, pathlib.Path] = {}  # version -> its source
        if rec.debian_package:
            vs = versions(rec.debian_package)
            if not vs:
                say(f"apt-cache knows no {rec.debian_package} version (apt-get update?)")
                ok = False
                continue
            what = f"line {line}: {len(vs)} versions ({' '.join(vs)})"
        else:
            # No point releases to fetch: the line's one source, if given.
            src = rec.default_source(env)
            if not src or not pathlib.Path(src).exists():
                say(f"line {line}: not in the matrix: {sfp_prepare.source_hint(data, line)}")
                rows.append(f"| {line} | - | not in the matrix: no Debian package, no "
                            f"{rec.env_var} | | | | | |")
                continue
            vs = [sfp_env.source_version(pathlib.Path(src))]
            srcs[vs[0]] = pathlib.Path(src)
            what = f"line {line}: its source, Linux {vs[0]} ({rec.env_var})"
        checked: dict[str, Row] = {}
        with stages.stage(what):
            for v in vs:
                if v not in srcs:
                    deb, err = fetch(debs, rec.debian_package, v)
                    if deb is None:
                        rows.append(f"| {line} | {v} | not fetched: {err} | | | | | |")
                        ok = False
                        continue
                    srcs[v] = m / line / f"linux-source-{v}.tar.xz"
                    srcs[v].parent.mkdir(parents=True, exist_ok=True)
                    if not (srcs[v].is_file() and srcs[v].stat().st_size):
                        source_tarball(deb, srcs[v])
                row = checked[v] = check_version(line, v, srcs[v], m / line / v,
                                                 ROOT / "patches" / line, threeway_from)
                ok = ok and row.ok
                rows.append(row.md())
                say(row.says() if not row.note else f"{line} {v}: {row.note}")
        # newest and oldest: the main job on the whole source
        for v in dict.fromkeys((vs[0], vs[-1])) if boot else ():
            row = checked.get(v, Row(line, v, note="not fetched"))
            plans.append(boot_plan(row, srcs.get(v, pathlib.Path()), top, m, env) or
                         f"| {line} | {v} | not booted: the checks above failed |")
    booted = [p for p in plans if isinstance(p, Boot)]
    if workers:
        done = iter(boot_set(booted, m, workers, stages, say))
    else:
        done = (boot_version(b, m, stages) for b in booted)
    boots = [next(done) if isinstance(p, Boot) else (p, True) for p in plans]
    ok = ok and all(bok for _, bok in boots)
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    text = HEAD.format(cmd=cmd, day=day) + "".join(f"{r}\n" for r in rows)
    if boots:
        text += BOOTS_HEAD + "".join(f"{b}\n" for b, _ in boots)
    (m / "matrix.md").write_text(text)
    print()
    print(text, end="")
    if out:
        out.write_text(text)
    return ok
