# SPDX-License-Identifier: GPL-2.0
"""sfp kunit."""
from __future__ import annotations

import argparse

from harness import sfp_env, sfp_kunit
from harness.cli.common import add, data, say, _int_arg


def cmd_kunit(args: argparse.Namespace) -> int:
    d, env = data(), args.env
    choice = sfp_env.select_line(d, env)
    if args.mutants:
        return sfp_kunit.mutants(d, choice.build, args.arch, args.vcpus, env, say,
                                 choice.patches, args.mutants, choice.line)
    return sfp_kunit.run(d, choice.build, args.arch, args.vcpus, env, say, stock=args.stock,
                         runs=args.runs, patches=choice.patches)


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "kunit", cmd_kunit, "the KUnit suites with the kernel's kunit.py", "sfp_kunit", """
Needs a prepared work tree (make prepare; KSRC= for a tree without a Debian
package). Exit status: kunit.py's. Environment: JOBS (default nproc+1), ACCEL (kvm
lets kunit.py's QEMU use /dev/kvm; otherwise, as root, it is hidden).""")
    p.add_argument("--arch", default="x86_64", help="x86_64 (default), arm64 or um")
    p.add_argument("-s", "--vcpus", type=_int_arg("-s wants a number of vCPUs > 0"), default=4,
                   help="vCPUs for QEMU (default 4; x86_64 and arm64)")
    p.add_argument("--stock", action="store_true", help="the source as given plus only the "
                   "upstream tier's patch ($BUILD/LINE/stock), not the work tree's 'patched'")
    p.add_argument("--mutants", nargs="+", metavar="NAME", help="each mutant of "
                   "tests/mutants/LINE/ ('all': every one) on the --stock tree in turn (implies "
                   "--stock), kunit.py once each: which the upstream tier catches")
    p.add_argument("--runs", type=_int_arg("--runs wants a number of runs > 0"), default=1,
                   help="run kunit.py this many times and compare every case's result (default 1)")
