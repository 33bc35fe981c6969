# SPDX-License-Identifier: GPL-2.0
"""The project's whole test suite ('make check'); it ends with 'N passed,
N failed':

  1. the series of every line (patches/LINE/) whose source is here
     (SFP_SRC_<LINE>, else its Debian package's tarball; a line without
     one is reported as not checked, a skip): prepare the line's work
     tree from that source, checkpatch --strict, the patches numbered,
     the generated patches match kunit/ and selftests/, the feature
     patches reproduce the source's kernel/sched/ byte for byte;
  2. the tool: shellcheck of the shell scripts left, --help of every
     subcommand, its unit tests, the data and the prose counts, and every
     bad input (no tree, not a kernel tree, dirty user tree, a tree where
     a patch is 'neither', a line without a series or a source, a bad
     variable or flag, missing package, QEMU not installed, no disk
     space) gives a one-line error and leaves the user's tree (git
     status, HEAD) and the build directory as they were;
  3. the main job (sfp run) on the default line, and on every other line
     checked in 1 the distro kind (sfp run -K distro: the scheduler
     configured as the distribution configures it, harness/sfp_distro.py):
     build, boot, KUnit and kselftests in the guest; with --full both
     kinds on every line;
  4. (--full) the robot checks (sfp robot --quick) on every line checked
     in 1: kernel/sched/ of each patch of the series on its own, of
     patched in the configs of kernel-config/robot/, with W=1 and sparse
     against series-base, and cross built for arm64;
  5. the guest watchdog: a guest that hangs and one that panics are
     reported as failures; then the same boots as LAVA jobs
     (BOOT_BACKEND=lava, lava-run): the main job's kernel gives the same
     Result as its direct boot and LAVA's records agree with the logs; a
     hang, a panic, a missing initramfs and a failed case are each
     reported as such;
  6. (--full) the benchmark's smoke mode (sfp bench --smoke): baseline
     and patched built with one config, one short A/B round, every
     metric collected and the counters moving the expected way;
  7. the debug kernel (kernel-config/debug.config): the sched/debug race
     check (sfp race --lockdep-only: lockdep reports the unlocked
     avg_vruntime() call without patch 1 and stays quiet with it, where
     the KUnit suites and kselftests pass too), then a 20 s stress phase
     (sfp stress -S 20).

Without --full, steps 4 and 6 are left out: that is the presubmit tier
(make check, what CI runs), chosen so that a cold machine finishes well
inside CI's 90 minutes; --full (make certify) adds them. --quick runs 1
and 2 only (no kernel build). Wall time is printed per stage. Steps 5 to
7 test the harness and the 6.12 line's race fix and run on the default
line only. Results of line-specific checks carry the line: suite
check-6.1, source 6.1/kunit, and so on. Each case's output is in
$BUILD/check/SUITE.NAME.log; every result in $BUILD/check/all.tsv.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Callable, TextIO

from harness import sfp_env
from harness import sfp_guest
from harness import sfp_prepare
from harness import sfp_results
from harness import sfp_run
from harness import sfp_series as S
from harness import sfp_summary
from harness.sfp_data import ROOT, Data

SFP = str(ROOT / "sfp")
PATCHES_TOP = ROOT / "patches"
GIT_T = ["-c", "user.name=t", "-c", "user.email=t@t"]

# A fresh clone's make check peaks at 6.0 GB under BUILD (two lines' work
# trees, 6.12's debug kernel worktree; measured every 20 s on a cold
# machine) and a cold ccache grows by 0.1 GB: 9 GiB leaves half again.
# --full adds every line's trees, the robot's and the benchmark's
# worktrees: 12.6 GB. A run in place reuses the worktrees.
SPACE_GIB, SPACE_FULL_GIB, SPACE_QUICK_GIB, SPACE_AGAIN_GIB = 9, 15, 5, 3


class CaseFailed(Exception):
    """A case's check did not hold; the message goes to its log."""


def _env(base: dict[str, str], unset: tuple[str, ...] = (), /, **set_: str) -> dict[str, str]:
    e = {k: v for k, v in base.items() if k not in unset}
    e.update(set_)
    return e


def ccache_counts() -> tuple[int, int, int]:
    """(hits, misses, files in the cache) as ccache's statistics stand."""
    r = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                       check=False) if shutil.which("ccache") else None
    h = m = f = 0
    for ln in (r.stdout if r and r.returncode == 0 else "").splitlines():
        k, _, v = ln.partition("\t")
        if not v.strip().isdigit():
            continue
        if k in ("direct_cache_hit", "preprocessed_cache_hit"):
            h += int(v)
        elif k == "cache_miss":
            m += int(v)
        elif k == "files_in_cache":
            f += int(v)
    return h, m, f


def space_needed(top: pathlib.Path, default: str, quick: bool,
                 full: bool) -> tuple[int, str]:
    """(GiB, what) a run of make check needs free under TOP."""
    space, what = SPACE_GIB, "make check"
    if full:
        space, what = SPACE_FULL_GIB, "make check --full"
    if quick:
        space, what = SPACE_QUICK_GIB, "make check --quick"
    if (top / default / "wt").is_dir():
        space = SPACE_AGAIN_GIB
    return space, what


# Where make check builds when the checkout's file system is short and
# BUILD was not chosen: the first of these on another file system with
# room (a CI machine's checkout can sit on a nearly full disk).
ROOM_ELSEWHERE = ("/var/tmp", "/dev/shm")


def with_room(data: Data, env: dict[str, str], quick: bool, full: bool,
              say: Callable[[str], None]) -> dict[str, str]:
    """ENV, with BUILD (and CCACHE_DIR, if ccache's disk is the short one)
    moved to another file system with room when BUILD is the default
    build/ and its file system has too little; else ENV as it is."""
    top = pathlib.Path(env.get("BUILD") or ROOT / "build")
    if env.get("SFP_NO_SPACE_CHECK", "0") != "0" or top.resolve() != (ROOT / "build").resolve():
        return env
    default = sfp_env.select_line(data, env).line
    need, what = space_needed(top, default, quick, full)
    have = sfp_prepare.free_gib(top)
    if have >= need:
        return env
    here = _device(top)
    for cand in [env.get("TMPDIR", ""), *ROOM_ELSEWHERE]:
        if not cand or not os.path.isdir(cand) or _device(pathlib.Path(cand)) == here:
            continue
        new = pathlib.Path(cand) / f"sched-fastpath-{os.getuid()}" / "build"
        if sfp_prepare.free_gib(pathlib.Path(cand)) < space_needed(new, default, quick, full)[0]:
            continue
        new.mkdir(parents=True, exist_ok=True)
        say(f"{what} needs about {need} GiB free; {top} has {have} GiB: building in {new} "
            "(BUILD= chooses)")
        out = _env(env, BUILD=str(new))
        ccache = pathlib.Path(env.get("CCACHE_DIR") or pathlib.Path.home() / ".cache" / "ccache")
        if "CCACHE_DIR" not in env and _device(ccache) == here and have < 1:
            out["CCACHE_DIR"] = str(new.parent / "ccache")
            say(f"and ccache's disk is full too: CCACHE_DIR={out['CCACHE_DIR']}")
        return out
    return env


def _device(path: pathlib.Path) -> int:
    return sfp_prepare.existing(path).stat().st_dev


