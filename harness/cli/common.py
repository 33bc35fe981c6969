# SPDX-License-Identifier: GPL-2.0
"""What every subcommand's module shares: the program's name, its errors
and one-line messages, sfp.toml loaded, a module's docstring as --help."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Callable

from harness import sfp_data
from harness import sfp_errors

ROOT = sfp_data.ROOT
PROG = "sfp"
# Stop with one 'sfp: error: ...' line: a step that failed (exit status
# 1), or bad input found before any work (2).
Fail = sfp_errors.Failed
Refuse = sfp_errors.Refused


def add(sub: argparse._SubParsersAction, name: str, func: Callable[[argparse.Namespace], int],
        help: str, module: str = "", more: str = "", **kw: Any) -> argparse.ArgumentParser:
    """Subcommand NAME, run by FUNC, with HELP in sfp --help's list; its own
    --help is MODULE's docstring and MORE as written (else KW's description)."""
    if module:
        kw.update(description=(importlib.import_module(f"harness.{module}").__doc__ or "") + more,
                  formatter_class=argparse.RawDescriptionHelpFormatter)
    p = sub.add_parser(name, help=help, **kw)
    p.set_defaults(func=func)
    return p


def say(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def data() -> sfp_data.Data:
    with sfp_errors.raised_as(Refuse, sfp_data.DataError, prefix="sfp.toml: "):
        return sfp_data.load()


def _int_arg(what: str):
    def conv(v: str) -> int:
        if not v.isdigit():
            raise argparse.ArgumentTypeError(f"{what}, not '{v}'")
        return int(v)
    return conv
