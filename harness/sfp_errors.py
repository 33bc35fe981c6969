# SPDX-License-Identifier: GPL-2.0
"""The harness's errors: every module's own error class derives from
Refused or Failed, and ./sfp ends with its status and one 'sfp: error:'
line (docs/harness.md, "Exit statuses")."""
from __future__ import annotations

import contextlib
from typing import Iterator


class SfpError(Exception):
    """What stops a subcommand; the message is the one line the user sees."""
    status = 1


class Refused(SfpError):
    """Bad input, found before any work was done: exit status 2, as
    argparse's own usage errors."""
    status = 2


class Failed(SfpError):
    """A step that could not be done, or did not succeed: exit status 1,
    as a run whose cases failed."""


@contextlib.contextmanager
def raised_as(error: type[SfpError], *caught: type[Exception], prefix: str = "") -> Iterator[None]:
    """CAUGHT, raised inside, raised again as ERROR with its message after PREFIX."""
    try:
        yield
    except caught as e:
        raise error(f"{prefix}{e}") from e
