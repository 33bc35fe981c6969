# SPDX-License-Identifier: GPL-2.0
"""sfp run."""
from __future__ import annotations

import argparse

from harness import sfp_run
from harness.cli.common import add, data, say


class _GuestArg(argparse.Action):
    """-x, --bin, --dynamic and --perf go to the guest (sfp_guest.from_flags) in order."""

    def __call__(self, parser, namespace, values, option_string=None):
        flag = [sfp_run.GUEST_FLAGS.get(option_string, option_string)]
        value = [] if values is None or values == [] else [values]
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), *flag, *value])


def run_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """sfp run's options, on P (sfp run; sfp repeat's RUN-OPTIONS)."""
    p.add_argument("-K", "--kind", help="a kind of kernel, a record of sfp.toml [kinds]: its "
                   "config fragments (instead of the defaults), its patches (after -p's) and "
                   "its command line (before APPEND's)")
    p.add_argument("--tree", help="build and test that kernel tree exactly as it is "
                   "(a distro tree that carries the series, a bisect step); only read")
    p.add_argument("-r", "--ref", help="a commit of the work tree (baseline, series-base, base, "
                   "patched), checked out in the git worktree $BUILD/LINE/wt/NAME/tree, a scratch "
                   "checkout every run resets to REF (edit $BUILD/LINE/tree instead)")
    p.add_argument("-p", "--patch", action="append", default=[],
                   help="with -r: apply PATCH on top (a mutant, a debug-only hook)")
    p.add_argument("-n", "--name", help="names the build ($BUILD/LINE/obj/NAME), logs and "
                   "worktree; default 'patched', TREE's directory name, or REF")
    p.add_argument("-f", "--fragment", action="append", default=[],
                   help="one more config fragment after the defaults (kernel-config/base.config, "
                        "then the tree's kernel/sched/tests/.kunitconfig and "
                        "tools/testing/selftests/sched/config)")
    p.add_argument("--only-fragment", action="append", default=[], metavar="FRAGMENT",
                   help="use FRAGMENT instead of the defaults (repeatable; -f adds to these)")
    p.add_argument("-x", "--extra", dest="guest_args", action=_GuestArg, metavar="PROGRAM",
                   help="one more program for the guest to run after the tests")
    p.add_argument("--bin", dest="guest_args", action=_GuestArg, metavar="FILE",
                   help="one more file for the guest's /bin")
    p.add_argument("--dynamic", dest="guest_args", action=_GuestArg, metavar="BINARY",
                   help="a host program for the guest, with the libraries it links")
    p.add_argument("--perf", dest="guest_args", action=_GuestArg, nargs=0,
                   help="put perf (Debian linux-perf) and its libraries in the guest")
    p.add_argument("-l", "--logdir", help="write the logs there instead of $BUILD/LINE/logs/NAME "
                   "(emptied first; else the last run's logs are kept as NAME.prev)")
    p.add_argument("--build-only", action="store_true",
                   help="prepare and build the kernel and the guest, do not boot")
    p.add_argument("--boot-only", action="store_true",
                   help="boot what an earlier run of the same NAME built, without preparing "
                        "or building anything")
    p.add_argument("--images", metavar="DIR",
                   help="with --boot-only: boot the arch/x86/boot/bzImage, initramfs.cpio.gz "
                        "and .config saved in DIR (sfp mutate -j) instead of NAME's build")
    p.set_defaults(guest_args=[])
    return p


def cmd_run(args: argparse.Namespace) -> int:
    d = data()
    run = sfp_run.plan_request(d, args.env, sfp_run.request_of(args))
    return sfp_run.execute(run, d, args.env, say).status


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp run to SUB."""
    p = add(sub, "run", cmd_run, "build a kernel and its guest, boot it, test, report",
            "sfp_run", """
Exit status 0 when every case passed; 1 otherwise (the report says which).
Environment: BUILD (a line's files go to BUILD/LINE), KSRC, LINE, SMP,
TOPOLOGY, MEM, ACCEL, BOOT_TIMEOUT, APPEND, QEMU_OPTS, BOOT_BACKEND (sfp
boot --help), JOBS (sfp build-kernel --help).""")
    run_options(p)
