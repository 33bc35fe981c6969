# SPDX-License-Identifier: GPL-2.0
"""Run the series' KUnit suites with the kernel's own runner, kunit.py, in
the prepared work tree ($BUILD/LINE/tree, as checked out: normally
'patched'), as a kernel developer runs them:

  tools/testing/kunit/kunit.py run --kunitconfig=kernel/sched/tests \\
      --arch=x86_64 --kconfig_add CONFIG_SMP=y --qemu_args "-smp VCPUS"

kunit.py configures and builds its own kernel (in $BUILD/LINE/kunit/ARCH,
with ccache) and boots it in QEMU under TCG. kernel/sched/tests/.kunitconfig
is the upstream tier (fair_kunit.c, fake objects only): on 6.19 and 7.1,
whose scheduler builds its SMP code on UP kernels too, it runs whole with
--arch um (UML, kunit.py's default architecture, which has no SMP); on
6.12 and 6.1 UML reports it skipped, with the reason. --arch arm64 cross
builds with aarch64-linux-gnu-gcc and boots kunit.py's arm64 QEMU machine
(virt). The certification tier (kunit/cert/) is not in .kunitconfig: the
harness's own kernels run it. The output goes to the terminal and to
$BUILD/LINE/kunit/ARCH.log.

With --stock the suites run where a kernel developer runs them after git
am: the line's source as given (branch 'base' of the work tree, with the
features it already has) plus only the upstream tier's patch, in a
worktree of its own ($BUILD/LINE/stock, made again from 'base' each time;
kunit.py builds in $BUILD/LINE/kunit/stock-ARCH). With --runs N kunit.py
runs N times (--json each time) and the per-case results of the runs are
compared: a case whose result changes between runs is reported, and the
exit status is 1. A --stock run leaves its summary in
$BUILD/LINE/kunit/stock-ARCH.record.json (the tree, the runs' results),
which 'sfp submission' quotes as the results on the posted tree.

With --mutants NAME... (or 'all') each mutant of tests/mutants/LINE/ is
applied in turn to that stock worktree and kunit.py run once: which
mistakes in the two fast paths the upstream tier alone catches, under
kunit.py. The table is $BUILD/LINE/kunit/mutants-ARCH.md.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Callable

from harness import sfp_env, sfp_errors, sfp_mutate, sfp_series
from harness.sfp_data import Data

# The Debian package of a program an architecture's record names, if not the same.
PACKAGES = {"qemu-system-x86_64": "qemu-system-x86", "qemu-system-aarch64": "qemu-system-arm",
            "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu"}


class KunitError(sfp_errors.Failed):
    """kunit.py cannot be run; the message is one line."""


def command(data: Data, arch: str, vcpus: int, build_dir: pathlib.Path, jobs: str) -> list[str]:
    """kunit.py's arguments for ARCH (a record of sfp.toml [archs]: its
    QEMU and cross compiler), building in BUILD_DIR, checking the tools it
    needs."""
    if arch not in data.archs:
        raise KunitError(f"--arch wants one of {', '.join(data.archs)}, not '{arch}'")
    a = data.archs[arch]
    if vcpus < 1:
        raise KunitError(f"-s wants a number of vCPUs > 0, not '{vcpus}'")
    sfp_env.need_tools(KunitError, *((cmd, PACKAGES.get(cmd, cmd)) for cmd in (
        "python3", "ccache", a.qemu, f"{a.cross}gcc" if a.cross else "") if cmd))
    # A CC given on the make command line wins over CROSS_COMPILE's, so
    # it names the cross gcc.
    args = ["run", "--kunitconfig=kernel/sched/tests", f"--build_dir={build_dir}",
            f"--jobs={jobs}", "--timeout=1800", "--make_options", f"CC=ccache {a.cross}gcc"]
    if a.qemu:  # kunit.py's --arch um (its default) runs UML, without QEMU
        args += [f"--arch={arch}"] + ([f"--cross_compile={a.cross}"] if a.cross else []) + \
            ["--kconfig_add", "CONFIG_SMP=y", "--qemu_args", f"-smp {vcpus}"]
    return args


def without_kvm(cmd: list[str], env: dict[str, str], say: Callable[[str], None]) -> list[str]:
    """CMD, run where QEMU cannot open /dev/kvm, unless ACCEL=kvm.

    kunit.py of 6.19 and later asks QEMU for '-accel kvm -accel hvf
    -accel tcg', first that works; a /dev/kvm that opens but cannot run
    a guest (a nested hypervisor) hangs the boot. As root, the command
    runs in a mount namespace of its own with /dev/null over /dev/kvm,
    so that QEMU falls through to TCG, as the harness's own boots use
    (ACCEL, default tcg)."""
    if sfp_env.accel(env) == "kvm" or not pathlib.Path("/dev/kvm").exists():
        return cmd
    if os.geteuid() != 0 or not shutil.which("unshare"):
        say("warning: /dev/kvm exists and cannot be hidden from kunit.py's QEMU (needs root "
            "and util-linux's unshare): a KVM that cannot run guests hangs its boot")
        return cmd
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount --bind /dev/null /dev/kvm && exec "$@"', "sh", *cmd]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One kunit.py run: its exit status, seconds, and each case's result
    (suite.case -> PASS, FAIL, SKIP or ERROR) from its --json file."""
    rc: int
    seconds: int
    cases: dict[str, str]

    def counts(self) -> str:
        n = {s: sum(v == s for v in self.cases.values()) for s in ("PASS", "FAIL", "SKIP")}
        other = len(self.cases) - sum(n.values())
        return (f"{n['PASS']} passed, {n['FAIL'] + other} failed, {n['SKIP']} skipped "
                f"({len(self.cases)} cases)")


