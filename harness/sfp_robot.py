# SPDX-License-Identifier: GPL-2.0
"""Build the series of a line's prepared work tree ($BUILD/LINE/tree; make
prepare) as the kernel test robot would, and write a table of what built
and what did not:

  bisect    series-base (the features backed out), then each patch of the
            series on top of the ones before it, in the main job's config
            (the config fragments of sfp build-kernel);
  configs   patched in the main config with each fragment of
            kernel-config/robot/ merged last. A fragment whose options the
            line's Kconfig cannot give (an option that is gone, a bool
            asked as a module) is 'n/a' with the option named, never built
            and never a pass;
  warnings  series-base and patched with W=1 and sparse (C=2) over
            kernel/sched/: a finding of patched's that series-base does
            not have (file and message, line numbers left out) is new;
  arm64     patched in the main config, cross built with the arm64
            record's compiler (sfp.toml [archs]).

What is built: the kernel (bzImage, arm64 Image); with --quick, the
kernel/sched/ objects only (a compile, no link). One git worktree
($BUILD/LINE/wt/robot/tree) and one build directory per architecture
($BUILD/LINE/wt/robot/obj/ARCH), so that each build after the first
recompiles only what changed; ccache as for every kernel here.

Writes TABLE (default $BUILD/LINE/robot/table.md) and the logs beside it,
$BUILD/LINE/robot/NN-NAME-COMMIT.log. Exit status 1 if a build fails or a
warning is new.
"""
from __future__ import annotations

import collections
import os
import pathlib
import re
import shutil
import subprocess
import time
from typing import Callable

from harness import sfp_build, sfp_env, sfp_errors, sfp_prepare, sfp_run, sfp_series
from harness.sfp_data import ROOT, Data

VARIANTS = ROOT / "kernel-config" / "robot"
TOOLS = (("gcc", "gcc"), ("make", "make"), ("ccache", "ccache"), ("sparse", "sparse"))
_FINDING = re.compile(r"^[^ ]+:[0-9]+:([0-9]+:)? (warning|error): ")
_ERROR = re.compile(r"error:|Error [0-9]")


class RobotError(sfp_errors.Failed):
    """The robot cannot run; the message is one line."""


def findings(log: str) -> list[str]:
    """The W=1 and sparse findings of a build log, without the paths above
    the tree or line and column numbers, sorted."""
    found = [re.sub(r"^[^ :]*/((kernel|include|arch|lib|mm|fs)/)", r"\1", ln, count=1)
             for ln in log.splitlines() if _FINDING.match(ln)]
    return sorted(re.sub(r"^([^ :]+):[0-9]+:([0-9]+:)? ", r"\1: ", ln, count=1) for ln in found)


def first_error(log: str) -> str:
    """A failed build's first error line, its path from the tree's top."""
    return next((re.sub(r"^[^ ]*/(kernel|include|arch)/", r"\1/", ln, count=1)[:160]
                 for ln in log.splitlines() if _ERROR.search(ln)), "")


