# SPDX-License-Identifier: GPL-2.0
"""sfp prose."""
from __future__ import annotations

import argparse

from harness import sfp_prose
from harness.cli.common import add, data


def cmd_prose(args: argparse.Namespace) -> int:
    d = data()
    problems, checked = sfp_prose.check(d)
    for p in problems:
        print(f"  {p}")
    print(f"sfp prose: {checked} counts checked against the data, {len(problems)} differ")
    missing, names = sfp_prose.named(d, subcommands=set(args.subcommands))
    for p in missing:
        print(f"  {p}")
    print(f"sfp prose: {names} paths, links and commands the reference docs name, "
          f"{len(missing)} missing")
    return 1 if problems or missing else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "prose", cmd_prose, "check every count in the docs against the data", "sfp_prose")
    # sub.choices is filled as every module registers: whole when this runs.
    p.set_defaults(subcommands=sub.choices)
