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

from harness import sfp_env, sfp_errors, sfp_guest, sfp_prepare, sfp_results, sfp_run, sfp_summary
from harness import sfp_series as S
from harness.sfp_data import ROOT, Data

SFP = str(ROOT / "sfp")
PATCHES_TOP = ROOT / "patches"

# A fresh clone's make check peaks at 6.0 GB under BUILD (two lines' work trees, 6.12's debug
# kernel worktree; measured every 20 s on a cold machine) and a cold ccache grows by 0.1 GB: 9 GiB
# leaves half again. --full adds every line's trees, the robot's and the benchmark's worktrees:
# 12.6 GB. A run in place reuses the worktrees.
SPACE_GIB, SPACE_FULL_GIB, SPACE_QUICK_GIB, SPACE_AGAIN_GIB = 9, 15, 5, 3

# The init of each tiny guest: one that hangs, one that panics, and one
# whose tests pass, fail and skip.
TINY_INITS = {"hang": "/bin/busybox sleep 100000", "panic": "exit 1", "tap": """\
/bin/busybox mount -t devtmpfs dev /dev
{ echo "sfp-cases: kunit"; echo "sfp-cases-end: kunit"; } >/dev/console
echo "sfp: guest tiny up" >/dev/console
{ echo "sfp-begin: probe"; echo "ok 1 sfp_lava_pass"; echo "not ok 2 sfp_lava_fail"
  echo "ok 3 sfp_lava_skip # SKIP precondition: none"; echo "sfp-end: probe rc=1"
  echo "sfp-case: pass probe.sfp_lava_pass"; echo "sfp-case: fail probe.sfp_lava_fail"
  echo "sfp-case: skip probe.sfp_lava_skip"; echo sfp-done; } >/dev/ttyS1
/bin/busybox reboot -f"""}


class CaseFailed(Exception):
    """A case's check did not hold; the message goes to its log."""


def _sfp(*args: object) -> list[str]:
    return [SFP, *map(str, args)]


def ccache_counts() -> tuple[int, int, int]:
    """(hits, misses, files in the cache) as ccache's statistics stand."""
    r = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                       check=False) if shutil.which("ccache") else None
    where = {"direct_cache_hit": 0, "preprocessed_cache_hit": 0, "cache_miss": 1,
             "files_in_cache": 2}
    n = [0, 0, 0]
    for ln in (r.stdout if r and r.returncode == 0 else "").splitlines():
        k, _, v = ln.partition("\t")
        if k in where and v.strip().isdigit():
            n[where[k]] += int(v)
    return n[0], n[1], n[2]


def space_needed(top: pathlib.Path, default: str, quick: bool,
                 full: bool) -> tuple[int, str]:
    """(GiB, what) a run of make check needs free under TOP."""
    space = SPACE_QUICK_GIB if quick else SPACE_FULL_GIB if full else SPACE_GIB
    what = "make check --quick" if quick else "make check --full" if full else "make check"
    return (SPACE_AGAIN_GIB if (top / default / "wt").is_dir() else space), what


def with_room(data: Data, env: dict[str, str], quick: bool, full: bool,
              say: Callable[[str], None]) -> dict[str, str]:
    """ENV, with BUILD (and CCACHE_DIR, if ccache's disk is the short one) moved to
    another file system with room when BUILD is the default build/ and its disk is short."""
    top = pathlib.Path(env.get("BUILD") or ROOT / "build")
    if env.get("SFP_NO_SPACE_CHECK", "0") != "0" or top.resolve() != (ROOT / "build").resolve():
        return env
    default = sfp_env.select_line(data, env).line
    need, what = space_needed(top, default, quick, full)
    have = sfp_prepare.free_gib(top)
    if have >= need:
        return env
    here = _device(top)
    # The first of these on another file system with room (a CI machine's checkout can sit on a
    # nearly full disk).
    for cand in [env.get("TMPDIR", ""), "/var/tmp", "/dev/shm"]:
        if not cand or not os.path.isdir(cand) or _device(pathlib.Path(cand)) == here:
            continue
        new = pathlib.Path(cand) / f"sched-fastpath-{os.getuid()}" / "build"
        if sfp_prepare.free_gib(pathlib.Path(cand)) < space_needed(new, default, quick, full)[0]:
            continue
        new.mkdir(parents=True, exist_ok=True)
        say(f"{what} needs about {need} GiB free; {top} has {have} GiB: building in {new} "
            "(BUILD= chooses)")
        out = dict(env, BUILD=str(new))
        home_cache = pathlib.Path.home() / ".cache" / "ccache"
        if "CCACHE_DIR" not in env and _device(home_cache) == here and have < 1:
            out["CCACHE_DIR"] = str(new.parent / "ccache")
            say(f"and ccache's disk is full too: CCACHE_DIR={out['CCACHE_DIR']}")
        return out
    return env


def _device(path: pathlib.Path) -> int:
    return sfp_prepare.existing(path).stat().st_dev