class Robot:
    """The robot's worktree and build directories of a line's BUILD, and
    the rows of its table."""

    def __init__(self, build: pathlib.Path, quick: bool, cross: str, jobs: str,
                 say: Callable[[str], None], env: dict[str, str]):
        self.quick, self.cross, self.jobs, self.say = quick, cross, jobs, say
        self.env = env  # make's environment
        self.tree, self.out = build / "tree", build / "robot"
        self.wt = sfp_run.kernel_wt(build, "robot")
        # One build directory per architecture beside the worktree, as
        # sfp run puts a -r build (obj/ARCH instead of obj/NAME).
        self.objtop = self.wt.parent / "obj"
        self.rows: list[str] = []
        self.failed, self.step = False, 0

    def git(self, *args: str, tree: pathlib.Path | None = None) -> str:
        r = subprocess.run(["git", "-C", str(tree or self.wt), *args], capture_output=True,
                           text=True, check=False)
        if r.returncode:
            raise RobotError(f"git {' '.join(args[:2])} failed: {r.stderr.strip()[:200]}")
        return r.stdout

    def checkout(self, rev: str) -> None:
        """The worktree at REV; only the files that differ are rewritten, so
        the builds stay incremental."""
        self.git("checkout", "-q", "-f", "--detach", rev)
        self.git("clean", "-q", "-fdx")

    def arch_args(self, arch: str) -> list[str]:
        return ["ARCH=x86_64"] if arch == "x86_64" else \
            ["ARCH=arm64", f"CROSS_COMPILE={self.cross}"]

    def kmake(self, arch: str, log: pathlib.Path, *args: str) -> bool:
        cc = "gcc" if arch == "x86_64" else f"{self.cross}gcc"
        with open(log, "ab") as f:
            return subprocess.run(["make", "-C", str(self.wt), f"O={self.objtop / arch}",
                                   *self.arch_args(arch), f"CC=ccache {cc}", "HOSTCC=ccache gcc",
                                   "KBUILD_BUILD_USER=sched-fastpath", "KBUILD_BUILD_HOST=robot",
                                   f"-j{self.jobs}", *args], stdout=f, stderr=subprocess.STDOUT,
                                  env=self.env, check=False).returncode == 0

    def make_config(self, arch: str, name: str, fragments: list[pathlib.Path]) -> None:
        """The fragments merged onto allnoconfig in the worktree as it is,
        kept as OUT/NAME.config."""
        obj = self.objtop / arch
        obj.mkdir(parents=True, exist_ok=True)
        log = self.out / f"config-{name}.log"
        env = dict(self.env, **dict(a.split("=", 1) for a in self.arch_args(arch)))
        with open(log, "wb") as f:
            rc = subprocess.run(["scripts/kconfig/merge_config.sh", "-n", "-O", str(obj),
                                 *map(str, fragments)], cwd=self.wt, env=env, stdout=f,
                                stderr=subprocess.STDOUT, check=False).returncode
        if rc:
            raise RobotError(f"merge_config.sh failed for {name} (log: {log})")
        shutil.copyfile(obj / ".config", self.out / f"{name}.config")

    def build_one(self, arch: str, cfg: str, what: str, target: str = "",
                  *args: str) -> pathlib.Path:
        """TARGET (by default the kernel, or kernel/sched/ with --quick) of
        the worktree as it is, with OUT/CFG.config; one row of the table."""
        self.step += 1
        head = self.git("rev-parse", "--short", "HEAD").strip()
        log = self.out / f"{self.step:02d}-{cfg}-{head}.log"
        target = target or ("kernel/sched/" if self.quick else
                            "bzImage" if arch == "x86_64" else "Image")
        self.say(f"[{self.step}] {what}, {cfg} config, {arch}: make "
                 f"{''.join(a + ' ' for a in args)}{target}")
        log.write_text("")
        shutil.copyfile(self.out / f"{cfg}.config", self.objtop / arch / ".config")
        t0 = time.monotonic()
        if self.kmake(arch, log, "olddefconfig") and self.kmake(arch, log, *args, target):
            res = f"built ({target}, {int(time.monotonic() - t0)}s)"
        else:
            res = f"FAILED: {first_error(log.read_text(errors='replace'))}"
            self.failed = True
            self.say(f"  {res} (log: {log})")
        self.rows.append(f"| {what} | {cfg} | {arch} | {res} |")
        return log


