# SPDX-License-Identifier: GPL-2.0
"""What every subcommand's module shares: the program's name, its errors
and one-line messages, sfp.toml loaded, a module's docstring as --help."""
from __future__ import annotations

import argparse
import importlib
import sys

from harness import sfp_data
from harness import sfp_errors

ROOT = sfp_data.ROOT
PROG = "sfp"
# Stop with one 'sfp: error: ...' line: a step that failed (exit status
# 1), or bad input found before any work (2).
Fail = sfp_errors.Failed
Refuse = sfp_errors.Refused


def doc(module: str, more: str = "") -> str:
    """A module's docstring, and MORE, for a subcommand's --help."""
    return (importlib.import_module(f"harness.{module}").__doc__ or "") + more


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
