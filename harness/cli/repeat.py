# SPDX-License-Identifier: GPL-2.0
"""sfp repeat."""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys

from harness import sfp_env, sfp_repeat, sfp_run
from harness.cli.common import PROG, Refuse, add, data, say
from harness.cli.run import run_options


def cmd_repeat(args: argparse.Namespace) -> int:
    d = data()
    run_args = args.run_options[1:] if args.run_options[:1] == ["--"] else args.run_options
    if args.boots < 1:
        raise Refuse(f"N must be a number > 0, not '{args.boots}'")
    if args.busy < 0:
        raise Refuse(f"-b wants a number of busy loops, not '{args.busy}'")
    req = sfp_run.request_of(run_options(argparse.ArgumentParser(
        prog=f"{PROG} repeat N --", description="sfp run's options")).parse_args(run_args))
    choice = sfp_env.validate(d, args.env)
    out = pathlib.Path(args.out) if args.out else sfp_repeat.default_out(choice.build, req)
    sfp_repeat.repeat(dataclasses.replace(req, choice=choice), args.boots, out, args.busy,
                      args.env, say, sys.stdout)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp repeat to SUB."""
    p = add(sub, "repeat", cmd_repeat, "build one kernel, boot it N times; a row per boot",
            "sfp_repeat", """
Environment as for sfp run and sfp boot. Example:
  sfp repeat 5 -- -r patched -p tests/mutants/6.12/no-newidle-gate.patch -n mutant""")
    p.add_argument("boots", nargs="?", type=int, default=10, metavar="N",
                   help="boots (default 10)")
    p.add_argument("-o", "--out", help="the logs: DIR/BOOT (default $BUILD/LINE/logs/NAME-repeat; "
                   "emptied first)")
    p.add_argument("-b", "--busy", type=int, default=0,
                   help="BUSY busy loops ('yes >/dev/null') on the host while the guests run: a "
                        "host whose cores are shared, like a busy CI machine")
    p.add_argument("run_options", nargs=argparse.REMAINDER, metavar="-- RUN-OPTIONS",
                   help="sfp run's options naming the kernel (default: the main job's)")