class Check:
    """One make check run: its results file, its stage times and the
    environment every command gets (the default line selected)."""

    def __init__(self, data: Data, env: dict[str, str], quick: bool, full: bool,
                 say: Callable[[str], None]):
        self.data, self.quick, self.full, self.say = data, quick, full, say
        choice = sfp_env.select_line(data, env)
        self.default = choice.line
        self.top = choice.build.parent
        self.chk = self.top / "check"
        self.results = self.chk / "results.tsv"
        self.suite = "check"
        self.wt = self.top / self.default / "tree"
        self.patches = PATCHES_TOP / self.default
        # The commands below select the same line from the same variables.
        self.env = _env(env, BUILD=str(self.top))
        self.build = choice.build  # the default line's build directory
        self.stages = sfp_run.Stages(self.chk / "stage-times.tsv", fresh=False)

    # --- the framework -----------------------------------------------------------

    def record(self, suite: str, name: str, status: str, detail: str = "",
               source: str = "project") -> None:
        with open(self.results, "a", encoding="utf-8") as f:
            f.write(f"{source}\t{suite}\t{name}\t{status}\t{detail}\n")

    def log_path(self, name: str) -> pathlib.Path:
        return self.chk / f"{self.suite}.{name}.log"

    def t(self, name: str, case: Callable[[TextIO], None] | list[str],
          env: dict[str, str] | None = None) -> bool:
        """One test case of the current suite: CASE is a command (its
        output is the log) or a function that writes to the log and
        raises CaseFailed (or returns) for its verdict."""
        log = self.log_path(name)
        ok = True
        with open(log, "w", encoding="utf-8") as out:
            try:
                if isinstance(case, list):
                    out.flush()
                    ok = subprocess.run(case, stdout=out, stderr=subprocess.STDOUT,
                                        env=env or self.env, check=False, cwd=ROOT).returncode == 0
                else:
                    case(out)
            except CaseFailed as e:
                if str(e):
                    print(e, file=out)
                ok = False
            except FileNotFoundError as e:
                print(f"{e.filename} not found: {e}", file=out)
                ok = False
            except Exception:  # a bug of the case itself: a failure, with its trace
                traceback.print_exc(file=out)
                ok = False
        if ok:
            self.record(self.suite, name, "PASS")
            print(f"  ok     {self.suite}.{name}", flush=True)
        else:
            self.record(self.suite, name, "FAIL", f"see {log}")
            print(f"  FAILED {self.suite}.{name} (log: {log})")
            for ln in log.read_text(errors="replace").splitlines()[-15:]:
                print(f"         | {ln}")
            sys.stdout.flush()
        return ok

    def fold_stages(self, tsv: pathlib.Path, prefix: str = "") -> None:
        """A command's own stage times (its TSV), into make check's."""
        if tsv.is_file():
            with open(self.chk / "stage-times.tsv", "a", encoding="utf-8") as f:
                f.writelines(f"{prefix}{ln}\n" for ln in tsv.read_text().splitlines())

    def staged(self, name: str, cmd: list[str], tsv: pathlib.Path) -> bool:
        """Case NAME, the command CMD, whose stage times it writes to TSV
        (an earlier run's removed first: a command refused early writes
        none)."""
        tsv.unlink(missing_ok=True)
        ok = self.t(name, cmd)
        self.fold_stages(tsv)
        return ok

    def show(self, log: pathlib.Path, pattern: str) -> None:
        """The lines of LOG that match PATTERN, indented under the case."""
        if log.is_file():
            for ln in log.read_text(errors="replace").splitlines():
                if re.search(pattern, ln):
                    print(f"         {ln}")
        sys.stdout.flush()

    def run(self, out: TextIO, cmd: list[str], env: dict[str, str] | None = None,
            cwd: pathlib.Path | None = None) -> int:
        out.flush()
        return subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env or self.env,
                              cwd=cwd or ROOT, check=False).returncode

    def expect_error(self, out: TextIO, pattern: str, cmd: list[str],
                     env: dict[str, str] | None = None) -> None:
        """CMD fails with one 'error:' line matching PATTERN on stderr."""
        r = subprocess.run(cmd, capture_output=True, text=True, env=env or self.env, cwd=ROOT,
                           check=False)
        (self.chk / "out").write_text(r.stdout)
        (self.chk / "err").write_text(r.stderr)
        (self.chk / "rc").write_text(f"{r.returncode}\n")
        out.write(r.stderr)
        if r.returncode == 0:
            raise CaseFailed("expected a failure, got exit 0")
        if sum("error:" in ln for ln in r.stderr.splitlines()) != 1:
            raise CaseFailed("expected exactly one error line")
        if not re.search(pattern, r.stderr):
            raise CaseFailed(f"error does not match '{pattern}'")

    def on_line(self, line: str, **more: str) -> dict[str, str]:
        """The environment of a command for LINE, from its default source."""
        return _env(self.env, ("KSRC",), LINE=line, BUILD=str(self.top), **more)

    @staticmethod
    def tree_state(d: pathlib.Path) -> str:
        """What must not change in a user's git tree."""
        return "".join(subprocess.run(["git", "-C", str(d), *a], capture_output=True,
                                      text=True, check=False).stdout
                       for a in (("rev-parse", "HEAD"), ("status", "--porcelain"),
                                 ("stash", "list"), ("branch", "-a")))

    def unchanged(self, d: pathlib.Path, case: Callable[[TextIO], None]) -> \
            Callable[[TextIO], None]:
        """CASE, and D's git state did not move."""
        def check(out: TextIO) -> None:
            before = self.tree_state(d)
            case(out)
            if self.tree_state(d) != before:
                raise CaseFailed(f"user tree {d} changed")
            head = S.git(d, "rev-parse", "--short", "HEAD").stdout.strip()
            n = len(S.git(d, "status", "--porcelain").stdout.splitlines())
            print(f"user tree unchanged: {head}, {n} modified", file=out)
        return check

    def error_case(self, pattern: str, cmd: list[str], env: dict[str, str] | None = None) -> \
            Callable[[TextIO], None]:
        return lambda out: self.expect_error(out, pattern, cmd, env)

    def mini_tree(self, d: pathlib.Path, wt: pathlib.Path | None = None) -> None:
        """A small kernel-like git tree in D, a clone of the files the
        line's series changes, taken from the work tree's 'base' (WT, else
        the default line's); the first one per line is kept in
        CHK/mini-src-LINE."""
        wt = wt or self.wt
        line = wt.parent.name
        src = self.chk / f"mini-src-{line}"
        if not (src / ".git").is_dir():
            S.mini_tree(wt, src, PATCHES_TOP / line, "base")
        subprocess.run(["git", "clone", "-q", str(src), str(d)], check=True)

    # --- stage 1: the series of each line ------------------------------------------

    def check_reproduces(self, out: TextIO, wt: pathlib.Path, patches: pathlib.Path) -> None:
        """The source's kernel/sched/ with the series' prerequisite fixes
        applied is exactly what the prerequisite and feature patches make
        of series-base; whatever else differs between base and patched
        comes from the test patches. Prints the intended differences."""
        series = S.load(patches)
        states = S.states(wt, series)
        (self.chk / "patch-states.txt").write_text("".join(f"{n}\t{s}\n" for n, s in states))
        for n, s in states:
            print(f"{n}\t{s}", file=out)
        if not any("feature, in the source" in s for _, s in states):
            raise CaseFailed("the source contains none of the series' features")
        featend = S.features_end(wt, series)
        top = S.git(wt, "log", "-1", "--format=%h %s", featend).stdout.strip()
        print(f"feature patches end at {top}", file=out)
        # The source plus the prerequisites the work tree applied, in a
        # scratch index: no checkout, nothing written to the work tree.
        try:
            fixed = S.source_fixed(wt, series)
        except S.GitFailed as e:
            raise CaseFailed("a prerequisite does not apply to base") from e
        v = sfp_prepare.wt_meta(wt, "version")
        for p in series:
            if p.role != "prereq" or S.in_rev(wt, "base", p.path):
                continue
            files = ", ".join(ln.split("\t")[2] for ln in S.git(
                wt, "apply", "--numstat", str(p.path)).stdout.splitlines() if ln.count("\t") >= 2)
            print(f"intended difference from the source {v}: {p.name} ({files})", file=out)
        if S.git(wt, "diff", "--quiet", fixed, featend, "--", "kernel/sched").returncode:
            out.write(S.git(wt, "diff", "--stat", fixed, featend, "--", "kernel/sched").stdout)
            raise CaseFailed("series-base + prerequisite and feature patches differs from the "
                             "source's kernel/sched (+ prerequisites)")
        print("kernel/sched/ of series-base + prerequisites + features = source + "
              "prerequisites: identical", file=out)
        print("git diff base patched -- kernel/sched (prerequisites and test patches):", file=out)
        out.write(S.git(wt, "diff", "--stat", "base", "patched", "--", "kernel/sched").stdout)

    def checkpatch_all(self, out: TextIO, wt: pathlib.Path, patches: pathlib.Path) -> None:
        """checkpatch --strict on every patch. A prerequisite is a backport
        and carries its upstream id ('commit <40 hex> upstream.'), and the
        line must be there (stable's form, not checkpatch's: GIT_COMMIT_ID
        is ignored for it). The work tree, made from a tarball, has no
        upstream history to look a cited commit up in, so that one finding
        (UNKNOWN_COMMIT_ID) is ignored; the form of every other citation is
        still checked (GIT_COMMIT_ID), which checkpatch does only when it
        runs outside a git repository, as it does here."""
        if not (wt / "scripts" / "checkpatch.pl").is_file():
            raise CaseFailed("no work tree")
        bad = False
        # The directories MAINTAINERS lists (F: lines ending in '/'): the
        # tree's, then what the series adds.
        listed = S.listed_dirs(wt)
        for p in S.load(patches):
            text = p.path.read_text(errors="replace")
            opts = ["--strict", "--no-tree", "-q", "--ignore", "UNKNOWN_COMMIT_ID"]
            # checkpatch asks whether MAINTAINERS needs updating for a new
            # file; with --no-tree it cannot see that a listed directory
            # already covers it.
            if S.new_files_covered(text, listed):
                opts += ["--ignore", "FILE_PATH_CHANGES"]
            listed += re.findall(r"^\+F:\t(\S+/)$", text, re.M)
            if p.role == "prereq":
                opts += ["--ignore", "GIT_COMMIT_ID"]
                if not re.search(r"^commit [0-9a-f]{40} upstream\.$", text, re.M):
                    print(f"{p.name}: a prerequisite without its 'commit <id> upstream.' line",
                          file=out)
                    bad = True
            with tempfile.TemporaryDirectory(prefix="sfp-checkpatch.") as away:
                r = subprocess.run(["perl", str(wt.resolve() / "scripts" / "checkpatch.pl"), *opts,
                                    str(p.path.resolve())], cwd=away, capture_output=True,
                                   text=True, check=False)
            found = (r.stdout + r.stderr).rstrip("\n")
            if found:
                print(f"{p.name}:\n{found}", file=out)
                bad = True
            else:
                m = re.search(r"^commit ([0-9a-f]{12}).* upstream\.$", text, re.M)
                note = (f" (upstream id {m.group(1) if m else ''} not looked up: no upstream "
                        "history here)") if p.role == "prereq" else ""
                print(f"{p.name}: clean{note}", file=out)
        if bad:
            raise CaseFailed("")

    @staticmethod
    def series_numbered(out: TextIO, patches: pathlib.Path) -> None:
        """Patch I of the N in the series is '[PATCH I/N]'."""
        series = S.load(patches)
        bad = False
        for i, p in enumerate(series):
            want = f"[PATCH {i + 1}/{len(series)}]"
            m = re.search(r"^Subject: (\[PATCH[^]]*\])", p.path.read_text(errors="replace"), re.M)
            got = m.group(1) if m else ""
            if got == want:
                print(f"{p.name}: {got}", file=out)
            else:
                print(f"{p.name}: {got or 'no [PATCH] prefix'}, expected {want}", file=out)
                bad = True
        if bad:
            raise CaseFailed("")

    def series_cases(self, line: str) -> None:
        """Prepare LINE's work tree from its source, checkpatch, numbering,
        the source reproduced, the generated patches."""
        with self.stages.stage(f"series {line}: prepare, checkpatch, reproduce the source"), \
                self.use_line(line):
            wt, patches = self.top / line / "tree", PATCHES_TOP / line
            self.t("prepare_work_tree", [SFP, "prepare"], self.on_line(line))
            self.show(self.log_path("prepare_work_tree"), r"work tree (ready|.* is up to date)")
            self.t("checkpatch_strict", lambda o: self.checkpatch_all(o, wt, patches))
            self.t("series_numbered", lambda o: self.series_numbered(o, patches))
            self.t("series_reproduces_source", lambda o: self.check_reproduces(o, wt, patches))
            self.show(self.log_path("series_reproduces_source"),
                      r"^(kernel/sched/ of|intended)")
            self.t("test_patches_match_sources", [SFP, "gen-patches", "--check"],
                   self.on_line(line))
            self.t("submission_as_the_user", lambda o: self.submission(o, line))

    def submission(self, out: TextIO, line: str) -> None:
        """sfp submission as a user with an identity of their own: one
        message, from them and signed off by them, the placeholder nowhere,
        checkpatch clean; with the placeholder as the identity, refused."""
        d = self.top / line / "submission-check"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        cfg = d / "gitconfig"
        cfg.write_text("[user]\n\tname = Test Developer\n\temail = test@kernel.test\n")
        env = dict(self.on_line(line), GIT_CONFIG_GLOBAL=str(cfg))
        self.expect_error(out, "placeholder", [SFP, "submission", "-o", str(d / "refused")],
                          dict(env, GIT_CONFIG_GLOBAL=str(self.placeholder_config(d))))
        self.expect_error(out, "reserved domain", [SFP, "submission", "-o", str(d / "r2")], env)
        r = subprocess.run([SFP, "submission", "--trial", "-o", str(d / "out")], env=env,
                           cwd=ROOT, capture_output=True, text=True, check=False)
        out.write(r.stdout + r.stderr)
        if r.returncode:
            raise CaseFailed(f"sfp submission exited {r.returncode}")
        made = sorted((d / "out").glob("*.eml"))
        if len(made) != 1:
            raise CaseFailed(f"{len(made)} messages, not the one upstream patch")
        text = made[0].read_text()
        for want in ("From: Test Developer <test@kernel.test>",
                     "Signed-off-by: Test Developer <test@kernel.test>"):
            if want not in text:
                raise CaseFailed(f"no '{want}' in {made[0].name}")
        if "sched-fastpath@example.org" in text:
            raise CaseFailed(f"the placeholder identity is in {made[0].name}")
        if "checkpatch --strict: total: 0 errors, 0 warnings, 0 checks" not in r.stdout:
            raise CaseFailed("checkpatch --strict is not clean on the message")
        print(f"ok: {made[0].name}, from and signed off by the user, checkpatch clean",
              file=out)

    @staticmethod
    def placeholder_config(d: pathlib.Path) -> pathlib.Path:
        cfg = d / "placeholder-gitconfig"
        cfg.write_text("[user]\n\tname = sched-fastpath\n"
                       "\temail = sched-fastpath@example.org\n")
        return cfg

    @contextlib.contextmanager
    def use_line(self, line: str, suite: str = ""):
        """The suite (check-LINE unless SUITE) for the block."""
        saved = self.suite
        self.suite = suite or f"check-{line}"
        try:
            yield
        finally:
            self.suite = saved

    # --- stage 2: the tool and bad input ---------------------------------------------

    def shell_scripts(self) -> list[str]:
        """Every shell script and sourced library of scripts/, tests/ and
        .ci/ (a '#!...sh' or '# shellcheck shell=' line)."""
        found = []
        for top in ("scripts", "tests", ".ci"):
            for f in sorted((ROOT / top).rglob("*")):
                if f.is_file() and re.search(r"^#!.*(ba)?sh|^# shellcheck shell=",
                                             f.read_text(errors="replace"), re.M):
                    found.append(str(f))
        return found

    def help_all(self, out: TextIO) -> None:
        for s in sorted((ROOT / "scripts").glob("*.sh")) + sorted((ROOT / "scripts").glob("*.py")):
            if self.run(out, [str(s), "--help"]) != 0:
                raise CaseFailed(f"{s} --help failed")
            print(f"{s} --help: ok", file=out)
        r = subprocess.run([SFP, "--help"], capture_output=True, text=True, check=False)
        if r.returncode:
            raise CaseFailed("sfp --help failed")
        # Every subcommand sfp --help lists (a new one is checked without
        # being named here).
        subs = re.findall(r"^    ([a-z][a-z-]*)(?: |$)", r.stdout, re.M)
        if len(subs) < 30:
            raise CaseFailed(f"sfp --help lists too few subcommands: {' '.join(subs)}")
        for s in subs:
            if subprocess.run([SFP, s, "--help"], capture_output=True, check=False).returncode:
                raise CaseFailed(f"sfp {s} --help failed")
            print(f"sfp {s} --help: ok", file=out)

    def types(self, out: TextIO) -> None:
        """mypy (Debian's) on ./sfp and the harness package, its unit tests
        among them."""
        out.flush()
        if subprocess.run(["mypy", "--cache-dir", str(self.chk / "mypy-cache"), "sfp", "harness"],
                          cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                          check=False).returncode:
            raise CaseFailed("mypy finds type errors in the harness")

    def user_state(self) -> str:
        """What a refused input must leave as it was: the project's git
        status and what the runs made under BUILD: every file of the logs
        and reports, and the work trees and build directories themselves
        (not their contents: a kernel tree is 80k files); make check's own
        aside."""
        status = S.git(ROOT, "status", "--porcelain").stdout
        found = []
        for dirpath, dirs, files in os.walk(self.top):
            d = pathlib.Path(dirpath)
            depth = len(d.relative_to(self.top).parts)
            found.append(str(d))
            keep = []
            for x in dirs:
                p = d / x
                if p == self.chk:
                    continue
                if x in ("tree", "wt", "obj") or depth >= 4:
                    found.append(str(p))
                    continue
                keep.append(x)
            dirs[:] = keep
            if depth < 5:
                found += [str(d / f) for f in files]
        return status + "\n".join(sorted(found))

    def refused_row(self, out: TextIO, what: str, pattern: str, cmd: list[str],
                    env: dict[str, str] | None = None) -> None:
        """CMD stops with one error line matching PATTERN, and the project's
        git status and BUILD are as they were; a row of CHK/bad-input.md
        says so, with the exit status and the line."""
        before = hashlib.sha256(self.user_state().encode()).hexdigest()
        err: CaseFailed | None = None
        try:
            self.expect_error(out, pattern, cmd, env)
        except CaseFailed as e:
            err = e
        same = "yes" if hashlib.sha256(self.user_state().encode()).hexdigest() == before else "NO"
        first = next((ln for ln in (self.chk / "err").read_text().splitlines() if "error:" in ln),
                     "")

        def rel(s: str) -> str:
            return s.replace(f"{ROOT}/", "").replace(f"{self.chk}/", "CHK/")
        code = (self.chk / "rc").read_text().strip()
        what = what.replace(f"{self.chk}/", "CHK/").replace(f"{ROOT}/", "")
        with open(self.chk / "bad-input.md", "a", encoding="utf-8") as f:
            f.write(f"| `{what}` | {code} | {rel(first).replace('|', chr(92) + '|')} | "
                    f"{same} |\n")
        if err:
            raise err
        if same != "yes":
            raise CaseFailed(f"git status or {self.top} changed")

    def refused_before_work(self, out: TextIO, pattern: str, **variables: str) -> None:
        """sfp run with VARIABLES stops with one error line matching
        PATTERN, and makes nothing under its BUILD nor anywhere else."""
        b = self.chk / "build-bad"
        shutil.rmtree(b, ignore_errors=True)
        shown = " ".join(f"{k}={v}" for k, v in variables.items())
        self.refused_row(out, f"{shown} make", pattern, [SFP, "run"],
                         _env(self.env, BUILD=str(b), **variables))
        if b.exists():
            raise CaseFailed(f"sfp run made {b}")
        print(f"refused before any work: {shown}", file=out)

    def bad_variables(self, out: TextIO) -> None:
        """Every variable the main job takes and the bad flags of the other
        targets, refused in one line before any work; the table of them
        is CHK/bad-input.md."""
        (self.chk / "bad-input.md").write_text(
            "| input | exit | the one line | git status and build/ unchanged |\n"
            "|---|---|---|---|\n")
        c = self.chk
        failed = []
        checks: list[tuple[str, Callable[[], None]]] = []
        for pat, var, val in (
                (f"KSRC={c}/nonexistent does not exist", "KSRC", f"{c}/nonexistent"),
                (f"KSRC={c}/notkernel is not a kernel source tree", "KSRC", f"{c}/notkernel"),
                ("LINE=4.19: no series", "LINE", "4.19"),
                ("unknown topology 'nosuch'", "TOPOLOGY", "nosuch"),
                ("topology sock4x2 has 4 NUMA nodes, but kernel kind 'main'", "TOPOLOGY",
                 "sock4x2"),
                ("SMP=abc: a number of vCPUs", "SMP", "abc"),
                ("SMP=16: a number of vCPUs from 1 to 8", "SMP", "16"),
                ("MEM=lots: a memory size", "MEM", "lots"),
                ("ACCEL=hvf: one of tcg, kvm, auto", "ACCEL", "hvf"),
                ("BOOT_TIMEOUT=-5: a timeout", "BOOT_TIMEOUT", "-5"),
                ("JOBS=0: a number of build jobs", "JOBS", "0")):
            checks.append((f"{var}={val}",
                           functools.partial(self.refused_before_work, out, pat, **{var: val})))
        checks.append(("BOOT_BACKEND=lava-server LAVA_DEVICE_TYPE=qemu", lambda:
                       self.refused_before_work(out, "LAVA_DEVICE_TYPE=qemu is a lab elsewhere",
                                                BOOT_BACKEND="lava-server",
                                                LAVA_DEVICE_TYPE="qemu")))
        for what, pat, cmd, env in (
                ("./sfp run -K fast", "unknown kernel kind 'fast'", [SFP, "run", "-K", "fast"],
                 None),
                ("DISTRO_CONFIG=missing ./sfp run -K distro",
                 f"the distribution's config '{c}/nonexistent.xz' not found",
                 [SFP, "run", "-K", "distro"],
                 _env(self.env, DISTRO_CONFIG=f"{c}/nonexistent.xz")),
                ("sfp stress --minutes abc",
                 "--minutes wants a whole number of minutes > 0, not 'abc'",
                 [SFP, "stress", "--minutes", "abc"], None),
                ("sfp stress -t sock4x2 (kind debug)", "kernel kind 'debug' is built without",
                 [SFP, "stress", "-t", "sock4x2"], None),
                ("sfp bench -t 'smp2 mesh'", "unknown topology 'mesh'",
                 [SFP, "bench", "-t", "smp2 mesh"], None),
                ("sfp mutate nosuch", "unknown variant 'nosuch'", [SFP, "mutate", "nosuch"],
                 None),
                ("sfp mutate -k 0", "-k needs a number of boots", [SFP, "mutate", "-k", "0"],
                 None),
                ("BOOT_BACKEND=vm sfp boot", "-B wants qemu, lava or lava-server, not 'vm'",
                 [SFP, "boot", "--kernel", SFP, "-i", SFP, "-l", str(c / "logs-bad")],
                 _env(self.env, BOOT_BACKEND="vm"))):
            checks.append((what, functools.partial(self.refused_row, out, what, pat, cmd, env)))
        for what, check in checks:
            try:
                check()
            except CaseFailed as e:
                print(f"{what}: {e}", file=out)
                failed.append(what)
        out.write((c / "bad-input.md").read_text())
        if failed:
            raise CaseFailed(f"not refused as they should be: {', '.join(failed)}")

    def ksrc_missing_keeps_report(self, out: TextIO) -> None:
        """A KSRC that is not there is refused before the last run's report
        is touched."""
        b = self.chk / "build-keep"
        logs = b / self.default / "logs" / "patched"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / "report.txt").write_text("the last run's report\n")
        self.expect_error(out, f"KSRC={self.chk}/nonexistent does not exist", [SFP, "run"],
                          _env(self.env, ("LINE",), BUILD=str(b),
                               KSRC=f"{self.chk}/nonexistent"))
        if not (logs / "report.txt").is_file() or \
                (logs / "report.txt").read_text() != "the last run's report\n":
            raise CaseFailed("the last report was lost")
        if pathlib.Path(f"{logs}.prev").exists():
            raise CaseFailed("the logs were moved")
        print("refused; the last report kept", file=out)

    def path_without(self, tool: str) -> str:
        """A PATH that has everything but one tool, to stand for a missing
        package."""
        d = self.chk / f"path-without-{tool}"
        d.mkdir(parents=True, exist_ok=True)
        for src in ("/usr/local/bin", "/usr/bin", "/bin"):
            for f in sorted(pathlib.Path(src).iterdir()) if pathlib.Path(src).is_dir() else []:
                link = d / f.name
                if not link.exists() and not link.is_symlink():
                    link.symlink_to(f)
        (d / tool).unlink(missing_ok=True)
        return str(d)

    def versioned_tree(self, d: pathlib.Path, changes: dict[str, str]) -> None:
        """A mini tree whose Makefile has CHANGES (VERSION, PATCHLEVEL),
        committed."""
        self.mini_tree(d)
        mk = d / "Makefile"
        text = mk.read_text()
        for key, val in changes.items():
            text = re.sub(rf"^{key} = .*$", f"{key} = {val}", text, count=1, flags=re.M)
        mk.write_text(text)
        subprocess.run(["git", "-C", str(d), *GIT_T, "commit", "-q", "-am", "version"],
                       check=True)

    def prepare_refused(self, out: TextIO, pattern: str, src: pathlib.Path, wt: pathlib.Path,
                        **more: str) -> None:
        """sfp prepare of SRC is refused, and no half-made work tree is
        left."""
        self.expect_error(out, pattern, [SFP, "prepare", "-o", str(wt)],
                          _env(self.env, KSRC=str(src), **more))
        if wt.exists():
            raise CaseFailed("a half-made work tree was left behind")

    def line61(self, out: TextIO) -> None:
        """A 6.1 source: the line follows KSRC's version, not -s."""
        c = self.chk
        # -s does not choose the line: a 6.1 source on the 6.12 line is refused...
        self.expect_error(out, "is Linux 6.1.[0-9]*, not on the 6.12 line: give it as KSRC=",
                          [SFP, "prepare", "--source", str(c / "line61"), "-o", str(c / "wt-61")],
                          _env(self.env, ("KSRC", "LINE")))
        # ...KSRC does, and the 6.1 series applies to it
        if self.run(out, [SFP, "prepare", "-o", str(c / "wt-61")],
                    _env(self.env, ("LINE",), KSRC=str(c / "line61"))):
            raise CaseFailed("")
        out.write(S.git(c / "wt-61", "log", "--oneline", "base..patched").stdout)
        n = S.git(c / "wt-61", "rev-list", "--count", "base..patched").stdout.strip()
        want = len(S.load(PATCHES_TOP / "6.1"))
        if n != str(2 + want):
            raise CaseFailed(f"expected 2 back-outs and the {want} patches of the 6.1 series")

    def good(self, out: TextIO) -> None:
        """An unchanged copy of the source: prepared, and the series
        reproduces it."""
        c = self.chk
        if self.run(out, [SFP, "prepare", "-o", str(c / "wt-good")],
                    _env(self.env, KSRC=str(c / "good"))):
            raise CaseFailed("")
        out.write(S.git(c / "wt-good", "log", "--oneline", "base..patched").stdout)
        self.check_reproduces(out, c / "wt-good", self.patches)

    @staticmethod
    def wt_state(wt: pathlib.Path) -> str:
        """The refs and notes of a work tree, to see that it did not move."""
        return S.git(wt, "for-each-ref", "--format=%(refname) %(objectname)").stdout + \
            S.git(wt, "notes", "--ref=sfp", "list").stdout

    def missing_series_file(self, out: TextIO) -> None:
        """A series naming a missing file stops before making or recording
        anything: for a new work tree and for a prepared one."""
        c = self.chk
        env = _env(self.env, PATCHES=str(c / "patches-broken"), KSRC=str(c / "good"))
        pat = "names 0009-not-there.patch, which is not in"
        self.expect_error(out, pat, [SFP, "prepare", "-o", str(c / "wt-broken")], env)
        if (c / "wt-broken").exists() or (c / "wt-broken.new").exists():
            raise CaseFailed("a work tree was left behind")
        if not (c / "wt-good" / ".git").is_dir():
            raise CaseFailed("no prepared mini work tree to reuse")
        before = self.wt_state(c / "wt-good")
        self.expect_error(out, pat, [SFP, "prepare", "-o", str(c / "wt-good")], env)
        if self.wt_state(c / "wt-good") != before:
            raise CaseFailed("the prepared work tree changed")
        print("nothing made, nothing recorded", file=out)

    def small_disk(self, out: TextIO) -> None:
        """A work tree on a file system without room for it is refused
        before anything is written there."""
        c = self.chk
        self.expect_error(out, f"a new work tree needs about 3 GiB free where {c}/small is",
                          [SFP, "prepare", "-o", str(c / "small" / "wt")],
                          _env(self.env, ("SFP_NO_SPACE_CHECK",), KSRC=str(c / "good")))
        left = [p.name for p in (c / "small").iterdir()]
        if left:
            raise CaseFailed(f"something was written: {' '.join(left)}")
        print("refused; nothing written", file=out)

    def scripts_cases(self) -> None:
        """The tool, its data and its unit tests, and the bad inputs, each
        giving one error line and leaving the user's tree as it was."""
        c = self.chk
        with self.stages.stage("project: scripts and bad input"), self.use_line(self.default,
                                                                                "check"):
            lines = " ".join(self.data.line_names())
            if sfp_env.missing_tool("shellcheck", "shellcheck"):
                raise sfp_env.InputError(sfp_env.missing_tool("shellcheck", "shellcheck"))
            self.t("shellcheck", ["shellcheck", "-x", *self.shell_scripts()])
            self.t("help_on_every_script", self.help_all)
            if sfp_env.missing_tool("mypy", "mypy"):
                raise sfp_env.InputError(sfp_env.missing_tool("mypy", "mypy"))
            self.t("harness_types", self.types)
            self.t("sfp_unit_tests", [sys.executable, "-m", "unittest", "discover", "-s",
                                      str(ROOT / "harness" / "tests"), "-t", str(ROOT)])
            self.t("sfp_data_loads", [SFP, "data"])
            self.t("prose_counts_match_data", [SFP, "prose"])
            self.t("bad_arguments_rejected", self.error_case("unrecognized arguments: --bogus",
                                                             [SFP, "run", "--bogus"]))
            self.t("bench_bad_vcpus_rejected", self.error_case(
                "unknown topology 'smp16'", [SFP, "bench", "-s", "2 16"]))
            self.t("bench_bad_topology_rejected", self.error_case(
                "unknown topology 'mesh'", [SFP, "bench", "-t", "smp2 mesh"]))

            # Scratch work trees go under CHK, never over the real one.
            saved_env = self.env
            self.env = _env(self.env, BUILD=str(c / "build"))
            try:
                self.t("no_tree", self.error_case("does not exist", [SFP, "prepare"],
                                                  _env(self.env, KSRC=f"{c}/nonexistent")))
                nk = c / "notkernel"
                nk.mkdir(parents=True, exist_ok=True)
                subprocess.run(["git", "-C", str(nk), "init", "-q"], check=True)
                (nk / "README").write_text("hello\n")
                self.t("not_a_kernel_tree", self.unchanged(nk, self.error_case(
                    "is not a kernel source tree", [SFP, "prepare"], _env(self.env,
                                                                          KSRC=str(nk)))))
                self.t("ksrc_missing_keeps_last_report", self.ksrc_missing_keeps_report)
                self.t("bad_variables_refused_before_work", self.bad_variables)
                self._tree_cases(lines)
                no_ccache, no_qemu = self.path_without("ccache"), \
                    self.path_without("qemu-system-x86_64")
                self.t("missing_package", self.error_case(
                    "ccache not found: install the Debian package 'ccache'",
                    [SFP, "build-kernel", "--tree", str(c / f"mini-src-{self.default}"), "--obj",
                     str(c / "obj-x")], _env(self.env, PATH=no_ccache)))
                (c / "fake-bzImage").write_text("")
                (c / "fake-initrd").write_text("")
                self.t("qemu_not_installed", self.error_case(
                    "qemu-system-x86_64 not found: install the Debian package 'qemu-system-x86'",
                    [SFP, "boot", "--kernel", str(c / "fake-bzImage"), "-i", str(c / "fake-initrd"),
                     "-l", str(c / "logs-x")], _env(self.env, PATH=no_qemu)))
                if (self.wt / ".git").is_dir():
                    self.t("series_reproduces_source_mini_tree",
                           self.unchanged(c / "good", self.good))
                # A series that names a file that is not there stops before
                # anything is applied or recorded.
                broken = c / "patches-broken"
                broken.mkdir(parents=True, exist_ok=True)
                for f in self.patches.iterdir():
                    shutil.copy(f, broken / f.name)
                out_lines, done = [], False
                for ln in (self.patches / "series").read_text().splitlines():
                    out_lines.append(ln)
                    if ln.endswith(".patch") and not done:
                        out_lines.append("0009-not-there.patch")
                        done = True
                (broken / "series").write_text("".join(f"{ln}\n" for ln in out_lines))
                self.t("series_missing_file_stops_early", self.missing_series_file)
                # A 16 MiB tmpfs stands for a full disk; mounting one needs root.
                (c / "small").mkdir(parents=True, exist_ok=True)
                if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "sfp-small",
                                   str(c / "small")], capture_output=True,
                                  check=False).returncode == 0:
                    try:
                        self.t("no_space_refused", self.small_disk)
                    finally:
                        subprocess.run(["umount", str(c / "small")], check=False)
                else:
                    why = "cannot mount a small tmpfs (needs root)"
                    self.record("check", "no_space_refused", "SKIP", why)
                    print(f"  skip   check.no_space_refused: {why}")
            finally:
                self.env = saved_env

    def _tree_cases(self, lines: str) -> None:
        """The cases that need files from the default line's work tree."""
        c = self.chk
        if not (self.wt / ".git").is_dir():
            for n in ("dirty_user_tree", "patch_neither_applies_nor_contained",
                      "series_reproduces_source_mini_tree"):
                self.record("check", n, "FAIL", "no work tree to take files from")
            return
        self.mini_tree(c / "dirty")
        with open(c / "dirty" / "kernel" / "sched" / "fair.c", "a", encoding="utf-8") as f:
            f.write("/* a user's edit */\n")
        self.t("dirty_user_tree", self.unchanged(c / "dirty", self.error_case(
            "uncommitted changes", [SFP, "prepare", "-o", str(c / "wt-dirty")],
            _env(self.env, KSRC=str(c / "dirty")))))

        self.mini_tree(c / "drift")
        # Context drift around update_tg_load_avg(): patch 1 can neither
        # apply nor reverse-apply, while patch 2 still reverse-applies.
        fair = c / "drift" / "kernel" / "sched" / "fair.c"
        fair.write_text(fair.read_text().replace(
            "No need to update load_avg for root_task_group as it is not used.",
            "Root: nothing reads its load_avg."))
        subprocess.run(["git", "-C", str(c / "drift"), *GIT_T, "commit", "-q", "-am", "drift"],
                       check=True)
        self.t("patch_neither_applies_nor_contained", self.unchanged(
            c / "drift", lambda o: self.prepare_refused(
                o, "0002-.*neither applies.*kernel/sched/fair.c at line [0-9]*.*known to work",
                c / "drift", c / "wt-drift")))
        # With the blobs of the prepared work tree a three-way merge is
        # tried; here the drifted line is one the patch itself adds: a
        # conflict, named.
        self.t("patch_conflict_named", self.unchanged(
            c / "drift", lambda o: self.prepare_refused(
                o, "0002-.*neither applies.*a three-way merge conflicts in kernel/sched/fair.c",
                c / "drift", c / "wt-drift", THREEWAY_FROM=str(self.wt))))

        # The line follows the source's version, and a version with no line
        # is refused with the lines there are.
        self.versioned_tree(c / "line510", {"VERSION": "5", "PATCHLEVEL": "10"})
        self.t("line_without_series_refused", self.unchanged(c / "line510", self.error_case(
            f"Linux 5.10.[0-9]* .* is on the 5.10 line, which has no series: lines are {lines}",
            [SFP, "prepare", "-o", str(c / "wt-510")],
            _env(self.env, ("LINE",), KSRC=str(c / "line510")))))
        # A version between lines names the nearest one below it.
        self.versioned_tree(c / "line613", {"PATCHLEVEL": "13"})
        self.t("line_between_names_nearest", self.unchanged(c / "line613", self.error_case(
            "Linux 6.13.[0-9]* .* no series: .* the nearest is 6.12, LINE=6.12 forces it",
            [SFP, "prepare", "-o", str(c / "wt-613")],
            _env(self.env, ("LINE",), KSRC=str(c / "line613")))))
        # A line without a Debian package and without SFP_SRC_<LINE> names
        # both ways to give it a source.
        for name, rec in self.data.lines.items():
            if rec.debian_package:
                continue
            self.t("line_without_source_named", self.error_case(
                f"no source for the {name} line: no Debian package carries {name}: give a "
                f"tree as KSRC=.* or {rec.env_var}=",
                [SFP, "prepare", "-o", str(c / "wt-nosrc")],
                _env(self.env, ("KSRC", rec.env_var), LINE=name)))
            break
        self.t("line_unknown_refused", self.error_case(
            f"LINE=4.19: no series patches/4.19/series; lines are {lines}",
            [SFP, "prepare", "-o", str(c / "wt-419")], _env(self.env, LINE="4.19")))
        if (self.top / "6.1" / "tree" / ".git").is_dir():
            self.mini_tree(c / "line61", self.top / "6.1" / "tree")
            self.t("line_follows_the_source", self.unchanged(c / "line61", self.line61))
        self.mini_tree(c / "good")

    # --- stages 3 to 7: kernels -------------------------------------------------------

    def main_job_cases(self, line: str, kind: str = "") -> None:
        """The main job (sfp run) on LINE, or with KIND a kernel of that
        kind (sfp run -K KIND -n KIND). Its own stages print their wall
        times; its results are merged into make check's, the source
        column saying the line (and the kind)."""
        t0 = time.monotonic()
        src = self.data.lines[line].default_source(self.env)
        v = sfp_env.source_version(pathlib.Path(src))
        what = f"{kind} kernel" if kind else "main job"
        print(f"==> {what}, line {line}: Linux {v} from {src}", flush=True)
        name = kind or "patched"
        cmd = [SFP, "run", "-K", kind, "-n", kind] if kind else [SFP, "run"]
        rc = subprocess.run(cmd, env=self.on_line(line), cwd=ROOT, check=False).returncode
        logs = sfp_run.kernel_logs(self.top / line, name)
        res = logs / "results.tsv"
        tag = f"{line}-{kind}" if kind else line
        if res.is_file() and res.stat().st_size:
            with open(self.chk / "main-job.tsv", "a", encoding="utf-8") as f:
                for ln in res.read_text().splitlines():
                    f.write(f"{tag}/{ln}\n")
        else:
            self.record("run", f"{kind or 'main'}_job", "FAIL",
                        f"./sfp {' '.join(cmd[1:])} exited {rc} before any test ran",
                        source=f"{tag}/project")
        dt = int(time.monotonic() - t0)
        self.fold_stages(logs / "stage-times.tsv", f"{what}, line {line}: ")
        with open(self.chk / "stage-times.tsv", "a", encoding="utf-8") as f:
            f.write(f"{what}, line {line}\t{dt}\n")
        print(f"<== {what}, line {line}: {dt}s", flush=True)

    def robot_cases(self, line: str) -> None:
        with self.stages.stage(f"robot checks, line {line} (kernel/sched/ objects)"), \
                self.use_line(line):
            self.t("robot_builds", [SFP, "robot", "--quick"], self.on_line(line))
            self.show(self.log_path("robot_builds"), r"^\| .* \| (FAILED|n/a)|^W=1|^    ")

    def tiny_initrd(self, name: str, init: str) -> pathlib.Path:
        """busybox and an init that misbehaves, as a gzipped cpio."""
        d = self.chk / f"initrd-{name}"
        (d / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy("/bin/busybox", d / "bin" / "busybox")
        (d / "init").write_text(f"#!/bin/busybox sh\n{init}\n")
        (d / "init").chmod(0o755)
        out = self.chk / f"{name}.cpio.gz"
        sfp_guest.newc(d, out)
        return out

    def kimg(self) -> pathlib.Path:
        return sfp_run.kernel_obj(self.build, "patched") / "arch" / "x86" / "boot" / "bzImage"

    def watchdog_cases(self) -> None:
        """A guest that hangs and one that panics are failures, booted on
        the default line's main kernel."""
        c, kimg = self.chk, self.kimg()
        with self.stages.stage("watchdog: hang and panic"):
            if not kimg.is_file():
                self.record("check", "watchdog", "FAIL", "no kernel was built")
                return
            hang = self.tiny_initrd("hang", "/bin/busybox sleep 100000")
            panic = self.tiny_initrd("panic", "exit 1")
            self.t("guest_hang_reported", self.error_case(
                "guest hung", [SFP, "boot", "--kernel", str(kimg), "-i", str(hang), "-l",
                               str(c / "logs-hang")],
                _env(self.env, BOOT_TIMEOUT="25", SMP="1")))
            self.t("guest_panic_reported", self.error_case(
                "Kernel panic", [SFP, "boot", "--kernel", str(kimg), "-i", str(panic), "-l",
                                 str(c / "logs-panic")],
                _env(self.env, BOOT_TIMEOUT="120", SMP="1")))

    def lava_compare(self, out: TextIO) -> None:
        """The main job's kernel booted as a LAVA job (lava-run) gives the
        same Result as its direct boot, and LAVA's own records agree with
        the logs (sfp boot checks that)."""
        c = self.chk
        direct = sfp_run.kernel_logs(self.build, "patched")
        if self.run(out, [SFP, "run", "--boot-only", "-l", str(c / "lava-main")],
                    _env(self.env, BOOT_BACKEND="lava")):
            raise CaseFailed("")
        summary = c / "lava-main" / "lava" / "summary.txt"
        out.write(summary.read_text() if summary.is_file() else "")
        if self.run(out, [SFP, "compare", str(direct), str(c / "lava-main")]):
            raise CaseFailed("")

    def lava_failed_case(self, out: TextIO) -> None:
        """A guest whose test fails, or skips, is a failed (a skipped) case
        in LAVA's records under its own SUITE.CASE name, not a passed job."""
        c = self.chk
        tap = self.tiny_initrd("tap", """/bin/busybox mount -t devtmpfs dev /dev
{ echo "sfp-cases: kunit"; echo "sfp-cases-end: kunit"; } >/dev/console
echo "sfp: guest tiny up" >/dev/console
{ echo "sfp-begin: probe"; echo "ok 1 sfp_lava_pass"; echo "not ok 2 sfp_lava_fail"
  echo "ok 3 sfp_lava_skip # SKIP precondition: none"; echo "sfp-end: probe rc=1"
  echo "sfp-case: pass probe.sfp_lava_pass"; echo "sfp-case: fail probe.sfp_lava_fail"
  echo "sfp-case: skip probe.sfp_lava_skip"; echo sfp-done; } >/dev/ttyS1
/bin/busybox reboot -f""")
        if self.run(out, [SFP, "boot", "--kernel", str(self.kimg()), "-i", str(tap), "-l",
                          str(c / "logs-lava-tap")],
                    _env(self.env, BOOT_BACKEND="lava", BOOT_TIMEOUT="120", SMP="1")):
            raise CaseFailed("")
        tsv = c / "logs-lava-tap" / "lava" / "lava-results.tsv"
        rows = tsv.read_text().splitlines() if tsv.is_file() else []
        for want in ("lava\tguest\tprobe.sfp_lava_fail\tFAIL\t",
                     "lava\tguest\tprobe.sfp_lava_skip\tSKIP\t"):
            if want not in rows:
                raise CaseFailed(f"LAVA did not record {want.split(chr(9))[2]} as "
                                 f"{want.split(chr(9))[3]}")
        text, counts = sfp_summary.render("LAVA's records", sfp_results.read_tsv(tsv))
        (c / "lava-tap.summary").write_text(text + "\n")
        print(text.splitlines()[-1], file=out)
        if not counts["FAIL"]:
            raise CaseFailed("the summary of a failed case passed")

    def lava_doctored_record(self, out: TextIO) -> None:
        """The main LAVA job's records with one case's result changed: the
        Result made from that boot fails, naming the case."""
        c = self.chk
        src, d = c / "lava-main", c / "lava-doctored"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d)
        tsv = d / "lava" / "lava-results.tsv"
        rows = tsv.read_text().splitlines() if tsv.is_file() else []
        i = next((i for i, r in enumerate(rows) if r.split("\t")[3:4] == ["PASS"]), None)
        if i is None:
            raise CaseFailed("the main LAVA job recorded no passed case")
        f = rows[i].split("\t")
        rows[i] = "\t".join(f[:3] + ["FAIL"] + f[4:])
        tsv.write_text("".join(r + "\n" for r in rows))
        want = f"LAVA recorded {f[1]} {f[2]} as fail, the logs have pass"
        r = subprocess.run([SFP, "report", "-l", str(d), "--tree", str(self.wt),
                            "--obj", str(sfp_run.kernel_obj(self.build, "patched")), "-o",
                            str(d / "r.tsv")],
                           capture_output=True, text=True, check=False)
        out.write(r.stdout + r.stderr)
        if r.returncode != 1 or want not in (d / "r.tsv").read_text():
            raise CaseFailed(f"no failed row '{want}'")
        print(want, file=out)

    def lava_cases(self) -> None:
        """Boots as LAVA jobs (lava-run, Debian's lava-dispatcher) on the
        default line's main kernel: the same Result as the direct boot, and
        a hang, a panic, a missing initramfs and a failed case each
        reported as what they are, within the boot's timeout."""
        c, kimg = self.chk, self.kimg()
        with self.stages.stage("LAVA: the main job as a LAVA job, and bad jobs"):
            if not kimg.is_file():
                self.record("check", "lava", "FAIL", "no kernel was built")
                return
            if os.geteuid() != 0:
                self.record("check", "lava", "SKIP", "lava-run must run as root")
                print("  skip   check.lava: lava-run must run as root")
                return
            self.t("lava_main_job_matches_direct", self.lava_compare)
            self.show(self.log_path("lava_main_job_matches_direct"), r"LAVA|differences")
            hang = self.tiny_initrd("hang", "/bin/busybox sleep 100000")
            panic = self.tiny_initrd("panic", "exit 1")
            self.t("lava_hang_reported", self.error_case(
                "guest hung: no power-off within 25s",
                [SFP, "boot", "--kernel", str(kimg), "-i", str(hang), "-l",
                 str(c / "logs-lava-hang")],
                _env(self.env, BOOT_BACKEND="lava", BOOT_TIMEOUT="25", SMP="1")))
            self.t("lava_panic_reported", self.error_case(
                "LAVA job failed: .*Kernel panic",
                [SFP, "boot", "--kernel", str(kimg), "-i", str(panic), "-l",
                 str(c / "logs-lava-panic")],
                _env(self.env, BOOT_BACKEND="lava", BOOT_TIMEOUT="120", SMP="1")))
            self.t("lava_missing_initrd_refused", self.error_case(
                f"initramfs '{c}/no-such.cpio.gz' not found",
                [SFP, "boot", "--kernel", str(kimg), "-i", str(c / "no-such.cpio.gz"), "-l",
                 str(c / "logs-lava-noinitrd")], _env(self.env, BOOT_BACKEND="lava")))
            self.t("lava_failed_case_recorded", self.lava_failed_case)
            self.t("lava_doctored_record_fails", self.lava_doctored_record)

    def bench_cases(self) -> None:
        """The benchmark's smoke round, and an output directory with earlier
        results in it refused."""
        c = self.chk
        with self.stages.stage("bench: smoke A/B round"):
            self.staged("bench_smoke", [SFP, "bench", "--smoke"],
                        self.build / "bench" / "smoke" / "stage-times.tsv")
            self.show(self.log_path("bench_smoke"),
                      r"^\[|^  smp2: |target: |smoke check|check not made")
            (c / "bench-used").mkdir(parents=True, exist_ok=True)
            (c / "bench-used" / "earlier-run").write_text("")
            self.t("bench_keeps_earlier_results", self.error_case(
                "is not empty", [SFP, "bench", "-o", str(c / "bench-used")]))

    def debug_cases(self) -> None:
        """The debug kernel, with the sched/debug race check (lockdep fires
        without patch 1 and stays quiet with it) and a 20 s stress."""
        with self.stages.stage("debug kernel: the sched/debug race check, the tests, "
                               "a short stress"):
            self.staged("race_lockdep_check", [SFP, "race", "--lockdep-only"],
                        self.build / "race" / "stage-times.tsv")
            self.show(self.build / "race" / "report.md", r"^\| (unfixed|fixed) ")
            self.staged("stress_short", [SFP, "stress", "-S", "20"],
                        self.build / "stress" / "stage-times.tsv")
            self.show(self.log_path("stress_short"), r"sfp: patched")

    # --- the whole run ----------------------------------------------------------------

    def main(self) -> int:
        c = self.chk
        space, what = space_needed(self.top, self.default, self.quick, self.full)
        try:
            sfp_prepare.need_space(self.top, space, what, self.env)
        except sfp_prepare.PrepareError as e:
            raise sfp_env.InputError(str(e)) from e
        shutil.rmtree(c, ignore_errors=True)
        c.mkdir(parents=True)
        self.results.write_text("")
        (c / "stage-times.tsv").write_text("")
        t0 = time.monotonic()
        h0, m0, f0 = ccache_counts()

        # The lines that have a source: SFP_SRC_<LINE>, or a Debian
        # package (whose tarball setup.sh installed; a missing one fails
        # below). A line with neither is not checked, and says so: a
        # skip, never a pass.
        checked = []
        for name, rec in self.data.lines.items():
            if rec.default_source(self.env):
                checked.append(name)
                continue
            msg = f"line {name} not checked: {sfp_prepare.source_hint(self.data, name)}"
            print(msg, flush=True)
            self.record(f"check-{name}", "line_checked", "SKIP", msg)
        for line in checked:
            self.series_cases(line)
        self.scripts_cases()
        if not self.quick:
            # The default line's main job (the later stages boot its
            # kernel), every other line on the distro kind (the
            # distribution's scheduler options); --full: both on every line.
            for line in checked:
                for kind in ("", "distro") if self.full else \
                        ("",) if line == self.default else ("distro",):
                    self.main_job_cases(line, kind)
            if self.full:
                for line in checked:
                    self.robot_cases(line)
            self.watchdog_cases()
            self.lava_cases()
            if self.full:
                self.bench_cases()
            self.debug_cases()

        print()
        rows = [ln.rpartition("\t") for ln in (c / "stage-times.tsv").read_text().splitlines()]
        print("stage times (wall):" + "".join(f" {n} {t}s;" for n, _, t in rows))
        h1, m1, _ = ccache_counts()
        mode = " --quick" if self.quick else " --full" if self.full else ""
        speed = (f"make check{mode}: {int(time.monotonic() - t0)} s wall; ccache: {m1 - m0} "
                 f"compiled, {h1 - h0} from the cache ({f0} files in it at the start)")
        print(speed, flush=True)
        (c / "speed.txt").write_text(speed + "\n")
        # main-job.tsv: the main jobs' cases (a job that ran none is a
        # failure in results.tsv).
        tsvs = [str(p) for p in (self.results, c / "main-job.tsv") if p.is_file()]
        return sfp_summary.summarize("make check: all results", [], tsvs, str(c / "all.tsv"),
                                     False, None)
