# SPDX-License-Identifier: GPL-2.0
"""sfp prepare, sfp series."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_prepare
from harness import sfp_series
from harness.cli.common import Refuse, data, doc, say


def cmd_prepare(args: argparse.Namespace) -> int:
    sfp_prepare.prepare(data(), args.env, args.source or "", args.out or "", say)
    return 0


def cmd_series(args: argparse.Namespace) -> int:
    """The series library on the command line, as shell assignments."""
    S = sfp_series
    patches = pathlib.Path(args.patches)
    a = args.args
    tw = args.env.get("THREEWAY_FROM") or None

    def want(n: int, usage: str) -> None:
        if len(a) < n:
            raise Refuse(f"sfp series {args.what} {usage}")
    if args.what == "paths":
        print("\n".join(S.paths(patches)))
        return 0
    if args.what == "subject":
        want(1, "PATCH")
        print(S.subject(pathlib.Path(a[0])))
        return 0
    if args.what == "mini-tree":
        want(2, "SOURCE DIR [REV [EXTRA...]]")
        S.mini_tree(pathlib.Path(a[0]), pathlib.Path(a[1]), patches,
                    a[2] if len(a) > 2 else "HEAD", tuple(a[3:]))
        return 0
    if args.what == "in-rev":
        want(3, "WT REV PATCH")
        return 0 if S.in_rev(pathlib.Path(a[0]), a[1], pathlib.Path(a[2])) else 1
    series = S.load(patches)
    if args.what == "load":
        print(S.shell("SERIES", dict(enumerate(str(p.path) for p in series))))
        print(S.shell("SERIES_ROLE", dict(enumerate(p.role for p in series))))
    elif args.what == "hash":
        print(S.series_hash(series))
    elif args.what == "states":
        want(1, "WT")
        for name, state in S.states(pathlib.Path(a[0]), series):
            print(f"{name}\t{state}")
    elif args.what == "features-end":
        want(1, "WT")
        print(S.features_end(pathlib.Path(a[0]), series))
    elif args.what == "source-fixed":
        want(1, "WT")
        print(S.source_fixed(pathlib.Path(a[0]), series))
    elif args.what == "back-out":
        want(1, "DIR")
        b = S.back_out(pathlib.Path(a[0]), series, pathlib.Path(tw) if tw else None)
        print(S.shell("SERIES_STATE", b.state))
        print(S.shell("SERIES_CONFLICTS", b.conflicts))
        print(S.shell("SERIES_BACKED_OUT", b.backed_out))
    elif args.what == "apply":
        want(1, "DIR [ROLE...]")
        roles = tuple(a[1:]) or S.ROLES
        for r in roles:
            if r not in S.ROLES:
                raise Refuse(f"unknown role '{r}': {', '.join(S.ROLES)}")
        r = S.apply(pathlib.Path(a[0]), series, roles, pathlib.Path(tw) if tw else None)
        for name, val in (("SERIES_HOW", r.how), ("SERIES_WHERE", r.where),
                          ("SERIES_PREREQ_END", r.prereq_end), ("SERIES_FAILED", r.failed),
                          ("SERIES_FAIL_WHERE", r.fail_where),
                          ("SERIES_FAIL_CONFLICTS", r.fail_conflicts),
                          ("SERIES_FAIL_ERR", r.fail_err)):
            print(S.shell(name, val))
        return 1 if r.failed is not None else 0
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp prepare, sfp series to SUB."""
    p = sub.add_parser("prepare", help="the line's work tree: base, series-base, baseline, "
                       "patched", description=doc("sfp_prepare"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", help="the kernel source (default: $KSRC, else the line's "
                   "default source)")
    p.add_argument("-o", "--out", metavar="WORKTREE", help="the work tree (default: "
                   "$BUILD/LINE/tree)")
    p.set_defaults(func=cmd_prepare)
    p = sub.add_parser("series", help="the line's series: read, back out, apply (for scripts)",
                       description=doc("sfp_series", """
WHAT is one of: load (SERIES and SERIES_ROLE as bash arrays), hash, paths,
subject PATCH, states WT, in-rev WT REV PATCH, features-end WT,
source-fixed WT, mini-tree SOURCE DIR [REV [EXTRA...]], back-out DIR (bash
assignments: SERIES_STATE, SERIES_CONFLICTS, SERIES_BACKED_OUT) and apply
DIR [ROLE...] (SERIES_HOW, SERIES_WHERE, SERIES_PREREQ_END, SERIES_FAILED,
SERIES_FAIL_WHERE, SERIES_FAIL_CONFLICTS, SERIES_FAIL_ERR; exit status 1
when a patch did not go in). Environment: THREEWAY_FROM."""),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--patches", required=True, metavar="DIR",
                   help="the line's patches directory (patches/LINE)")
    p.add_argument("what", choices=["load", "hash", "paths", "subject", "states", "in-rev",
                                    "features-end", "source-fixed", "mini-tree", "back-out",
                                    "apply"])
    p.add_argument("args", nargs="*")
    p.set_defaults(func=cmd_series)
