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
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Callable

import sfp_env

from sfp_data import Data

# The Debian package of each program an architecture's record names.
PACKAGES = {"python3": "python3", "ccache": "ccache", "qemu-system-x86_64": "qemu-system-x86",
            "qemu-system-aarch64": "qemu-system-arm",
            "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu"}


class KunitError(Exception):
    """kunit.py cannot be run; the message is one line."""


def _need(cmd: str) -> None:
    msg = sfp_env.missing_tool(cmd, PACKAGES.get(cmd, cmd))
    if msg:
        raise KunitError(msg)


def command(data: Data, arch: str, vcpus: int, out: pathlib.Path, jobs: str) -> list[str]:
    """kunit.py's arguments for ARCH (a record of sfp.toml [archs]: its
    QEMU and cross compiler), checking the tools it needs."""
    if arch not in data.archs:
        raise KunitError(f"--arch wants one of {', '.join(data.archs)}, not '{arch}'")
    a = data.archs[arch]
    if vcpus < 1:
        raise KunitError(f"-s wants a number of vCPUs > 0, not '{vcpus}'")
    for cmd in ("python3", "ccache", a.qemu, f"{a.cross}gcc" if a.cross else ""):
        if cmd:
            _need(cmd)
    # A CC given on the make command line wins over CROSS_COMPILE's, so
    # it names the cross gcc.
    args = ["run", "--kunitconfig=kernel/sched/tests", f"--build_dir={out / arch}",
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
    if env.get("ACCEL", "tcg") == "kvm" or not pathlib.Path("/dev/kvm").exists():
        return cmd
    if os.geteuid() != 0 or not shutil.which("unshare"):
        say("warning: /dev/kvm exists and cannot be hidden from kunit.py's QEMU (needs root "
            "and util-linux's unshare): a KVM that cannot run guests hangs its boot")
        return cmd
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount --bind /dev/null /dev/kvm && exec "$@"', "sh", *cmd]


def run(data: Data, build: pathlib.Path, arch: str, vcpus: int, env: dict[str, str],
        say: Callable[[str], None]) -> int:
    """kunit.py's exit status; its output on stdout and in the log."""
    wt = build / "tree"
    if not (wt / ".git").is_dir():
        raise KunitError(f"no work tree at {wt}: run 'make prepare' first")
    if not (wt / "kernel" / "sched" / "tests" / ".kunitconfig").is_file():
        raise KunitError(f"{wt} has no kernel/sched/tests/.kunitconfig: check out a branch "
                         "with the series' tests (patched)")
    out = build / "kunit"
    args = command(data, arch, vcpus, out, env.get("JOBS") or str((os.cpu_count() or 1) + 1))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(env, CCACHE_BASEDIR=env.get("CCACHE_BASEDIR") or str(build.resolve()))
    say(f"in {wt}: tools/testing/kunit/kunit.py {' '.join(args)}")
    cmd = without_kvm(["python3", "tools/testing/kunit/kunit.py", *args], env, say)
    t0 = time.monotonic()
    with open(out / f"{arch}.log", "w", encoding="utf-8", errors="replace") as log:
        with subprocess.Popen(cmd, cwd=wt,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace") as proc:
            assert proc.stdout
            for ln in proc.stdout:
                sys.stdout.write(ln)
                sys.stdout.flush()
                log.write(ln)
        rc = proc.returncode
    say(f"kunit.py exited {rc} after {int(time.monotonic() - t0)}s (log: {out}/{arch}.log)")
    return rc
