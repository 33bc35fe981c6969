# SPDX-License-Identifier: GPL-2.0
"""sfp matrix."""
from __future__ import annotations

import argparse
import pathlib
import sys

from harness import sfp_matrix
from harness.cli.common import Fail, Refuse, add, data, say


def cmd_matrix(args: argparse.Namespace) -> int:
    d = data()
    lines = args.lines.split() if args.lines is not None else d.line_names()
    if not lines:
        raise Refuse("--lines wants at least one line")
    cmd = " ".join(["./sfp matrix", *sys.argv[2:]])
    if not sfp_matrix.run(d, lines, not args.no_boot, pathlib.Path(args.out) if args.out
                          else None, cmd, args.env, say, args.jobs):
        raise Fail("a version failed a check or its build and boot (the table says which)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp matrix to SUB."""
    p = add(sub, "matrix", cmd_matrix, "every point release Debian serves, against the series",
            "sfp_matrix")
    p.add_argument("--lines", metavar="LINES",
                   help="the lines, space-separated, e.g. '6.1 6.12' (default: every line)")
    p.add_argument("--no-boot", action="store_true",
                   help="no builds and boots, the table only")
    p.add_argument("-o", "--out", metavar="FILE",
                   help="also write the table (markdown) to FILE")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="J",
                   help="build every version's kernel first, then boot them as a job set, J "
                        "at once (with BOOT_BACKEND=lava-server, J jobs on the LAVA server); "
                        "$BUILD/matrix/jobs.tsv has each boot's time (default 0: each "
                        "version built and booted in turn)")