class Check:
    """One make check run: its results file, its stage times and the
    environment every command gets (the default line selected)."""

    def __init__(self, data: Data, env: dict[str, str], quick: bool, full: bool):
        self.data, self.quick, self.full = data, quick, full
        choice = sfp_env.select_line(data, env)
        self.default, self.build = choice.line, choice.build  # the default line's build dir
        self.top = choice.build.parent
        self.chk = self.top / "check"
        self.results = self.chk / "results.tsv"
        self.suite = "check"
        self.wt, self.patches = self.top / self.default / "tree", PATCHES_TOP / self.default
        self.obj = sfp_run.kernel_obj(self.build, "patched")  # the main kernel's
        self.kimg = self.obj / "arch" / "x86" / "boot" / "bzImage"
        # The commands below select the same line from the same variables.
        self.env = dict(env, BUILD=str(self.top))
        self.stages = sfp_run.Stages(self.chk / "stage-times.tsv", fresh=False)

    def record(self, suite: str, name: str, status: str, detail: str = "",
               source: str = "project") -> None:
        """A row of results.tsv."""
        with open(self.results, "a", encoding="utf-8") as f:
            f.write(f"{source}\t{suite}\t{name}\t{status}\t{detail}\n")

    def t(self, name: str, case: Callable[[TextIO], None] | list[str],
          env: dict[str, str] | None = None, show: str = "") -> bool:
        """One test case of the current suite: CASE is a command (its output is the log)
        or a function that writes to the log and raises CaseFailed (or returns) for its
        verdict. The log's lines matching SHOW are printed under it."""
        log = self.chk / f"{self.suite}.{name}.log"
        ok = False
        with open(log, "w", encoding="utf-8") as out:
            try:
                if isinstance(case, list):
                    self.run(out, case, env)
                else:
                    case(out)
                ok = True
            except CaseFailed as e:
                print(e, file=out, end="\n" if str(e) else "")
            except FileNotFoundError as e:
                print(f"{e.filename} not found: {e}", file=out)
            except Exception:  # a bug of the case itself: a failure, with its trace
                traceback.print_exc(file=out)
        if ok:
            self.record(self.suite, name, "PASS")
            print(f"  ok     {self.suite}.{name}", flush=True)
        else:
            self.record(self.suite, name, "FAIL", f"see {log}")
            tail = log.read_text(errors="replace").splitlines()[-15:]
            print(f"  FAILED {self.suite}.{name} (log: {log})",
                  *(f"         | {ln}" for ln in tail), sep="\n", flush=True)
        if show:
            self.show(log, show)
        return ok

    def skip(self, name: str, why: str) -> None:
        """Case NAME of suite check, not run."""
        self.record("check", name, "SKIP", why)
        print(f"  skip   check.{name}: {why}")

    def fold_stages(self, tsv: pathlib.Path, prefix: str = "") -> None:
        """A command's own stage times (its TSV), into make check's."""
        if tsv.is_file():
            with open(self.chk / "stage-times.tsv", "a", encoding="utf-8") as f:
                f.writelines(f"{prefix}{ln}\n" for ln in tsv.read_text().splitlines())

    def staged(self, name: str, cmd: list[str], tsv: pathlib.Path, show: str = "") -> None:
        """Case NAME, the command CMD, and the stage times it writes to TSV
        (an earlier run's removed first: a command refused early writes none)."""
        tsv.unlink(missing_ok=True)
        self.t(name, cmd, show=show)
        self.fold_stages(tsv)

    @staticmethod
    def show(path: pathlib.Path, pattern: str) -> None:
        """The lines of PATH that match PATTERN, indented under the case."""
        text = path.read_text(errors="replace") if path.is_file() else ""
        print("".join(f"         {ln}\n" for ln in text.splitlines() if re.search(pattern, ln)),
              end="", flush=True)

    def run(self, out: TextIO, cmd: list[str], env: dict[str, str] | None = None,
            why: str = "") -> None:
        """CMD, its output into OUT; when it fails, so does the case (WHY)."""
        out.flush()
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env or self.env,
                          cwd=ROOT, check=False).returncode:
            raise CaseFailed(why)

    def vars(self, *unset: str, **set_: str) -> dict[str, str]:
        return {**{k: v for k, v in self.env.items() if k not in unset}, **set_}

    def expect_error(self, out: TextIO, pattern: str, cmd: list[str],
                     env: dict[str, str] | None = None) -> None:
        """CMD fails with one 'error:' line matching PATTERN on stderr."""
        r = subprocess.run(cmd, capture_output=True, text=True, env=env or self.env, cwd=ROOT,
                           check=False)
        for name, text in (("out", r.stdout), ("err", r.stderr), ("rc", f"{r.returncode}\n")):
            (self.chk / name).write_text(text)
        out.write(r.stderr)
        if r.returncode == 0:
            raise CaseFailed("expected a failure, got exit 0")
        if sum("error:" in ln for ln in r.stderr.splitlines()) != 1:
            raise CaseFailed("expected exactly one error line")
        if not re.search(pattern, r.stderr):
            raise CaseFailed(f"error does not match '{pattern}'")

    def error_case(self, pattern: str, cmd: list[str], env: dict[str, str] | None = None) -> \
            Callable[[TextIO], None]:
        return lambda out: self.expect_error(out, pattern, cmd, env)

    def on_line(self, line: str) -> dict[str, str]:
        """The environment of a command for LINE, from its default source."""
        return self.vars("KSRC", LINE=line, BUILD=str(self.top))

    def unchanged(self, d: pathlib.Path, case: Callable[[TextIO], None]) -> \
            Callable[[TextIO], None]:
        """CASE, and the git state of the user's tree D did not move."""
        def state() -> str:
            return "".join(S.git(d, *a.split()).stdout for a in (
                "rev-parse HEAD", "status --porcelain", "stash list", "branch -a"))

        def check(out: TextIO) -> None:
            before = state()
            case(out)
            if state() != before:
                raise CaseFailed(f"user tree {d} changed")
            head = S.git(d, "rev-parse", "--short", "HEAD").stdout.strip()
            n = len(S.git(d, "status", "--porcelain").stdout.splitlines())
            print(f"user tree unchanged: {head}, {n} modified", file=out)
        return check

    def mini_tree(self, d: pathlib.Path, wt: pathlib.Path | None = None) -> None:
        """A small kernel-like git tree in D: the files the line's series changes, from
        'base' of work tree WT (else the default line's), kept in CHK/mini-src-LINE."""
        wt = wt or self.wt
        src = self.chk / f"mini-src-{wt.parent.name}"
        if not (src / ".git").is_dir():
            S.mini_tree(wt, src, PATCHES_TOP / wt.parent.name, "base")
        subprocess.run(["git", "clone", "-q", str(src), str(d)], check=True)

    def stage(self, name: str, line: str = "") -> contextlib.AbstractContextManager[None]:
        """A stage, its wall time printed; its cases' suite is check-LINE, else check."""
        self.suite = f"check-{line}" if line else "check"
        return self.stages.stage(name)

    def series_cases(self, line: str) -> None:
        """Stage 1 on LINE: its work tree, checkpatch, numbering, the source, a submission."""
        with self.stage(f"series {line}: prepare, checkpatch, reproduce the source", line):
            wt, patches, env = self.top / line / "tree", PATCHES_TOP / line, self.on_line(line)
            self.t("prepare_work_tree", _sfp("prepare"), env,
                   show=r"work tree (ready|.* is up to date)")
            self.t("checkpatch_strict", lambda o: self.checkpatch_all(o, wt, patches))
            self.t("series_numbered", lambda o: self.series_numbered(o, patches))
            self.t("series_reproduces_source", lambda o: self.check_reproduces(o, wt, patches),
                   show=r"^(kernel/sched/ of|intended)")
            self.t("test_patches_match_sources", _sfp("gen-patches", "--check"), env)
            self.t("submission_as_the_user", lambda o: self.submission(o, line))

    def check_reproduces(self, out: TextIO, wt: pathlib.Path, patches: pathlib.Path) -> None:
        """The source's kernel/sched/ plus the series' prerequisites is exactly series-base plus
        the prerequisite and feature patches; the rest of base..patched is the test patches'."""
        series = S.load(patches)
        states = "".join(f"{n}\t{s}\n" for n, s in S.states(wt, series))
        (self.chk / "patch-states.txt").write_text(states)
        out.write(states)
        if "\tfeature, in the source" not in states:
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
            if p.role == "prereq" and not S.in_rev(wt, "base", p.path):
                numstat = S.git(wt, "apply", "--numstat", str(p.path)).stdout.splitlines()
                files = ", ".join(ln.split("\t")[2] for ln in numstat if ln.count("\t") >= 2)
                print(f"intended difference from the source {v}: {p.name} ({files})", file=out)
        if S.git(wt, "diff", "--quiet", fixed, featend, "--", "kernel/sched").returncode:
            out.write(S.git(wt, "diff", "--stat", fixed, featend, "--", "kernel/sched").stdout)
            raise CaseFailed("series-base + prerequisite and feature patches differs from the "
                             "source's kernel/sched (+ prerequisites)")
        print("kernel/sched/ of series-base + prerequisites + features = source + "
              "prerequisites: identical\n"
              "git diff base patched -- kernel/sched (prerequisites and test patches):", file=out)
        out.write(S.git(wt, "diff", "--stat", "base", "patched", "--", "kernel/sched").stdout)

    def checkpatch_all(self, out: TextIO, wt: pathlib.Path, patches: pathlib.Path) -> None:
        """checkpatch --strict on every patch. A prerequisite, a backport, carries its upstream id
        in stable's form ('commit <40 hex> upstream.'), not checkpatch's: GIT_COMMIT_ID is ignored
        for it. A work tree made from a tarball has no history to look a cited commit up in:
        UNKNOWN_COMMIT_ID is ignored; run outside a git repository, checkpatch checks the form of
        every other citation."""
        if not (wt / "scripts" / "checkpatch.pl").is_file():
            raise CaseFailed("no work tree")
        bad = False
        # The directories MAINTAINERS lists (F: lines ending in '/'): the
        # tree's, then what the series adds.
        listed = S.listed_dirs(wt)
        for p in S.load(patches):
            text = p.path.read_text(errors="replace")
            opts = ["--strict", "--no-tree", "-q", "--ignore", "UNKNOWN_COMMIT_ID"]
            # checkpatch asks whether MAINTAINERS needs updating for a new file; with --no-tree it
            # cannot see that a listed directory already covers it.
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
            bad |= bool(found)
            m = re.search(r"^commit ([0-9a-f]{12}).* upstream\.$", text, re.M)
            note = (f" (upstream id {m.group(1) if m else ''} not looked up: no upstream "
                    "history here)") if p.role == "prereq" else ""
            print(f"{p.name}:\n{found}" if found else f"{p.name}: clean{note}", file=out)
        if bad:
            raise CaseFailed("")

    @staticmethod
    def series_numbered(out: TextIO, patches: pathlib.Path) -> None:
        """Patch I of the N in the series is '[PATCH I/N]'."""
        series = S.load(patches)
        bad = False
        for i, p in enumerate(series, 1):
            want = f"[PATCH {i}/{len(series)}]"
            m = re.search(r"^Subject: (\[PATCH[^]]*\])", p.path.read_text(errors="replace"), re.M)
            got = m.group(1) if m else ""
            bad |= got != want
            note = "" if got == want else f", expected {want}"
            print(f"{p.name}: {got or 'no [PATCH] prefix'}{note}", file=out)
        if bad:
            raise CaseFailed("")

    def submission(self, out: TextIO, line: str) -> None:
        """sfp submission as a user with an identity of their own: one message, from and
        signed off by them, checkpatch clean; with the placeholder identity, refused."""
        d = self.top / line / "submission-check"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for cfg, name, email in (("gitconfig", "Test Developer", "test@kernel.test"), (
                "placeholder-gitconfig", "sched-fastpath", "sched-fastpath@example.org")):
            (d / cfg).write_text(f"[user]\n\tname = {name}\n\temail = {email}\n")
        env = dict(self.on_line(line), GIT_CONFIG_GLOBAL=str(d / "gitconfig"))
        self.expect_error(out, "placeholder", _sfp("submission", "-o", d / "refused"),
                          dict(env, GIT_CONFIG_GLOBAL=str(d / "placeholder-gitconfig")))
        self.expect_error(out, "reserved domain", _sfp("submission", "-o", d / "r2"), env)
        r = subprocess.run(_sfp("submission", "--trial", "-o", d / "out"), env=env, cwd=ROOT,
                           capture_output=True, text=True, check=False)
        out.write(r.stdout + r.stderr)
        if r.returncode:
            raise CaseFailed(f"sfp submission exited {r.returncode}")
        made = sorted((d / "out").glob("*.eml"))
        if len(made) != 1:
            raise CaseFailed(f"{len(made)} messages, not the one upstream patch")
        text = made[0].read_text()
        for want in (f"{h}: Test Developer <test@kernel.test>" for h in ("From", "Signed-off-by")):
            if want not in text:
                raise CaseFailed(f"no '{want}' in {made[0].name}")
        if "sched-fastpath@example.org" in text:
            raise CaseFailed(f"the placeholder identity is in {made[0].name}")
        if "checkpatch --strict: total: 0 errors, 0 warnings, 0 checks" not in r.stdout:
            raise CaseFailed("checkpatch --strict is not clean on the message")
        print(f"ok: {made[0].name}, from and signed off by the user, checkpatch clean", file=out)

    def scripts_cases(self) -> None:
        """The tool, its data and its unit tests, and the bad inputs."""
        with self.stage("project: scripts and bad input"):
            sfp_env.need_tools(sfp_env.InputError, ("shellcheck", "shellcheck"))
            # Every shell script and sourced library (a '#!...sh' or '# shellcheck shell=' line).
            files = (f for d in ("scripts", "tests", ".ci") for f in sorted((ROOT / d).rglob("*")))
            self.t("shellcheck", ["shellcheck", "-x", *(
                str(f) for f in files if f.is_file() and re.search(
                    r"^#!.*(ba)?sh|^# shellcheck shell=", f.read_text(errors="replace"), re.M))])
            self.t("help_on_every_script", self.help_all)
            sfp_env.need_tools(sfp_env.InputError, ("mypy", "mypy"))
            # mypy (Debian's) on ./sfp and the harness package, its unit tests among them.
            self.t("harness_types", lambda o: self.run(
                o, ["mypy", "--cache-dir", str(self.chk / "mypy-cache"), "sfp", "harness"],
                why="mypy finds type errors in the harness"))
            self.t("sfp_unit_tests", [sys.executable, "-m", "unittest", "discover", "-s",
                                      str(ROOT / "harness" / "tests"), "-t", str(ROOT)])
            self.t("sfp_data_loads", _sfp("data"))
            self.t("prose_counts_match_data", _sfp("prose"))
            self.t("bad_arguments_rejected", self.error_case(
                "unrecognized arguments: --bogus", _sfp("run", "--bogus")))
            self.t("bench_bad_vcpus_rejected", self.error_case(
                "unknown topology 'smp16'", _sfp("bench", "-s", "2 16")))
            self.t("bench_bad_topology_rejected", self.error_case(
                "unknown topology 'mesh'", _sfp("bench", "-t", "smp2 mesh")))
            # Scratch work trees go under CHK, never over the real one.
            saved_env, self.env = self.env, self.vars(BUILD=str(self.chk / "build"))
            try:
                self.bad_input_cases()
            finally:
                self.env = saved_env

    def help_all(self, out: TextIO) -> None:
        """--help of every script and of every subcommand sfp --help lists
        (a new one is checked without being named here)."""
        for s in sorted((ROOT / "scripts").glob("*.sh")) + sorted((ROOT / "scripts").glob("*.py")):
            self.run(out, [str(s), "--help"], why=f"{s} --help failed")
            print(f"{s} --help: ok", file=out)
        r = subprocess.run([SFP, "--help"], capture_output=True, text=True, check=False)
        if r.returncode:
            raise CaseFailed("sfp --help failed")
        subs = re.findall(r"^    ([a-z][a-z-]*)(?: |$)", r.stdout, re.M)
        if len(subs) < 30:
            raise CaseFailed(f"sfp --help lists too few subcommands: {' '.join(subs)}")
        for s in subs:
            if subprocess.run([SFP, s, "--help"], capture_output=True, check=False).returncode:
                raise CaseFailed(f"sfp {s} --help failed")
            print(f"sfp {s} --help: ok", file=out)

    def bad_input_cases(self) -> None:
        """Stage 2's bad inputs, with scratch work trees under CHK."""
        c = self.chk
        self.t("no_tree", self.error_case("does not exist", _sfp("prepare"),
                                          self.vars(KSRC=f"{c}/nonexistent")))
        nk = c / "notkernel"
        nk.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(nk), "init", "-q"], check=True)
        (nk / "README").write_text("hello\n")
        self.t("not_a_kernel_tree", self.unchanged(nk, self.error_case(
            "is not a kernel source tree", _sfp("prepare"), self.vars(KSRC=str(nk)))))
        self.t("ksrc_missing_keeps_last_report", self.ksrc_missing_keeps_report)
        self.t("bad_variables_refused_before_work", self.bad_variables)
        self.tree_cases()
        no_ccache, no_qemu = self.path_without("ccache"), self.path_without("qemu-system-x86_64")
        self.t("missing_package", self.error_case(
            "ccache not found: install the Debian package 'ccache'",
            _sfp("build-kernel", "--tree", c / f"mini-src-{self.default}", "--obj", c / "obj-x"),
            self.vars(PATH=no_ccache)))
        (c / "fake-bzImage").write_text("")
        (c / "fake-initrd").write_text("")
        self.t("qemu_not_installed", self.error_case(
            "qemu-system-x86_64 not found: install the Debian package 'qemu-system-x86'",
            _sfp("boot", "--kernel", c / "fake-bzImage", "-i", c / "fake-initrd", "-l",
                 c / "logs-x"), self.vars(PATH=no_qemu)))
        if (self.wt / ".git").is_dir():
            self.t("series_reproduces_source_mini_tree", self.unchanged(c / "good", self.good))
        # A series that names a file that is not there stops before
        # anything is applied or recorded.
        shutil.copytree(self.patches, c / "patches-broken", dirs_exist_ok=True)
        (c / "patches-broken" / "series").write_text(re.sub(
            r"^(.*\.patch)$", r"\g<1>\n0009-not-there.patch",
            (self.patches / "series").read_text(), count=1, flags=re.M))
        self.t("series_missing_file_stops_early", self.missing_series_file)
        # A 16 MiB tmpfs stands for a full disk; mounting one needs root.
        (c / "small").mkdir(parents=True, exist_ok=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "sfp-small",
                           str(c / "small")], capture_output=True, check=False).returncode:
            self.skip("no_space_refused", "cannot mount a small tmpfs (needs root)")
            return
        try:
            self.t("no_space_refused", self.small_disk)
        finally:
            subprocess.run(["umount", str(c / "small")], check=False)

    def user_state(self) -> str:
        """What a refused input must leave as it was: the project's git status, and under BUILD
        (make check's own aside) every file of the logs and reports and the work trees and build
        directories themselves (not their contents: a kernel tree is 80k files)."""
        found = []
        for dirpath, dirs, files in os.walk(self.top):
            d = pathlib.Path(dirpath)
            deep = len(d.relative_to(self.top).parts) >= 4
            dirs[:] = [x for x in dirs if d / x != self.chk]
            leaves = [x for x in dirs if deep or x in ("tree", "wt", "obj")]
            found += [str(d), *(str(d / x) for x in leaves + files)]
            dirs[:] = [x for x in dirs if x not in leaves]
        return S.git(ROOT, "status", "--porcelain").stdout + "\n".join(sorted(found))

    def refused_row(self, out: TextIO, what: str, pattern: str, cmd: list[str],
                    env: dict[str, str] | None = None) -> None:
        """CMD stops with one error line matching PATTERN, the project's git status and
        BUILD as they were; a row of CHK/bad-input.md says so, with exit status and line."""
        before = self.user_state()
        err: CaseFailed | None = None
        try:
            self.expect_error(out, pattern, cmd, env)
        except CaseFailed as e:
            err = e
        same = "yes" if self.user_state() == before else "NO"
        first = next((ln for ln in (self.chk / "err").read_text().splitlines() if "error:" in ln),
                     "")
        first = first.replace(f"{ROOT}/", "").replace(f"{self.chk}/", "CHK/").replace("|", "\\|")
        what = what.replace(f"{self.chk}/", "CHK/").replace(f"{ROOT}/", "")
        with open(self.chk / "bad-input.md", "a", encoding="utf-8") as f:
            f.write(f"| `{what}` | {(self.chk / 'rc').read_text().strip()} | {first} | {same} |\n")
        if err:
            raise err
        if same != "yes":
            raise CaseFailed(f"git status or {self.top} changed")

    def bad_variables(self, out: TextIO) -> None:
        """Every variable the main job takes and the bad flags of the other targets,
        refused in one line before any work; their table is CHK/bad-input.md."""
        c, b = self.chk, self.chk / "build-bad"
        (c / "bad-input.md").write_text(
            "| input | exit | the one line | git status and build/ unchanged |\n"
            "|---|---|---|---|\n")
        failed = []
        # sfp run with each bad variable makes nothing under its BUILD nor anywhere else.
        for pat, variables in (
                (f"KSRC={c}/nonexistent does not exist", dict(KSRC=f"{c}/nonexistent")),
                (f"KSRC={c}/notkernel is not a kernel source tree", dict(KSRC=f"{c}/notkernel")),
                ("LINE=4.19: no series", dict(LINE="4.19")),
                ("unknown topology 'nosuch'", dict(TOPOLOGY="nosuch")),
                ("topology sock4x2 has 4 NUMA nodes, but kernel kind 'main'",
                 dict(TOPOLOGY="sock4x2")),
                ("SMP=abc: a number of vCPUs", dict(SMP="abc")),
                ("SMP=16: a number of vCPUs from 1 to 8", dict(SMP="16")),
                ("MEM=lots: a memory size", dict(MEM="lots")),
                ("ACCEL=hvf: one of tcg, kvm, auto", dict(ACCEL="hvf")),
                ("BOOT_TIMEOUT=-5: a timeout", dict(BOOT_TIMEOUT="-5")),
                ("JOBS=0: a number of build jobs", dict(JOBS="0")),
                ("LAVA_DEVICE_TYPE=qemu is a lab elsewhere",
                 dict(BOOT_BACKEND="lava-server", LAVA_DEVICE_TYPE="qemu"))):
            shown = " ".join(f"{k}={v}" for k, v in variables.items())
            shutil.rmtree(b, ignore_errors=True)
            try:
                self.refused_row(out, f"{shown} make", pat, _sfp("run"),
                                 self.vars(BUILD=str(b), **variables))
                if b.exists():
                    raise CaseFailed(f"sfp run made {b}")
                print(f"refused before any work: {shown}", file=out)
            except CaseFailed as e:
                print(f"{shown}: {e}", file=out)
                failed.append(shown)
        for what, pat, cmd, env in (
                ("./sfp run -K fast", "unknown kernel kind 'fast'", ["run", "-K", "fast"], None),
                ("DISTRO_CONFIG=missing ./sfp run -K distro",
                 f"the distribution's config '{c}/nonexistent.xz' not found",
                 ["run", "-K", "distro"], self.vars(DISTRO_CONFIG=f"{c}/nonexistent.xz")),
                ("sfp stress --minutes abc",
                 "--minutes wants a whole number of minutes > 0, not 'abc'",
                 ["stress", "--minutes", "abc"], None),
                ("sfp stress -t sock4x2 (kind debug)", "kernel kind 'debug' is built without",
                 ["stress", "-t", "sock4x2"], None),
                ("sfp bench -t 'smp2 mesh'", "unknown topology 'mesh'",
                 ["bench", "-t", "smp2 mesh"], None),
                ("sfp mutate nosuch", "unknown variant 'nosuch'", ["mutate", "nosuch"], None),
                ("sfp mutate -k 0", "-k needs a number of boots", ["mutate", "-k", "0"], None),
                ("BOOT_BACKEND=vm sfp boot", "-B wants qemu, lava or lava-server, not 'vm'",
                 ["boot", "--kernel", SFP, "-i", SFP, "-l", str(c / "logs-bad")],
                 self.vars(BOOT_BACKEND="vm"))):
            try:
                self.refused_row(out, what, pat, _sfp(*cmd), env)
            except CaseFailed as e:
                print(f"{what}: {e}", file=out)
                failed.append(what)
        out.write((c / "bad-input.md").read_text())
        if failed:
            raise CaseFailed(f"not refused as they should be: {', '.join(failed)}")

    def ksrc_missing_keeps_report(self, out: TextIO) -> None:
        """A missing KSRC is refused before the last run's report is touched."""
        logs = self.chk / "build-keep" / self.default / "logs" / "patched"
        logs.mkdir(parents=True, exist_ok=True)
        report = logs / "report.txt"
        report.write_text("the last run's report\n")
        self.expect_error(out, f"KSRC={self.chk}/nonexistent does not exist", _sfp("run"),
                          self.vars("LINE", BUILD=str(self.chk / "build-keep"),
                                    KSRC=f"{self.chk}/nonexistent"))
        if not report.is_file() or report.read_text() != "the last run's report\n":
            raise CaseFailed("the last report was lost")
        if pathlib.Path(f"{logs}.prev").exists():
            raise CaseFailed("the logs were moved")
        print("refused; the last report kept", file=out)

    def path_without(self, tool: str) -> str:
        """A PATH that has everything but TOOL, to stand for a missing package."""
        d = self.chk / f"path-without-{tool}"
        d.mkdir(parents=True, exist_ok=True)
        for src in ("/usr/local/bin", "/usr/bin", "/bin"):
            for f in sorted(pathlib.Path(src).glob("*")):
                if not os.path.lexists(d / f.name):
                    (d / f.name).symlink_to(f)
        (d / tool).unlink(missing_ok=True)
        return str(d)

    def tree_cases(self) -> None:
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
        self.prepare_refused("dirty_user_tree", c / "dirty", "uncommitted changes", "wt-dirty")
        # Context drift around update_tg_load_avg(): patch 1 can neither
        # apply nor reverse-apply, while patch 2 still reverse-applies.
        self.edited_tree(c / "drift", "kernel/sched/fair.c", "drift", (
            r"No need to update load_avg for root_task_group as it is not used\.",
            "Root: nothing reads its load_avg."))
        self.prepare_refused(
            "patch_neither_applies_nor_contained", c / "drift",
            "0002-.*neither applies.*kernel/sched/fair.c at line [0-9]*.*known to work",
            "wt-drift", whole=True)
        # With the blobs of the prepared work tree a three-way merge is tried; here the drifted
        # line is one the patch itself adds: a conflict, named.
        self.prepare_refused(
            "patch_conflict_named", c / "drift",
            "0002-.*neither applies.*a three-way merge conflicts in kernel/sched/fair.c",
            "wt-drift", whole=True, THREEWAY_FROM=str(self.wt))
        # The line follows the source's version, and a version with no line is refused with the
        # lines there are; one between lines names the nearest one below it.
        lines = " ".join(self.data.line_names())
        self.edited_tree(c / "line510", "Makefile", "version", (r"^VERSION = .*$", "VERSION = 5"),
                         (r"^PATCHLEVEL = .*$", "PATCHLEVEL = 10"))
        self.prepare_refused(
            "line_without_series_refused", c / "line510",
            f"Linux 5.10.[0-9]* .* is on the 5.10 line, which has no series: lines are {lines}",
            "wt-510", ("LINE",))
        self.edited_tree(c / "line613", "Makefile", "version",
                         (r"^PATCHLEVEL = .*$", "PATCHLEVEL = 13"))
        self.prepare_refused(
            "line_between_names_nearest", c / "line613",
            "Linux 6.13.[0-9]* .* no series: .* the nearest is 6.12, LINE=6.12 forces it",
            "wt-613", ("LINE",))
        # A line without a Debian package and without SFP_SRC_<LINE> names
        # both ways to give it a source.
        for name, rec in self.data.lines.items():
            if not rec.debian_package:
                self.t("line_without_source_named", self.error_case(
                    f"no source for the {name} line: no Debian package carries {name}: give a "
                    f"tree as KSRC=.* or {rec.env_var}=", _sfp("prepare", "-o", c / "wt-nosrc"),
                    self.vars("KSRC", rec.env_var, LINE=name)))
                break
        self.t("line_unknown_refused", self.error_case(
            f"LINE=4.19: no series patches/4.19/series; lines are {lines}",
            _sfp("prepare", "-o", c / "wt-419"), self.vars(LINE="4.19")))
        if (self.top / "6.1" / "tree" / ".git").is_dir():
            self.mini_tree(c / "line61", self.top / "6.1" / "tree")
            self.t("line_follows_the_source", self.unchanged(c / "line61", self.line61))
        self.mini_tree(c / "good")

    def edited_tree(self, d: pathlib.Path, path: str, msg: str, *subs: tuple[str, str]) -> None:
        """A mini tree, its PATH with each (pattern, text) of SUBS made once, committed."""
        self.mini_tree(d)
        text = (d / path).read_text()
        for pattern, new in subs:
            text = re.sub(pattern, new, text, count=1, flags=re.M)
        (d / path).write_text(text)
        subprocess.run(["git", "-C", str(d), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-q", "-am", msg], check=True)

    def prepare_refused(self, name: str, src: pathlib.Path, pattern: str, wt: str,
                        unset: tuple[str, ...] = (), whole: bool = False, **more: str) -> None:
        """Case NAME: sfp prepare of the user's tree SRC into CHK/WT is
        refused, SRC unmoved; with WHOLE, no half-made work tree left."""
        def case(out: TextIO) -> None:
            self.expect_error(out, pattern, _sfp("prepare", "-o", self.chk / wt),
                              self.vars(*unset, KSRC=str(src), **more))
            if whole and (self.chk / wt).exists():
                raise CaseFailed("a half-made work tree was left behind")
        self.t(name, self.unchanged(src, case))

    def line61(self, out: TextIO) -> None:
        """A 6.1 source: the line follows KSRC's version, not -s."""
        c = self.chk
        # -s does not choose the line: a 6.1 source on the 6.12 line is refused...
        self.expect_error(out, "is Linux 6.1.[0-9]*, not on the 6.12 line: give it as KSRC=",
                          _sfp("prepare", "--source", c / "line61", "-o", c / "wt-61"),
                          self.vars("KSRC", "LINE"))
        # ...KSRC does, and the 6.1 series applies to it
        self.run(out, _sfp("prepare", "-o", c / "wt-61"), self.vars("LINE", KSRC=str(c / "line61")))
        out.write(S.git(c / "wt-61", "log", "--oneline", "base..patched").stdout)
        n = S.git(c / "wt-61", "rev-list", "--count", "base..patched").stdout.strip()
        want = len(S.load(PATCHES_TOP / "6.1"))
        if n != str(2 + want):
            raise CaseFailed(f"expected 2 back-outs and the {want} patches of the 6.1 series")

    def good(self, out: TextIO) -> None:
        """An unchanged copy of the source: prepared, and the series reproduces it."""
        c = self.chk
        self.run(out, _sfp("prepare", "-o", c / "wt-good"), self.vars(KSRC=str(c / "good")))
        out.write(S.git(c / "wt-good", "log", "--oneline", "base..patched").stdout)
        self.check_reproduces(out, c / "wt-good", self.patches)

    def missing_series_file(self, out: TextIO) -> None:
        """A series naming a missing file stops before making or recording anything, for a new
        work tree and for a prepared one."""
        c, good = self.chk, self.chk / "wt-good"
        env = self.vars(PATCHES=str(c / "patches-broken"), KSRC=str(c / "good"))
        pat = "names 0009-not-there.patch, which is not in"
        state = (("for-each-ref", "--format=%(refname) %(objectname)"),  # its refs and notes
                 ("notes", "--ref=sfp", "list"))
        self.expect_error(out, pat, _sfp("prepare", "-o", c / "wt-broken"), env)
        if (c / "wt-broken").exists() or (c / "wt-broken.new").exists():
            raise CaseFailed("a work tree was left behind")
        if not (good / ".git").is_dir():
            raise CaseFailed("no prepared mini work tree to reuse")
        before = [S.git(good, *a).stdout for a in state]
        self.expect_error(out, pat, _sfp("prepare", "-o", good), env)
        if [S.git(good, *a).stdout for a in state] != before:
            raise CaseFailed("the prepared work tree changed")
        print("nothing made, nothing recorded", file=out)

    def small_disk(self, out: TextIO) -> None:
        """A work tree on a file system without room is refused before writing there."""
        c = self.chk
        self.expect_error(out, f"a new work tree needs about 3 GiB free where {c}/small is",
                          _sfp("prepare", "-o", c / "small" / "wt"),
                          self.vars("SFP_NO_SPACE_CHECK", KSRC=str(c / "good")))
        left = [p.name for p in (c / "small").iterdir()]
        if left:
            raise CaseFailed(f"something was written: {' '.join(left)}")
        print("refused; nothing written", file=out)

    def main_job_cases(self, line: str, kind: str = "") -> None:
        """Stage 3: sfp run on LINE (with KIND, -K KIND -n KIND), its results and stage
        times merged into make check's, the source column saying the line and kind."""
        t0 = time.monotonic()
        src = self.data.lines[line].default_source(self.env)
        v = sfp_env.source_version(pathlib.Path(src))
        what = f"{kind} kernel" if kind else "main job"
        print(f"==> {what}, line {line}: Linux {v} from {src}", flush=True)
        cmd = _sfp("run", "-K", kind, "-n", kind) if kind else _sfp("run")
        rc = subprocess.run(cmd, env=self.on_line(line), cwd=ROOT, check=False).returncode
        logs = sfp_run.kernel_logs(self.top / line, kind or "patched")
        res = logs / "results.tsv"
        tag = f"{line}-{kind}" if kind else line
        if res.is_file() and res.stat().st_size:
            with open(self.chk / "main-job.tsv", "a", encoding="utf-8") as f:
                f.writelines(f"{tag}/{ln}\n" for ln in res.read_text().splitlines())
        else:
            self.record("run", f"{kind or 'main'}_job", "FAIL",
                        f"./sfp {' '.join(cmd[1:])} exited {rc} before any test ran",
                        source=f"{tag}/project")
        dt = int(time.monotonic() - t0)
        self.fold_stages(logs / "stage-times.tsv", f"{what}, line {line}: ")
        with open(self.chk / "stage-times.tsv", "a", encoding="utf-8") as f:
            f.write(f"{what}, line {line}\t{dt}\n")
        print(f"<== {what}, line {line}: {dt}s", flush=True)

    def tiny_initrd(self, name: str) -> pathlib.Path:
        """busybox and the init TINY_INITS[NAME], as a gzipped cpio."""
        d = self.chk / f"initrd-{name}"
        (d / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy("/bin/busybox", d / "bin" / "busybox")
        (d / "init").write_text(f"#!/bin/busybox sh\n{TINY_INITS[name]}\n")
        (d / "init").chmod(0o755)
        sfp_guest.newc(d, self.chk / f"{name}.cpio.gz")
        return self.chk / f"{name}.cpio.gz"

    def boot(self, initrd: pathlib.Path, logs: str) -> list[str]:
        """sfp boot of the main kernel with INITRD, its logs in CHK/LOGS."""
        return _sfp("boot", "--kernel", self.kimg, "-i", initrd, "-l", self.chk / logs)

    def bad_boot(self, name: str, pattern: str, initrd: pathlib.Path, logs: str,
                 **more: str) -> None:
        """Case NAME: that boot, with the variables MORE, fails as PATTERN says."""
        self.t(name, self.error_case(pattern, self.boot(initrd, logs), self.vars(**more)))

    def boot_cases(self) -> None:
        """Stage 5: the guest watchdog, then boots as LAVA jobs (lava-run, Debian's
        lava-dispatcher)."""
        with self.stage("watchdog: hang and panic"):
            if not self.kimg.is_file():
                self.record("check", "watchdog", "FAIL", "no kernel was built")
            else:
                hang, panic = self.tiny_initrd("hang"), self.tiny_initrd("panic")
                self.bad_boot("guest_hang_reported", "guest hung", hang, "logs-hang",
                              BOOT_TIMEOUT="25", SMP="1")
                self.bad_boot("guest_panic_reported", "Kernel panic", panic, "logs-panic",
                              BOOT_TIMEOUT="120", SMP="1")
        with self.stage("LAVA: the main job as a LAVA job, and bad jobs"):
            if not self.kimg.is_file():
                self.record("check", "lava", "FAIL", "no kernel was built")
                return
            if os.geteuid() != 0:
                self.skip("lava", "lava-run must run as root")
                return
            self.t("lava_main_job_matches_direct", self.lava_compare, show=r"LAVA|differences")
            hang, panic = self.tiny_initrd("hang"), self.tiny_initrd("panic")
            none = self.chk / "no-such.cpio.gz"
            self.bad_boot("lava_hang_reported", "guest hung: no power-off within 25s", hang,
                          "logs-lava-hang", BOOT_BACKEND="lava", BOOT_TIMEOUT="25", SMP="1")
            self.bad_boot("lava_panic_reported", "LAVA job failed: .*Kernel panic", panic,
                          "logs-lava-panic", BOOT_BACKEND="lava", BOOT_TIMEOUT="120", SMP="1")
            self.bad_boot("lava_missing_initrd_refused", f"initramfs '{none}' not found", none,
                          "logs-lava-noinitrd", BOOT_BACKEND="lava")
            self.t("lava_failed_case_recorded", self.lava_failed_case)
            self.t("lava_doctored_record_fails", self.lava_doctored_record)

    def lava_compare(self, out: TextIO) -> None:
        """The main kernel as a LAVA job gives the Result of its direct boot, and LAVA's
        records agree with the logs (sfp boot checks that)."""
        c = self.chk
        self.run(out, _sfp("run", "--boot-only", "-l", c / "lava-main"),
                 self.vars(BOOT_BACKEND="lava"))
        summary = c / "lava-main" / "lava" / "summary.txt"
        out.write(summary.read_text() if summary.is_file() else "")
        self.run(out, _sfp("compare", sfp_run.kernel_logs(self.build, "patched"), c / "lava-main"))

    def lava_failed_case(self, out: TextIO) -> None:
        """A guest whose test fails, or skips, is a failed (a skipped) case
        in LAVA's records under its own SUITE.CASE name, not a passed job."""
        self.run(out, self.boot(self.tiny_initrd("tap"), "logs-lava-tap"),
                 self.vars(BOOT_BACKEND="lava", BOOT_TIMEOUT="120", SMP="1"))
        tsv = self.chk / "logs-lava-tap" / "lava" / "lava-results.tsv"
        rows = tsv.read_text().splitlines() if tsv.is_file() else []
        for case, status in (("probe.sfp_lava_fail", "FAIL"), ("probe.sfp_lava_skip", "SKIP")):
            if f"lava\tguest\t{case}\t{status}\t" not in rows:
                raise CaseFailed(f"LAVA did not record {case} as {status}")
        text, counts = sfp_summary.render("LAVA's records", sfp_results.read_tsv(tsv))
        (self.chk / "lava-tap.summary").write_text(text + "\n")
        print(text.splitlines()[-1], file=out)
        if not counts["FAIL"]:
            raise CaseFailed("the summary of a failed case passed")

    def lava_doctored_record(self, out: TextIO) -> None:
        """The main LAVA job's records with one case's result changed: the
        Result made from that boot fails, naming the case."""
        d = self.chk / "lava-doctored"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.chk / "lava-main", d)
        tsv = d / "lava" / "lava-results.tsv"
        rows = tsv.read_text().splitlines() if tsv.is_file() else []
        i = next((i for i, r in enumerate(rows) if r.split("\t")[3:4] == ["PASS"]), None)
        if i is None:
            raise CaseFailed("the main LAVA job recorded no passed case")
        f = rows[i].split("\t")
        rows[i] = "\t".join(f[:3] + ["FAIL"] + f[4:])
        tsv.write_text("".join(r + "\n" for r in rows))
        want = f"LAVA recorded {f[1]} {f[2]} as fail, the logs have pass"
        r = subprocess.run(_sfp("report", "-l", d, "--tree", self.wt, "--obj", self.obj, "-o",
                                d / "r.tsv"), capture_output=True, text=True, check=False)
        out.write(r.stdout + r.stderr)
        if r.returncode != 1 or want not in (d / "r.tsv").read_text():
            raise CaseFailed(f"no failed row '{want}'")
        print(want, file=out)

    def bench_cases(self) -> None:
        """Stage 6: the benchmark's smoke round; an output directory in use refused."""
        c = self.chk
        with self.stage("bench: smoke A/B round"):
            self.staged("bench_smoke", _sfp("bench", "--smoke"),
                        self.build / "bench" / "smoke" / "stage-times.tsv",
                        r"^\[|^  smp2: |target: |smoke check|check not made")
            (c / "bench-used").mkdir(parents=True, exist_ok=True)
            (c / "bench-used" / "earlier-run").write_text("")
            self.t("bench_keeps_earlier_results", self.error_case(
                "is not empty", _sfp("bench", "-o", c / "bench-used")))

    def debug_cases(self) -> None:
        """Stage 7: the debug kernel's sched/debug race check and a 20 s stress."""
        with self.stage("debug kernel: the sched/debug race check, the tests, a short stress"):
            self.staged("race_lockdep_check", _sfp("race", "--lockdep-only"),
                        self.build / "race" / "stage-times.tsv")
            self.show(self.build / "race" / "report.md", r"^\| (unfixed|fixed) ")
            self.staged("stress_short", _sfp("stress", "-S", "20"),
                        self.build / "stress" / "stage-times.tsv", r"sfp: patched")

    def main(self) -> int:
        """The whole run; its exit status is the summary's."""
        c = self.chk
        space, what = space_needed(self.top, self.default, self.quick, self.full)
        with sfp_errors.raised_as(sfp_env.InputError, sfp_prepare.PrepareError):
            sfp_prepare.need_space(self.top, space, what, self.env)
        shutil.rmtree(c, ignore_errors=True)
        c.mkdir(parents=True)
        self.results.write_text("")
        (c / "stage-times.tsv").write_text("")
        t0 = time.monotonic()
        h0, m0, f0 = ccache_counts()
        # The lines that have a source: SFP_SRC_<LINE>, or a Debian package (whose tarball setup.sh
        # installed; a missing one fails below). A line with neither is not checked, and says so: a
        # skip, never a pass.
        checked = [name for name, rec in self.data.lines.items() if rec.default_source(self.env)]
        for name in (n for n in self.data.lines if n not in checked):
            msg = f"line {name} not checked: {sfp_prepare.source_hint(self.data, name)}"
            print(msg, flush=True)
            self.record(f"check-{name}", "line_checked", "SKIP", msg)
        for line in checked:
            self.series_cases(line)
        self.scripts_cases()
        if not self.quick:
            # The default line's main job (the later stages boot its kernel), every other line on
            # the distro kind (the distribution's scheduler options); --full: both on every line.
            for line in checked:
                for kind in ("", "distro") if self.full else \
                        ("",) if line == self.default else ("distro",):
                    self.main_job_cases(line, kind)
            for line in checked if self.full else ():
                with self.stage(f"robot checks, line {line} (kernel/sched/ objects)", line):
                    self.t("robot_builds", _sfp("robot", "--quick"), self.on_line(line),
                           show=r"^\| .* \| (FAILED|n/a)|^W=1|^    ")
            self.boot_cases()
            if self.full:
                self.bench_cases()
            self.debug_cases()
        print()
        rows = [ln.rpartition("\t") for ln in (c / "stage-times.tsv").read_text().splitlines()]
        print("stage times (wall):" + "".join(f" {n} {t}s;" for n, _, t in rows))
        h1, m1, _ = ccache_counts()
        speed = (f"{what}: {int(time.monotonic() - t0)} s wall; ccache: {m1 - m0} "
                 f"compiled, {h1 - h0} from the cache ({f0} files in it at the start)")
        print(speed, flush=True)
        (c / "speed.txt").write_text(speed + "\n")
        # main-job.tsv: the main jobs' cases (a job that ran none is a failure in results.tsv).
        tsvs = [str(p) for p in (self.results, c / "main-job.tsv") if p.is_file()]
        return sfp_summary.summarize("make check: all results", [], tsvs, str(c / "all.tsv"),
                                     False, None)
