# SPDX-License-Identifier: GPL-2.0
"""sfp report."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_errors
from harness import sfp_report
from harness.cli.common import Fail, add


def cmd_report(args: argparse.Namespace) -> int:
    logdir, tree, obj = (pathlib.Path(x) for x in (args.logdir, args.tree, args.obj))
    with sfp_errors.raised_as(Fail, sfp_report.ReportError, OSError):
        return sfp_report.report(logdir, tree, obj, pathlib.Path(args.out) if args.out else None)


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp report to SUB."""
    p = add(sub, "report", cmd_report, "a boot's test streams parsed by kunit.py, merged",
            "sfp_report")
    p.add_argument("-l", "--logdir", required=True, help="the boot's log directory")
    p.add_argument("--tree", required=True,
                   help="the kernel tree whose tools/testing/kunit/kunit.py parses")
    p.add_argument("--obj", required=True, help="the kernel's build directory (its .config)")
    p.add_argument("-o", "--out", metavar="RESULTS.tsv",
                   help="the merged rows (default LOGDIR/results.tsv)")
