# SPDX-License-Identifier: GPL-2.0
"""The harness's errors: one base and two kinds, each with the exit
status ./sfp ends with (docs/harness.md, "Exit statuses"). Every module's
own error class derives from one of the two; ./sfp catches SfpError once
and prints its message as one 'sfp: error:' line.

  Refused  bad input, found before any work was done: exit status 2,
           as argparse's own usage errors;
  Failed   a step that could not be done, or did not succeed: exit
           status 1, as a run whose cases failed.
"""


class SfpError(Exception):
    """What stops a subcommand; the message is the one line the user sees."""
    status = 1


class Refused(SfpError):
    """Bad input, found before any work was done."""
    status = 2


class Failed(SfpError):
    """A step that could not be done, or did not succeed."""
    status = 1
