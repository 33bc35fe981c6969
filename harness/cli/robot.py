# SPDX-License-Identifier: GPL-2.0
"""sfp robot."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_env, sfp_robot
from harness.cli.common import Fail, add, data, say


def cmd_robot(args: argparse.Namespace) -> int:
    d = data()
    choice = sfp_env.select_line(d, args.env)
    if not sfp_robot.run(d, choice.line, choice.build, args.quick,
                         pathlib.Path(args.out) if args.out else None, args.env, say):
        raise Fail("a build failed or a finding is new (table: "
                   f"{args.out or choice.build / 'robot' / 'table.md'})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "robot", cmd_robot, "the series built as the kernel test robot would",
            "sfp_robot", """
Environment: JOBS (default nproc+1).""")
    p.add_argument("--quick", action="store_true",
                   help="compile kernel/sched/ only, no link (make certify)")
    p.add_argument("-o", "--out", metavar="TABLE", help="the table (default "
                   "$BUILD/LINE/robot/table.md)")