def run(data: Data, line: str, build: pathlib.Path, quick: bool, table: pathlib.Path | None,
        env: dict[str, str], say: Callable[[str], None]) -> bool:
    """Every build; the table written. False when a build failed or a
    finding is new."""
    cross = data.archs["arm64"].cross
    # The same relative layout as every -r build of sfp run (source two
    # levels above the build directory), so ccache shares their objects.
    r = Robot(build, quick, cross, env.get("JOBS") or str((os.cpu_count() or 1) + 1), say,
              dict(env, CCACHE_BASEDIR=env.get("CCACHE_BASEDIR") or str(build.resolve())))
    tree = r.tree
    if not (tree / ".git").is_dir():
        raise RobotError(f"no prepared work tree at {tree} (make prepare, or ./sfp prepare)")
    for rev in ("series-base", "patched"):
        if sfp_series.git(tree, "rev-parse", "-q", "--verify", rev).returncode:
            raise RobotError(f"{tree} has no 'series-base' and 'patched' (prepare it again: "
                             "./sfp prepare)")
    sfp_env.need_tools(RobotError, *TOOLS, (f"{cross}gcc", "gcc-aarch64-linux-gnu"))
    table = table or r.out / "table.md"
    r.out.mkdir(parents=True, exist_ok=True)
    r.objtop.mkdir(parents=True, exist_ok=True)
    for f in list(r.out.glob("*.log")) + list(r.out.glob("*.findings")):
        f.unlink()
    t_all = time.monotonic()
    if not (r.wt / ".git").exists():
        with sfp_errors.raised_as(RobotError, sfp_prepare.PrepareError):
            sfp_prepare.need_space(build, 2, "the robot's worktree and builds", env)
        say(f"checking out a worktree of {tree} at {r.wt}")
        r.git("worktree", "prune", tree=tree)
        r.git("worktree", "add", "-q", "--detach", str(r.wt), "patched", tree=tree)

    npatches = int(r.git("rev-list", "--count", "series-base..patched", tree=tree))
    say(f"line {line}, work tree {tree}: {npatches} patches on series-base"
        f"{', --quick: kernel/sched/ only' if quick else ''}")
    # The configs, all made from patched (whose fragments name the tests'
    # own options; an older commit's olddefconfig drops what it lacks).
    r.checkout("patched")
    frags = sfp_run.default_fragments(r.wt)
    r.make_config("x86_64", "main", frags)
    na = []
    variants = sorted(VARIANTS.glob("*.config"))
    for v in variants:
        r.make_config("x86_64", v.stem, frags + [v])
        # An option asked off must be listed off: one the line does not
        # have at all is not met either (the build would be main's again).
        if miss := sfp_build.config_unmet(r.out / f"{v.stem}.config", [v], strict=True):
            na.append(f"| patched | {v.stem} | x86_64 | n/a: not possible on this line: "
                      f"{'; '.join(miss)} |")
            (r.out / f"{v.stem}.config").unlink()
    r.make_config("arm64", "arm64-main", frags)

    # bisect: series-base, then every patch.
    revs = r.git("rev-list", "--reverse", "series-base..patched", tree=tree).split()
    r.checkout("series-base")
    r.build_one("x86_64", "main", "series-base (features backed out)")
    for i, rev in enumerate(revs, 1):
        r.checkout(rev)
        subject = r.git("log", "-1", "--format=%s").strip()
        r.build_one("x86_64", "main", f"patch {i}/{npatches}: {subject}")
    # configs, on patched (checked out by the last step above).
    for v in variants:
        if (r.out / f"{v.stem}.config").is_file():
            r.build_one("x86_64", v.stem, "patched")
    r.rows += na

    # warnings: W=1 and sparse, series-base against patched.
    found = {}
    for rev in ("series-base", "patched"):
        r.checkout(rev)
        log = r.build_one("x86_64", "main", f"{rev}, W=1 C=2", "kernel/sched/", "W=1", "C=2")
        text = log.read_text(errors="replace")
        found[rev] = findings(text)
        (r.out / f"{rev}.findings").write_text("".join(f + "\n" for f in found[rev]))
    # comm -13: each finding of patched's as often as series-base lacks it
    new = sorted((collections.Counter(found["patched"]) -
                  collections.Counter(found["series-base"])).elements())
    r.failed |= bool(new)
    # A tree may refuse the installed sparse (7.1's checker-valid.sh wants
    # __typeof_unqual__, which Debian 12's 0.6.4 lacks): then only W=1 ran.
    sparse = "sparse (C=2)"
    if "is not available or not up to date" in text:
        ver = subprocess.run(["sparse", "--version"], capture_output=True, text=True, check=False)
        which = ((ver.stdout or ver.stderr).splitlines() or [""])[0]
        sparse = (f"sparse: not run, the tree refuses {which} ('C=2 specified, but sparse is not "
                  "available or not up to date')")
        say(sparse)

    r.build_one("arm64", "arm64-main", "patched")

    built = "kernel/sched/ objects (--quick)" if quick else "the kernel image"
    text = (f"# Robot checks, line {line}\n\nLinux {sfp_series.kernel_version(tree)}, "
            f"{npatches} patches on series-base;\nbuilt: {built}; {cross}gcc for arm64.\n\n"
            "| commit | config | arch | result |\n|---|---|---|---|\n"
            + "".join(row + "\n" for row in r.rows)
            + f"\nW=1 and {sparse} over kernel/sched/: series-base {len(found['series-base'])} "
            f"findings, patched {len(found['patched'])}; new in patched: {len(new)}\n"
            + "".join(f"    {f}\n" for f in new)
            + f"\nWall time: {int(time.monotonic() - t_all)}s.\n")
    table.write_text(text)
    print(text, end="")
    return not r.failed
