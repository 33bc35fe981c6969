# SPDX-License-Identifier: GPL-2.0
"""sfp race."""
from __future__ import annotations

import argparse

from harness import sfp_env, sfp_race
from harness.cli.common import add, data, _int_arg, say


def cmd_race(args: argparse.Namespace) -> int:
    d = data()
    choice = sfp_env.validate(d, args.env)
    r = sfp_race.plan(d, choice.line, boots=args.boots, secs=args.seconds, vcpus=args.vcpus,
                      lockdep_only=args.lockdep_only)
    return 0 if sfp_race.race(r, choice, args.env, say) else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp race to SUB."""
    p = add(sub, "race", cmd_race, "the 6.12.117 sched/debug race: lockdep check, oops rate",
            "sfp_race")
    num = _int_arg("-k, -d and -s want whole numbers > 0")
    p.add_argument("-k", "--boots", type=num, default=4, help="boots per kernel (default 4)")
    p.add_argument("-d", "--duration", "--seconds", dest="seconds", type=num, default=60,
                   help="seconds of load per boot (default 60)")
    p.add_argument("-s", "--vcpus", type=num, default=8, help="guest vCPUs (default 8)")
    p.add_argument("--lockdep-only", action="store_true",
                   help="the deterministic check only (make check)")
