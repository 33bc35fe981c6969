# SPDX-License-Identifier: GPL-2.0
"""sfp check."""
from __future__ import annotations

import argparse

from harness import sfp_check
from harness.cli.common import add, data, say


def cmd_check(args: argparse.Namespace) -> int:
    env = sfp_check.with_room(data(), args.env, args.quick, args.full, say)
    return sfp_check.Check(data(), env, args.quick, args.full).main()


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp check to SUB."""
    p = add(sub, "check", cmd_check, "the project's whole test suite (make check)", "sfp_check")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="steps 1 and 2 only: no kernel is built (make check-quick)")
    g.add_argument("--full", action="store_true",
                   help="steps 4 and 6 too: the robot checks and the benchmark's smoke round "
                        "(make certify)")
