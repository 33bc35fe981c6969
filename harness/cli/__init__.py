# SPDX-License-Identifier: GPL-2.0
"""sfp: sched-fastpath's harness tool (Python 3.11 and Debian's python3-yaml).

The project's facts are records in sfp.toml; every subcommand reads them
through harness/sfp_data.py, which refuses a bad record when the file is
loaded. Results are read from a boot's logs into a typed Result
(harness/sfp_results.py), and every verdict and table is computed from
Results. `sfp SUBCOMMAND --help` says more.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys

from harness import sfp_errors
from harness import sfp_run
from harness.cli import (bench, boot, build, check, coverage, data, kunit, lab, matrix, mutate,
                         patches, prepare, prose, race, repeat, report, robot, run, stress)
from harness.cli.common import PROG

# Each module registers its subcommands; --help lists them in this order.
MODULES = (data, report, mutate, repeat, patches, robot, bench, check, matrix, kunit, prepare,
           stress, race, build, coverage, lab, boot, run, prose)


def parser() -> argparse.ArgumentParser:
    """sfp's argument parser, every subcommand in it."""
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="SUBCOMMAND")
    for m in MODULES:
        m.register(sub)
    return ap


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is: a LAVA job the process waits for is
    cancelled on the way out."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str]) -> int:
    """sfp ARGV: the exit status (harness/sfp_errors.py; 130 on Ctrl-C, 143
    on SIGTERM)."""
    args = parser().parse_args(argv)
    # The environment, read once: every handler takes its settings from
    # args.env (sfp_env checks them; sfp_env.boot_settings types a boot's).
    args.env = dict(os.environ)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return args.func(args)
    except sfp_errors.SfpError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt as e:
        sfp_run.stop_runs()
        return 143 if isinstance(e, Terminated) else 130
