# SPDX-License-Identifier: GPL-2.0
"""sfp coverage."""
from __future__ import annotations

import argparse

from harness import sfp_coverage, sfp_data, sfp_run
from harness.cli.common import Refuse, add, data, say


def cmd_coverage(args: argparse.Namespace) -> int:
    d = data()
    kinds = args.kind or list(sfp_coverage.KINDS)
    for k in kinds:
        if k not in sfp_coverage.KINDS:
            raise Refuse(f"-K {k}: a coverage kind is one of {', '.join(sfp_coverage.KINDS)}")
    runs = [sfp_run.plan(d, args.env, kind=k, ref="patched", name=k, boot_only=args.from_logs,
                         guest_args=["-x", str(sfp_data.ROOT / sfp_coverage.DUMP)]) for k in kinds]
    out = runs[0].build / "coverage"
    out.mkdir(parents=True, exist_ok=True)
    rc = 0
    for run in runs:
        if not args.from_logs:
            r = sfp_run.execute(run, d, args.env, say).status
            if r:
                say(f"{run.kind}: some tests failed (exit {r}); the counts are still reported")
                rc = r
        if sfp_coverage.report(run.line, run.kind, run.worktree, run.obj, run.logdir, out,
                               say, d.coverage_unrun):
            rc = rc or 1
    return rc


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "coverage", cmd_coverage, "gcov counts of the mechanisms' functions and call "
            "sites after the tests", description="Build the line's patched tree as each coverage "
            "kind (coverage: the main kind's config; coverage-distro: the distribution's "
            "scheduler options) with gcov on kernel/sched/, boot it with every test, and report "
            "per kind which lines and branches of the mechanisms' functions (those holding a line "
            "the series changes) and which of their call sites ran: BUILD/LINE/coverage/KIND.md "
            "and .json. Every line or call site that never ran needs a reason in sfp.toml "
            "coverage_unrun; the exit status is 1 if one has none.")
    p.add_argument("-K", "--kind", action="append", metavar="KIND",
                   help="only this coverage kind (repeatable; default: both)")
    p.add_argument("--from-logs", action="store_true",
                   help="no build or boot: report from the kinds' last boots")
