# SPDX-License-Identifier: GPL-2.0
"""sfp prepare."""
from __future__ import annotations

import argparse

from harness import sfp_prepare
from harness.cli.common import add, data, say


def cmd_prepare(args: argparse.Namespace) -> int:
    sfp_prepare.prepare(data(), args.env, args.source or "", args.out or "", say)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp prepare to SUB."""
    p = add(sub, "prepare", cmd_prepare, "the line's work tree: base, series-base, baseline, "
            "patched", "sfp_prepare")
    p.add_argument("--source", help="the kernel source (default: $KSRC, else the line's "
                   "default source)")
    p.add_argument("-o", "--out", metavar="WORKTREE", help="the work tree (default: "
                   "$BUILD/LINE/tree)")