def cases(doc: dict, prefix: str = "") -> dict[str, str]:
    """suite.case -> status from kunit.py's --json document (KernelCI's
    test groups: sub_groups nest, test_cases are the leaves)."""
    out: dict[str, str] = {}
    for g in doc.get("sub_groups", []):
        out.update(cases(g, f"{prefix}{g.get('name', '?')}."))
    for c in doc.get("test_cases", []):
        out[f"{prefix}{c.get('name', '?')}"] = str(c.get("status", "?"))
    return out


def differences(runs: list[Outcome]) -> list[str]:
    """The cases whose result is not the same in every run, each with its
    results in run order."""
    names = sorted({n for r in runs for n in r.cases})
    return [f"{n}: {' '.join(r.cases.get(n, 'absent') for r in runs)}" for n in names
            if len({r.cases.get(n, "absent") for r in runs}) > 1]


def _once(cmd: list[str], wt: pathlib.Path, env: dict[str, str], log_path: pathlib.Path,
          json_path: pathlib.Path) -> Outcome:
    """One kunit.py run in WT, its output to stdout and LOG_PATH."""
    json_path.unlink(missing_ok=True)
    t0 = time.monotonic()
    with open(log_path, "w", encoding="utf-8", errors="replace") as log, \
            subprocess.Popen(cmd + [f"--json={json_path}"], cwd=wt, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout
        for ln in proc.stdout:
            sys.stdout.write(ln)
            sys.stdout.flush()
            log.write(ln)
    try:
        got = cases(json.loads(json_path.read_text()))
    except (OSError, ValueError):  # no --json file, or not JSON
        got = {}
    return Outcome(proc.returncode, int(time.monotonic() - t0), got)


def _kunit_py(data: Data, build: pathlib.Path, arch: str, vcpus: int, env: dict[str, str],
              say: Callable[[str], None], build_dir: pathlib.Path) -> tuple[list[str],
                                                                        dict[str, str]]:
    """The kunit.py command for ARCH building in BUILD_DIR (QEMU kept off
    /dev/kvm), and its environment (ccache paths relative to BUILD)."""
    args = command(data, arch, vcpus, build_dir, env.get("JOBS") or str((os.cpu_count() or 1) + 1))
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    env = dict(env, CCACHE_BASEDIR=env.get("CCACHE_BASEDIR") or str(build.resolve()))
    return without_kvm(["python3", "tools/testing/kunit/kunit.py", *args], env, say), env


def run(data: Data, build: pathlib.Path, arch: str, vcpus: int, env: dict[str, str],
        say: Callable[[str], None], stock: bool = False, runs: int = 1,
        patches: pathlib.Path | None = None) -> int:
    """0 if every run's kunit.py exited 0 and the runs agree; kunit.py's
    status (or 1) otherwise. Output on stdout and in the logs."""
    if runs < 1:
        raise KunitError(f"--runs wants a number of runs > 0, not '{runs}'")
    wt, out, name = build / "tree", build / "kunit", arch
    if not (wt / ".git").is_dir():
        raise KunitError(f"no work tree at {wt}: run 'make prepare' first")
    if stock:
        if patches is None:
            raise KunitError("--stock needs the line's patches")
        upstream, _ = sfp_series.load_tiers(patches)
        say(f"{build / 'stock'}: 'base' (the source as given) + {upstream[0].name}")
        say(f"{build / 'stock'} at {sfp_series.stock_worktree(wt, build / 'stock', upstream)[:12]}")
        wt, name = build / "stock", f"stock-{arch}"
    if not (wt / "kernel" / "sched" / "tests" / ".kunitconfig").is_file():
        raise KunitError(f"{wt} has no kernel/sched/tests/.kunitconfig: check out a branch "
                         "with the series' tests (patched)")
    cmd, env = _kunit_py(data, build, arch, vcpus, env, say, out / name)
    say(f"in {wt}: {' '.join(cmd[cmd.index('tools/testing/kunit/kunit.py'):])}")
    done: list[Outcome] = []
    for i in range(1, runs + 1):
        suffix = f".{i}" if runs > 1 else ""
        log = out / f"{name}{suffix}.log"
        done.append(_once(cmd, wt, env, log, out / f"{name}{suffix}.json"))
        say(f"run {i}/{runs}: kunit.py exited {done[-1].rc} after {done[-1].seconds}s: "
            f"{done[-1].counts()} (log: {log})")
    diff = differences(done)
    if runs > 1:
        rest = sorted(o.seconds for o in done[1:])
        say(f"{runs} runs on {arch}: " + ("the same result for every case" if not diff else
                                          f"{len(diff)} cases differ between runs") +
            f"; the first {done[0].seconds} s (with the build), the others {rest[0]}-{rest[-1]} s")
        for d in diff:
            say(f"  {d}")
    if stock:
        record = Record(tree=sfp_series.git(wt, "rev-parse", "HEAD^{tree}").stdout.strip(),
                        version=sfp_series.kernel_version(wt), arch=arch,
                        vcpus=vcpus if data.archs[arch].qemu else 1, runs=runs,
                        result=done[0].counts(), identical=not diff,
                        all_exit_0=all(o.rc == 0 for o in done),
                        seconds=[min(o.seconds for o in done), max(o.seconds for o in done)])
        (out / f"{name}.record.json").write_text(json.dumps(dataclasses.asdict(record),
                                                            indent=1) + "\n")
    return next((o.rc for o in done if o.rc), 0) or (1 if diff else 0)


@dataclasses.dataclass(frozen=True)
class MutantRow:
    """One mutant under kunit.py on the stock tree with the upstream tier."""
    name: str
    what: str
    built: bool  # kunit.py built and ran the kernel
    failed: list[str]  # the cases that did not pass

    @property
    def caught(self) -> bool:
        return self.built and bool(self.failed)


def mutants(data: Data, build: pathlib.Path, arch: str, vcpus: int, env: dict[str, str],
            say: Callable[[str], None], patches: pathlib.Path, names: list[str], line: str) -> int:
    """Each mutant of tests/mutants/LINE/ (NAMES, or 'all') applied in turn
    to the stock worktree and kunit.py run once: which make an upstream-tier
    case fail. The table to stdout and $BUILD/LINE/kunit/mutants-ARCH.md, a
    record to mutants-ARCH.record.json; 0, as every mutant is judged (it
    built and ran, or it did not build)."""
    avail = [f.stem for f in data.mutants(line)]
    names = avail if names == ["all"] else names
    for n in names:
        if n not in avail:
            raise KunitError(f"no mutant '{n}' in tests/mutants/{line}/ ({len(avail)} there)")
    wt, st, out = build / "tree", build / "stock", build / "kunit"
    upstream, _ = sfp_series.load_tiers(patches)
    cmd, env = _kunit_py(data, build, arch, vcpus, env, say, out / f"stock-{arch}")
    rows: list[MutantRow] = []
    for i, n in enumerate(names, 1):
        what = sfp_mutate.variant(data, line, n).what
        sfp_series.stock_worktree(wt, st, upstream)
        ap = sfp_series.git(st, "apply", str(data.root / "tests" / "mutants" / line / f"{n}.patch"))
        if ap.returncode:
            say(f"[{i}/{len(names)}] {n}: does not apply to the stock tree: "
                f"{(ap.stderr.strip().splitlines() or ['?'])[0]}")
            rows.append(MutantRow(n, what, False, ["(does not apply)"]))
            continue
        o = _once(cmd, st, env, out / f"mutant-{n}-{arch}.log", out / f"mutant-{n}-{arch}.json")
        rows.append(MutantRow(n, what, bool(o.cases),
                              sorted(c for c, r in o.cases.items() if r != "PASS")))
        say(f"[{i}/{len(names)}] {n}: " + ("did not build or run" if not o.cases else
                                           f"failed: {', '.join(rows[-1].failed)}"
                                           if rows[-1].failed else "every case passed"))
    sfp_series.stock_worktree(wt, st, upstream)  # leave it as --stock makes it
    caught = sum(r.caught for r in rows)
    nobuild = sum(not r.built for r in rows)
    table = ["| mutant | what | cases that failed |", "|---|---|---|"] + [
        f"| {r.name} | {r.what} | " + (", ".join(r.failed) if r.built and r.failed else
                                       "none" if r.built else "did not build") + " |"
        for r in rows]
    version = sfp_series.kernel_version(st)
    summary = (f"{len(rows)} mutants on {version} with the upstream tier ({arch}): {caught} make a "
               f"case fail, {nobuild} do not build, {len(rows) - caught - nobuild} pass every case")
    (out / f"mutants-{arch}.md").write_text("\n".join([summary, ""] + table) + "\n")
    (out / f"mutants-{arch}.record.json").write_text(json.dumps({
        "version": version, "arch": arch, "patch": patch_digest(upstream[0].path),
        "total": len(rows), "caught": caught, "no_build": nobuild,
        "rows": [dataclasses.asdict(r) for r in rows]}, indent=1) + "\n")
    print("\n".join(table))
    say(summary)
    return 0


@dataclasses.dataclass(frozen=True)
class Record:
    """What a --stock run leaves behind for the submission to quote."""
    tree: str  # git tree id of the stock worktree's HEAD
    version: str  # the kernel version of its Makefile
    arch: str
    vcpus: int
    runs: int
    result: str  # the first run's counts
    identical: bool  # every case had the same result in every run
    all_exit_0: bool
    seconds: list[int]  # the fastest and the slowest run


def patch_digest(path: pathlib.Path) -> str:
    """The upstream tier's patch as a record names it (its mutants' table
    and sfp submission look the record up by it)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def records(build: pathlib.Path) -> list[Record]:
    """The --stock records of BUILD's kunit directory, by architecture."""
    out = []
    keys = {f.name for f in dataclasses.fields(Record)}
    for f in sorted((build / "kunit").glob("stock-*.record.json")):
        try:
            r = json.loads(f.read_text())
            # Fields a record of another version of this tool has, or lacks.
            out.append(Record(**{k: v for k, v in r.items() if k in keys}))
        except (ValueError, TypeError, AttributeError):
            continue
    return out
