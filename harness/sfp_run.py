# SPDX-License-Identifier: GPL-2.0
"""The one path from a kernel tree to a verdict: build it, make the guest,
boot it in QEMU, run every test inside, report. Every kernel the project
builds and boots goes through here (`sfp run`; make, make mutate, bench,
stress, race, sfp matrix and make check call it).

A Run is what the flags and the environment ask for, checked whole
before anything is touched: the kind and topology records, the numbers
(sfp_env.validate), the files it names, the tree, the name. Its stages,
each timed into LOGDIR/stage-times.tsv:

  tree   sfp_prepare (sfp prepare --help) makes or reuses $BUILD/LINE/tree; with -r the
         ref is checked out in the git worktree $BUILD/LINE/wt/NAME/tree and
         the -p patches applied there
  build  sfp_build (sfp build-kernel --help) with the fragments (--only-fragment, else
         the kind's, else the defaults; then -f)
  guest  sfp_guest (sfp build-guest --help): the initramfs
  boot   sfp boot (harness/sfp_boot.py)
  tests  sfp report (harness/sfp_report.py): the header of what was built
         from what, then every stream parsed, into LOGDIR/report.txt

Without --tree or -r the work tree $BUILD/LINE/tree is built as it is checked out
(a developer edits it and runs again: the build is incremental). A tree
given with --tree is only read. The last run's logs of a name are kept as
NAME.prev; a log directory given with -l is the caller's and is emptied.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import re
import shlex
import shutil
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterable, TextIO, TypeVar, cast

from harness import sfp_boot
from harness import sfp_build
from harness import sfp_distro
from harness import sfp_env
from harness import sfp_guest
from harness import sfp_lab
from harness import sfp_lava
from harness import sfp_prepare
from harness import sfp_report
from harness import sfp_results
from harness import sfp_series
from harness import sfp_summary
from harness import sfp_data
from harness.sfp_data import ROOT, Data
from harness import sfp_errors

# sfp run's guest options, and the letter sfp_guest.from_flags takes for each.
GUEST_FLAGS = {"--extra": "-x", "--bin": "-b", "--dynamic": "-d", "--perf": "-p"}
T = TypeVar("T")
R = TypeVar("R")
WORKTREE_GIB = 2  # free space a new worktree and its build need
_git = sfp_series.git


class RunRefused(sfp_errors.Refused):
    """A run that cannot work; the message is the one line the user sees."""


class RunFailed(sfp_errors.Failed):
    """A stage failed; the scripts said why on stderr."""


# The layout of a line's build directory B (kernel_logs, kernel_wt,
# kernel_obj): a -r build's object directory is two levels below its
# worktree's source, as B/obj/NAME is below B/tree, so that ccache's
# base_dir at B gives every build the same relative paths.
def kernel_logs(b: pathlib.Path, name: str) -> pathlib.Path:
    return b / "logs" / name


def kernel_wt(b: pathlib.Path, name: str) -> pathlib.Path:
    return b / "wt" / name / "tree"


def kernel_obj(b: pathlib.Path, name: str, ref: bool = False) -> pathlib.Path:
    return b / "wt" / name / "obj" / name if ref else b / "obj" / name


@dataclasses.dataclass(frozen=True)
class Run(sfp_env.OnLine):
    choice: sfp_env.LineChoice  # the line, its build directory and its series
    name: str
    kind: str = ""
    tree: pathlib.Path | None = None  # -t: a tree only read
    ref: str = ""  # -r: a commit of the work tree
    patches: tuple[pathlib.Path, ...] = ()  # -p, then the kind's
    fragments: tuple[pathlib.Path, ...] = ()  # -F (instead of the kind's or the defaults)
    extra_fragments: tuple[pathlib.Path, ...] = ()  # -f
    guest_args: tuple[str, ...] = ()  # the guest's -x, -b, -d, -p (sfp_guest.from_flags)
    logdir: pathlib.Path = pathlib.Path()
    logdir_given: bool = False
    build_only: bool = False
    boot_only: bool = False
    append: str = ""  # the kind's command line, then APPEND
    images: pathlib.Path | None = None  # --images: a build's saved bzImage, initramfs, .config
    reproducible: bool = False  # the same bytes from the same source (sfp_build.fixed_identity)

    @property
    def obj(self) -> pathlib.Path:
        return self.images or kernel_obj(self.build, self.name, ref=bool(self.ref))

    @property
    def worktree(self) -> pathlib.Path:
        return kernel_wt(self.build, self.name)

    def built_tree(self) -> pathlib.Path:
        """The tree a boot-only run reads (the one an earlier run built)."""
        return self.tree or (self.worktree if self.ref else self.build / "tree")


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """What a caller asks of a run: sfp run's options, typed (plan checks them)."""
    kind: str = ""
    tree: str = ""
    ref: str = ""
    patches: tuple[str, ...] = ()
    name: str = ""
    fragments: tuple[str, ...] = ()  # --only-fragment
    extra_fragments: tuple[str, ...] = ()  # -f
    guest_args: tuple[str, ...] = ()  # -x, --bin, --dynamic, --perf as sfp_guest takes them
    logdir: str = ""
    build_only: bool = False
    boot_only: bool = False
    images: str = ""
    reproducible: bool = False  # a fixed build number and time (the benchmark's A and B)
    choice: sfp_env.LineChoice | None = None  # the caller's line, else the environment's


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What a run gave: its exit status (0: every case passed; 1: a failure; 2:
    refused before any work), the error that ended it, its kernel, logs, cases, stage times."""
    status: int
    error: str = ""
    obj: pathlib.Path | None = None
    logdir: pathlib.Path | None = None
    cases: tuple[sfp_results.Case, ...] = ()
    stages: tuple[tuple[str, int], ...] = ()

    @property
    def passed(self) -> int:
        return sum(c.status == "PASS" for c in self.cases)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.cases if c.failed]


def plan(data: Data, env: dict[str, str], *, kind: str = "", tree: str = "", ref: str = "",
         patches: list[str] | None = None, name: str = "", fragments: list[str] | None = None,
         extra_fragments: list[str] | None = None, guest_args: list[str] | None = None,
         logdir: str = "", build_only: bool = False, boot_only: bool = False, images: str = "",
         reproducible: bool = False, choice: sfp_env.LineChoice | None = None) -> Run:
    """The Run the flags and ENV ask for (on CHOICE's line), or RunRefused: nothing touched."""
    with sfp_errors.raised_as(RunRefused, sfp_env.InputError):
        choice = sfp_env.validate(data, env, kind=kind or None, choice=choice)
    pats = [pathlib.Path(p).resolve() for p in patches or []]
    append = env.get("APPEND", "")
    if kind:
        k = data.kind(kind)
        pats += [ROOT / p for p in k.patches]
        append = " ".join(a for a in (k.append, append) if a)
    for bad, why in ((tree and ref, "--tree and -r exclude each other"),
                     (boot_only and build_only, "--boot-only and --build-only exclude each other"),
                     (pats and not ref, "-p needs -r (a tree given with --tree is only read)"),
                     (images and not boot_only, "--images needs --boot-only")):
        if bad:
            raise RunRefused(why)
    frags = [pathlib.Path(f) for f in fragments or []]
    xfrags = [pathlib.Path(f) for f in extra_fragments or []]
    for f in pats + frags + xfrags:
        if not f.is_file():
            raise RunRefused(f"'{f}' not found")
    if not boot_only:
        with sfp_errors.raised_as(RunRefused, sfp_guest.GuestError):
            sfp_guest.check_inputs(sfp_guest.from_flags(pathlib.Path(), pathlib.Path(), None,
                                                        guest_args or []))
    if tree and not pathlib.Path(tree).is_dir():
        raise RunRefused(f"kernel tree '{tree}' does not exist")
    if tree and not sfp_prepare.is_kernel_tree(pathlib.Path(tree)):
        raise RunRefused(f"'{tree}' is not a kernel source tree")
    t = pathlib.Path(tree).resolve() if tree else None
    name = name or (t.name if t else re.sub(r"[^A-Za-z0-9._-]", "-", ref)) or "patched"
    if not re.match(r"^[A-Za-z0-9._-]+$", name):
        raise RunRefused(f"name '{name}' may only use letters, digits, '.', '_' and '-'")
    log = pathlib.Path(os.path.abspath(logdir)) if logdir else kernel_logs(choice.build, name)
    run = Run(choice=choice, name=name, kind=kind, tree=t, ref=ref,
              patches=tuple(pats), fragments=tuple(frags), extra_fragments=tuple(xfrags),
              guest_args=tuple(guest_args or ()), logdir=log, logdir_given=bool(logdir),
              build_only=build_only, boot_only=boot_only, append=append,
              images=pathlib.Path(os.path.abspath(images)) if images else None,
              reproducible=reproducible)
    if boot_only and not ((run.obj / "arch/x86/boot/bzImage").is_file() and
                          (run.obj / "initramfs.cpio.gz").is_file()):
        if images:
            raise RunRefused(f"--images {images}: no arch/x86/boot/bzImage and "
                             "initramfs.cpio.gz there")
        raise RunRefused(f"--boot-only: nothing built for '{name}' in {run.obj} "
                         "(run once without --boot-only)")
    return run


# RunRequest's fields, in sfp run's order, and the option each is in sfp run's command line
_OPTIONS = (("kind", "-K"), ("tree", "--tree"), ("ref", "-r"), ("patches", "-p"), ("name", "-n"),
            ("fragments", "--only-fragment"), ("extra_fragments", "-f"), ("guest_args", ""),
            ("logdir", "-l"), ("build_only", "--build-only"), ("boot_only", "--boot-only"),
            ("images", "--images"))


def request_of(args: argparse.Namespace) -> RunRequest:
    """sfp run's parsed options, typed."""
    dest = {"patches": "patch", "fragments": "only_fragment", "extra_fragments": "fragment"}
    kw: dict[str, Any] = {}
    for field, _ in _OPTIONS:
        v = getattr(args, dest.get(field, field))
        kw[field] = tuple(v) if isinstance(v, list) else "" if v is None else v
    return RunRequest(**kw)


def command(req: RunRequest) -> str:
    """REQ as the sfp run command a person would type (for messages)."""
    long = {short: flag for flag, short in GUEST_FLAGS.items()}
    words = ["./sfp", "run"]
    for field, flag in _OPTIONS:
        v = getattr(req, field)
        if isinstance(v, bool):
            words += [flag] * v
        elif field == "guest_args":
            words += [long.get(a, a) for a in v]
        else:
            for x in v if isinstance(v, tuple) else [v] * bool(v):
                words += [flag, x]
    return shlex.join(words)


def plan_request(data: Data, env: dict[str, str], req: RunRequest) -> Run:
    """plan() of a RunRequest."""
    return plan(data, env, **{f.name: getattr(req, f.name) for f in dataclasses.fields(req)})


def default_fragments(tree: pathlib.Path) -> list[pathlib.Path]:
    """The config fragments a kernel of TREE gets: kernel-config/base.config,
    then where TREE has them its tests' own (kernel/sched/tests/.kunitconfig with
    kernel-config/kunit.config, and kunit-cert.config where TREE has the
    certification tier's option; tools/testing/selftests/sched/config)."""
    out = [ROOT / "kernel-config" / "base.config"]
    kconfig = tree / "lib" / "Kconfig.debug"
    ktext = kconfig.read_text(errors="replace") if kconfig.is_file() else ""
    kunitconfig = tree / "kernel" / "sched" / "tests" / ".kunitconfig"
    if re.search(r"^config SCHED_FAIR_KUNIT_TEST$", ktext, re.M) and kunitconfig.is_file():
        out += [kunitconfig, ROOT / "kernel-config" / "kunit.config"]
        if re.search(r"^config SCHED_FAIR_CERT_KUNIT_TEST$", ktext, re.M):
            out.append(ROOT / "kernel-config" / "kunit-cert.config")
    if list((tree / "tools" / "testing" / "selftests" / "sched").glob("sched_fastpath_*.c")):
        out.append(tree / "tools" / "testing" / "selftests" / "sched" / "config")
    return out


def kind_fragments(data: Data, kind: str, tree: pathlib.Path, line: str = "",
                   env: dict[str, str] | None = None,
                   out: pathlib.Path | None = None) -> list[pathlib.Path]:
    """KIND's fragments for TREE; a distro kind's (the scheduler's options as
    LINE's distribution has them, by sfp_distro) is written into OUT."""
    k = data.kind(kind)
    frags = default_fragments(tree) if k.default_fragments else []
    own = [ROOT / "kernel-config" / f for f in k.fragments]
    if not k.distro:
        return frags + own
    # The distribution's values go after base.config and before the
    # tests' own fragments, whose needs (KUnit, say) win where they differ.
    if not line or out is None:
        raise sfp_distro.DistroError(f"kind '{kind}' needs a line and a build directory")
    gen = sfp_distro.fragment(data, line, tree, env if env is not None else dict(os.environ),
                              out / "distro-sched.config")
    return frags[:1] + [gen] + own + frags[1:]


def has_sched_debug_race(tree: pathlib.Path) -> bool:
    """TREE's avg_vruntime() writes cfs_rq state and print_cfs_rq() still
    calls it after dropping the rq lock: it lacks upstream e08d007f9d81."""
    return all((tree / rel).is_file() and text in (tree / rel).read_text(errors="replace")
               for rel, text in (("kernel/sched/fair.c", "update_zero_vruntime(cfs_rq, delta)"),
                                 ("kernel/sched/debug.c", "SPLIT_NS(avg_vruntime(cfs_rq))")))


def header(run: Run, tree: pathlib.Path, patches: pathlib.Path) -> list[str]:
    """The report's first lines: what was built from what."""
    out = [f"sched-fastpath run '{run.name}', {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
           f"  tree:    {tree}"]
    src = sfp_prepare.wt_meta(tree, "source")
    if src:
        with sfp_errors.raised_as(RunRefused, sfp_series.SeriesError):
            series = sfp_series.load(patches)
        out.append(f"  source:  {src}")
        out += [f"  patch:   {name}\t{state}" for name, state in sfp_series.states(tree, series)]
    if run.ref:
        out.append(f"  ref:     {run.ref}" + "".join(f" + {p.name}" for p in run.patches))
    release = run.obj / "include" / "config" / "kernel.release"
    rel = release.read_text().strip() if release.is_file() else "unknown"
    out.append(f"  version: {sfp_env.source_version(tree)} ({rel})")
    head = _git(tree, "log", "-1", "--format=%h %s", "HEAD")
    if head.returncode == 0 and head.stdout.strip():
        edits = "" if _git(tree, "diff", "--quiet", "HEAD", "--").returncode == 0 \
            else " + uncommitted edits"
        out.append(f"  HEAD:    {head.stdout.strip()}{edits}")
    frag = run.obj / "fragments.txt"
    out.append("  config:  " + (frag.read_text() if frag.is_file() else ""))
    if has_sched_debug_race(tree):
        out += ["  WARNING: this tree lacks upstream e08d007f9d81 (patch 1 of the series): every",
                "           read of sched/debug by the tests can corrupt the scheduler "
                "(docs/background.md)"]
    return out


class Stages:
    """Wall-clock stage times: '==> NAME' and '<== NAME: Ns' on stderr, and
    a row of TSV each in TSV (emptied first unless FRESH is false; or none)."""

    def __init__(self, tsv: pathlib.Path | None, fresh: bool = True):
        self.tsv = tsv
        self.times: list[tuple[str, int]] = []  # this object's stages, in order
        if tsv and fresh:
            tsv.write_text("")

    @contextlib.contextmanager
    def stage(self, name: str):
        print(f"==> {name}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            yield
        finally:
            dt = int(time.monotonic() - t0)
            print(f"<== {name}: {dt}s", file=sys.stderr, flush=True)
            self.times.append((name, dt))
            if self.tsv:
                with open(self.tsv, "a", encoding="utf-8") as f:
                    f.write(f"{name}\t{dt}\n")

    def line(self) -> str:
        return "stage times (wall):" + "".join(f" {n} {s}s" for n, s in self.times)


class _Tee:
    def __init__(self, *streams: TextIO):
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def prepare_logs(run: Run) -> None:
    """The last run's logs of this name become NAME.prev (one generation);
    a log directory given with -l is the caller's, and emptied."""
    log = run.logdir
    if not run.logdir_given and log.is_dir():
        shutil.rmtree(log.with_name(log.name + ".prev"), ignore_errors=True)
        log.rename(log.with_name(log.name + ".prev"))
    elif log.is_dir() and not log.is_symlink():
        shutil.rmtree(log)
    elif log.exists() or log.is_symlink():
        log.unlink()
    run.obj.mkdir(parents=True, exist_ok=True)
    log.mkdir(parents=True)


def checkout_ref(run: Run, tree: pathlib.Path, env: dict[str, str],
                 say: Callable[[str], None]) -> pathlib.Path:
    """RUN's ref of TREE checked out in RUN's worktree, its patches applied."""
    rev = _git(tree, "rev-parse", "-q", "--verify", f"{run.ref}^{{commit}}")
    if rev.returncode:
        raise RunRefused(f"the work tree {tree} has no commit '{run.ref}'")
    rev_id = rev.stdout.strip()
    wt = run.worktree
    if not (wt / ".git").exists():
        have = sfp_prepare.free_gib(run.build)
        if env.get("SFP_NO_SPACE_CHECK", "0") == "0" and have < WORKTREE_GIB:
            raise RunRefused(f"a worktree and its build needs about {WORKTREE_GIB} GiB free "
                             f"where {run.build} is; there are {have} GiB: free some, or point "
                             "BUILD= elsewhere; SFP_NO_SPACE_CHECK=1 runs anyway")
        _git(tree, "worktree", "prune")
        say(f"checking out {run.ref} at {wt} (a git worktree of {tree})")
        if _git(tree, "worktree", "add", "-q", "--detach", str(wt), rev_id).returncode:
            raise RunFailed(f"git worktree add {wt} failed")
    # Only the files that differ are rewritten: the build stays incremental.
    for args in (("checkout", "-q", "-f", "--detach", rev_id), ("clean", "-q", "-fdx")):
        r = _git(wt, *args)
        if r.returncode:
            raise RunFailed(f"git {args[0]} in {wt}: {r.stderr.strip()}")
    for p in run.patches:
        r = _git(wt, "apply", str(p))
        if r.returncode:
            sys.stderr.write(r.stderr)
            raise RunRefused(f"{p.name} does not apply to {run.ref}")
        say(f"applied {p.name} on {run.ref}")
    return wt


def execute(run: Run, data: Data, env: dict[str, str], say: Callable[[str], None]) -> RunResult:
    """Run's stages; what they gave (status 0: every case passed). A stage
    that fails raises an SfpError, its 'stages' the times of those that ran."""
    prepare_logs(run)
    stages = Stages(run.logdir / "stage-times.tsv")
    try:
        return _stages(run, data, env, say, stages)
    except sfp_errors.SfpError as e:
        e.stages = tuple(stages.times)  # type: ignore[attr-defined]
        raise


def _stages(run: Run, data: Data, env: dict[str, str], say: Callable[[str], None],
            stages: Stages) -> RunResult:
    tree = run.built_tree() if run.boot_only else run.tree
    if tree is None:
        # A bad setting found now is a failed run, not one refused before any work.
        with stages.stage("tree"), sfp_errors.raised_as(RunFailed, sfp_env.InputError):
            sfp_prepare.prepare(data, env, "", "", say, run.choice)
            tree = run.build / "tree"
            if run.ref:
                tree = checkout_ref(run, tree, env, say)
    if not run.boot_only:
        with stages.stage("build"):
            frags = (list(run.fragments) or (
                kind_fragments(data, run.kind, tree, run.line, env, run.obj) if run.kind
                else default_fragments(tree))) + list(run.extra_fragments)
            sfp_build.build(tree, run.obj, frags, run.line,
                            data.lines[run.line].config_absent, run.build, say, env,
                            reproducible=run.reproducible)
            (run.obj / "fragments.txt").write_text("".join(f"{f.name} " for f in frags))
            if run.kind and data.kind(run.kind).distro:
                (run.logdir / "distro-options.md").write_text(sfp_distro.table(
                    data, run.line, tree, env, {run.kind: run.obj / ".config"}))
                say(f"the scheduler's options, the distribution's and this kernel's: "
                    f"{run.logdir}/distro-options.md")
        with stages.stage("guest"):
            sfp_guest.build(sfp_guest.from_flags(run.obj, run.obj / "initramfs.cpio.gz",
                                                 tree, run.guest_args), say)
    if run.build_only:
        say(f"built {run.obj}/arch/x86/boot/bzImage and {run.obj}/initramfs.cpio.gz")
        return RunResult(0, obj=run.obj, logdir=run.logdir, stages=tuple(stages.times))

    with stages.stage("boot"):
        req = boot_request(run, env)
        # After the build, a refused boot is a failed run, not one refused
        # before any work. BootNoResult (no report, so no results.tsv) ends
        # the run: the boot is judged 'no result'.
        with sfp_errors.raised_as(RunFailed, sfp_boot.BootRefused):
            problem = sfp_boot.boot(req, data, say)
        if problem:
            sys.stderr.write(sfp_boot.last_lines(req.logdir / "console.log"))
            print(f"sfp: error: {problem}", file=sys.stderr, flush=True)

    report = run.logdir / "report.txt"
    with stages.stage("tests"), open(report, "w", encoding="utf-8") as rep, \
            contextlib.redirect_stdout(cast(TextIO, _Tee(sys.stdout, rep))):
        print("\n".join(header(run, tree, run.choice.patches)))
        rep_error = ""
        try:
            rep_rc = sfp_report.report(run.logdir, tree, run.obj)
        except sfp_report.ReportError as e:
            print(f"sfp: error: {e}", file=sys.stderr, flush=True)
            rep_rc, rep_error = 1, str(e)
        sys.stdout.flush()
    with open(report, "a", encoding="utf-8") as rep:
        for out in (sys.stdout, rep):
            print("\n" + stages.line(), file=out)
    say(f"report: {report}")
    cases = sfp_results.read_tsv(run.logdir / "results.tsv")
    done = RunResult(rep_rc, rep_error, obj=run.obj, logdir=run.logdir, cases=tuple(cases),
                     stages=tuple(stages.times))
    if problem:
        # The guest did not finish cleanly: count that, whatever ran before.
        failed = sfp_results.Case("boot", "boot", "(guest run)", "FAIL",
                                  f"see {run.logdir}/console.log")
        with open(run.logdir / "results.tsv", "a", encoding="utf-8") as f:
            f.write(sfp_results.tsv_row(failed))
        text, _ = sfp_summary.render("Results, with the failed guest run", [*cases, failed])
        print(text.splitlines()[-1])
        return dataclasses.replace(done, status=1, error=problem, cases=(*cases, failed))
    return done


def boot_request(run: Run, env: dict[str, str]) -> sfp_boot.BootRequest:
    """The boot of RUN's kernel, with the settings of ENV (sfp boot's variables)."""
    s = sfp_env.boot_settings(env)
    return sfp_boot.BootRequest(
        kernel=run.obj / "arch/x86/boot/bzImage", initrd=run.obj / "initramfs.cpio.gz",
        logdir=run.logdir, smp=s.smp, topology=s.topology, mem=s.mem, timeout=s.timeout,
        accel=s.accel, append=run.append, qemu_opts=s.qemu_opts, backend=s.backend,
        lava=sfp_lab.Target.from_env(env), metadata=boot_metadata(run),
        kunit_suites=tuple(sfp_lava.kunit_suites(run.obj / "vmlinux"))
        if s.backend.startswith("lava") else ())


def boot_metadata(run: Run) -> tuple[tuple[str, str], ...]:
    """What RUN boots (line, variant, kind, release, source, commit, patches) for LAVA."""
    tree = run.built_tree()
    release = run.obj / "include" / "config" / "kernel.release"
    head = _git(tree, "rev-parse", "-q", "--verify", "HEAD")
    out = [("sfp.line", run.line), ("sfp.variant", run.name), ("sfp.kind", run.kind or "default"),
           ("sfp.kernel", release.read_text().strip() if release.is_file() else "unknown"),
           ("sfp.source", sfp_prepare.wt_meta(tree, "source") or str(tree)),
           ("sfp.commit", head.stdout.strip() if head.returncode == 0 else "none")]
    if run.patches:
        out.append(("sfp.patches", " ".join(p.name for p in run.patches)))
    return tuple(out)


# --- a run for a caller: in a process of its own, its output in a file --------

# The runs a caller waits for (run_logged); stop_runs() ends them, and no
# run starts after it.
_LIVE: set[multiprocessing.process.BaseProcess] = set()
_LIVE_LOCK = threading.Lock()
_STOPPED = threading.Event()


def _interrupted(signum: int, frame: object) -> None:
    """A run's first Ctrl-C or SIGTERM: the run stops, cancelling its LAVA
    job on the way out; a second signal (the caller's SIGTERM after the
    terminal's Ctrl-C) must not cut that short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt()


def _run_child(req: RunRequest, env: dict[str, str], out: str,
               conn: multiprocessing.connection.Connection) -> None:
    """run_logged's process: REQ run with ENV, its output into OUT, its RunResult on CONN."""
    signal.signal(signal.SIGTERM, _interrupted)  # as sfp does: a LAVA job is cancelled
    signal.signal(signal.SIGINT, _interrupted)
    os.environ.clear()
    os.environ.update(env)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)

    def say(msg: str) -> None:
        print(f"sfp: {msg}", file=sys.stderr, flush=True)

    try:
        data = sfp_data.load()
        res = execute(plan_request(data, env, req), data, env, say)
    except sfp_errors.SfpError as e:
        print(f"sfp: error: {e}", file=sys.stderr, flush=True)
        res = RunResult(e.status, str(e), stages=getattr(e, "stages", ()))
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM from stop_runs()
        print("sfp: interrupted", file=sys.stderr, flush=True)
        res = RunResult(130, "interrupted")
    sys.stdout.flush()
    with contextlib.suppress(OSError):  # the caller has gone
        conn.send(res)
    conn.close()


def run_logged(req: RunRequest, env: dict[str, str], out: pathlib.Path) -> RunResult:
    """REQ run as 'sfp run' would run it with ENV, its output into OUT (the
    file is made anew): in a process of its own, so that runs can go on
    at once from threads, each with its own output and environment."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_run_child, args=(req, env, str(out), send),
                       name=f"sfp run {req.name or req.ref or 'patched'}")
    with _LIVE_LOCK:
        if _STOPPED.is_set():
            send.close()
            recv.close()
            return RunResult(1, "not started: sfp is stopping")
        proc.start()
        _LIVE.add(proc)
    send.close()
    res: RunResult | None = None
    try:
        while not recv.poll(1):  # not one blocking read: see _result()
            pass
        with contextlib.suppress(EOFError):  # the run ended without sending one
            res = recv.recv()
        proc.join()
    except BaseException:
        # Ctrl-C or SIGTERM while waiting: the run is ended (its LAVA job
        # cancelled) before this caller goes.
        if proc.is_alive():
            proc.terminate()
        proc.join(60)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
        recv.close()
    return res or RunResult(1, f"the run ended with exit status {proc.exitcode} and no result "
                               f"(see {out})")


def map_runs(fn: Callable[[T], R], items: list[T], workers: int) -> list[R]:
    """FN of each of ITEMS, WORKERS at a time, in threads; the results in order."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers))
    return wait_runs(pool, (pool.submit(fn, x) for x in items))


def wait_runs(pool: concurrent.futures.ThreadPoolExecutor,
              futures: Iterable[concurrent.futures.Future[R]]) -> list[R]:
    """The results of FUTURES (POOL's threads that wait on runs), in order. On an
    error, Ctrl-C or SIGTERM, no queued one starts and the running runs end."""
    try:
        return [_result(f) for f in list(futures)]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        stop_runs()
        raise
    finally:
        pool.shutdown(cancel_futures=True)


def _result(f: concurrent.futures.Future[R]) -> R:
    """F's result, waited for a second at a time: a signal that comes just
    before a blocking wait starts would otherwise be seen only when the
    wait ends, a whole run later."""
    while not f.done():
        concurrent.futures.wait([f], timeout=1)
    return f.result()


def stop_runs() -> None:
    """SIGTERM to every run a caller waits for (each cancels its LAVA job),
    and wait for them; no run starts after this."""
    with _LIVE_LOCK:
        _STOPPED.set()
        live = list(_LIVE)
    for proc in live:
        if proc.is_alive():
            proc.terminate()
    for proc in live:
        proc.join(60)
