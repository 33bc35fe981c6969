# SPDX-License-Identifier: GPL-2.0
"""sfp gen-patches, sfp submission."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_env, sfp_patches, sfp_submission
from harness.cli.common import add, data, say


def cmd_gen_patches(args: argparse.Namespace) -> int:
    d = data()
    choice = sfp_env.select_line(d, args.env)
    sfp_patches.run(d, choice.line, choice.build, choice.patches, args.check, say)
    return 0


def cmd_submission(args: argparse.Namespace) -> int:
    choice = sfp_env.select_line(data(), args.env)
    sfp_submission.write(choice.line, choice.build, choice.patches,
                         pathlib.Path(args.out) if args.out else None, say, cert=args.cert,
                         trial=args.trial)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "gen-patches", cmd_gen_patches, "the test patches from kunit/ and selftests/",
            "sfp_patches", """
The line is LINE, else KSRC's, else sfp.toml's default_line; it needs
the line's prepared work tree (make prepare).""")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if patches/ differs from what would be made")
    p = add(sub, "submission", cmd_submission,
            "the tests as you would post them (b4), nothing sent", "sfp_submission")
    p.add_argument("-o", "--out", metavar="DIR", help="where the files go (default: "
                   "$BUILD/LINE/submission; must not exist or be empty)")
    p.add_argument("--cert", action="store_true", help="post the certification tier's "
                   "patches too, as RFC (not for merging)")
    p.add_argument("--trial", action="store_true", help="accept an identity in a reserved domain "
                   "(example.org, .test, ...): a try of the command, the messages not for sending")
