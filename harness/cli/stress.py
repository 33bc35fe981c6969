# SPDX-License-Identifier: GPL-2.0
"""sfp stress."""
from __future__ import annotations

import argparse

from harness import sfp_env, sfp_series, sfp_stress
from harness.cli.common import Refuse, add, data, _int_arg, say


def cmd_stress(args: argparse.Namespace) -> int:
    d = data()
    secs = args.seconds if args.seconds is not None else args.minutes * 60
    if args.seconds is None and args.minutes <= 0:
        raise Refuse(f"--minutes wants a whole number of minutes > 0, not '{args.minutes}'")
    s = sfp_stress.plan(d, secs=secs, vcpus=args.vcpus, kind=args.kind,
                        topology=args.topology or "", runs=args.runs, busy=args.busy,
                        kernels=args.kernels, jobs=args.jobs)
    choice = sfp_env.validate(d, dict(args.env, TOPOLOGY=s.topology), kind=s.kind)
    patch = sfp_series.selftests_diff(choice.build / "tree")
    s.out(choice.build).mkdir(parents=True, exist_ok=True)
    (s.out(choice.build) / "selftests.patch").write_bytes(patch)
    return 0 if sfp_stress.stress(s, choice, d, args.env, say) else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp stress to SUB."""
    p = add(sub, "stress", cmd_stress,
            "the debug kernel with stress: KUnit, kselftests, stress", "sfp_stress", """
Exit status 0 when every kernel gave what it must (patched clean, baseline
exactly its expected failures), 1 otherwise. Environment: as sfp run's
(MEM defaults to 1024 here; APPEND is added after sfp.stress=SECONDS).""")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--minutes", type=_int_arg("--minutes wants a whole number of minutes > 0"),
                   default=10, help="stress time per kernel (default 10)")
    g.add_argument("-S", "--seconds", type=_int_arg("-S wants a whole number of seconds > 0"),
                   help="stress time in seconds instead (make check: 20)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-s", "--vcpus", type=_int_arg("-s wants 2 to 8 vCPUs"), default=4,
                   help="guest vCPUs (default 4)")
    g.add_argument("-t", "--topology", help="a CPU topology of sfp.toml [topologies] instead "
                   "of -s (multi-level: smt2x2x2, sock4x2)")
    p.add_argument("-K", "--kind", default="debug", help="the kind of debug kernel, a record "
                   "of sfp.toml [kinds] with the debug hook (default debug; debug-numa adds "
                   "the NUMA level); also the build's name")
    p.add_argument("-N", "--runs", type=_int_arg("-N wants a number of runs > 0"), default=1,
                   help="boot each kernel RUNS times (built by the first) and tally")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="J",
                   help="with -N: boot the runs after the first (which builds) J at once; with "
                        "BOOT_BACKEND=lava-server, J jobs on the LAVA server's devices (default 1)")
    p.add_argument("-b", "--busy", type=_int_arg("-b wants a number of busy loops"), default=0,
                   help="busy loops on the host meanwhile (default 0)")
    p.add_argument("kernels", nargs="*", metavar="KERNEL", help="patched (default) or baseline")
