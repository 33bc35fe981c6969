# SPDX-License-Identifier: GPL-2.0
"""Write a line's series as an upstream submission, without sending
anything:

  git format-patch --cover-letter series-base..patched of the line's
  prepared work tree ($BUILD/LINE/tree), numbered [PATCH n/N] over the
  whole series, the cover letter's subject and text taken from
  docs/cover-letter-LINE.txt (docs/cover-letter.txt, which describes two
  feature and two test patches, if the line has no letter of its own and
  no prerequisite patches), with the diffstat and shortlog git writes;

  then the tree's scripts/get_maintainer.pl on every patch (no git
  history needed: --no-git --no-git-fallback), and once on the whole
  series: the To/Cc list a maintainer expects, in DIR/get_maintainer.txt.

DIR (-o) defaults to $BUILD/LINE/submission; it must not exist or be
empty. Needs a prepared work tree (make prepare).
"""
from __future__ import annotations

import pathlib
import subprocess
from typing import Callable

import sfp_series as S

import sfp_env
from sfp_data import ROOT


class SubmissionError(Exception):
    """The submission cannot be written; the message is one line."""


def cover_letter(line: str, series: list[S.Patch]) -> pathlib.Path:
    own = ROOT / "docs" / f"cover-letter-{line}.txt"
    if own.is_file():
        return own
    # The common letter describes a series of two features and two test
    # patches; a line with prerequisite fixes needs its own.
    if any(p.role == "prereq" for p in series):
        raise SubmissionError(f"the {line} series has prerequisite patches, which "
                              "docs/cover-letter.txt does not describe: write "
                              f"docs/cover-letter-{line}.txt")
    common = ROOT / "docs" / "cover-letter.txt"
    if not common.is_file():
        raise SubmissionError("no docs/cover-letter.txt")
    return common


def write(line: str, build: pathlib.Path, patches: pathlib.Path, out: pathlib.Path | None,
          say: Callable[[str], None]) -> pathlib.Path:
    """The submission in OUT (default BUILD/submission); its directory."""
    for cmd, pkg in (("git", "git"), ("perl", "perl")):
        if sfp_env.missing_tool(cmd, pkg):
            raise SubmissionError(sfp_env.missing_tool(cmd, pkg))
    wt = build / "tree"
    if not (wt / ".git").is_dir():
        raise SubmissionError(f"no work tree at {wt}: run 'make prepare' (or KSRC=... ./sfp "
                              "prepare) first")
    if not (wt / "scripts" / "get_maintainer.pl").is_file():
        raise SubmissionError(f"{wt} has no scripts/get_maintainer.pl")
    try:
        series = S.load(patches)
    except S.SeriesError as e:
        raise SubmissionError(str(e)) from e
    cover = cover_letter(line, series)
    out = out or build / "submission"
    if out.is_dir() and any(out.iterdir()) or out.exists() and not out.is_dir():
        raise SubmissionError(f"'{out}' is not empty: move it away, or give another with -o")
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()

    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(wt), *args], capture_output=True, text=True,
                           check=False)
        if r.returncode:
            raise SubmissionError(f"git {args[0]} failed: {r.stderr.strip()}")
        return r.stdout

    n = git("rev-list", "--count", "series-base..patched").strip()
    say(f"format-patch --cover-letter series-base..patched ({n} patches) -> {out}")
    # The cover letter's first line is its subject, the rest its text: git
    # takes both from the branch description.
    description = cover.read_text().rstrip("\n")
    subprocess.run(["git", "-C", str(wt), "-c", "user.name=sched-fastpath",
                    "-c", "user.email=sched-fastpath@example.org",
                    "-c", f"branch.patched.description={description}", "-c", "core.abbrev=12",
                    "format-patch", "-q", "--cover-letter", "--cover-from-description=subject",
                    "--zero-commit", "-o", str(out), "series-base..patched"], check=True)

    say(f"scripts/get_maintainer.pl per patch -> {out}/get_maintainer.txt")
    made = sorted(p for p in out.glob("0*.patch") if not p.name.startswith("0000-"))

    def maintainers(*args: str) -> str:
        return subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git",
                               "--no-git-fallback", *args], cwd=wt, capture_output=True,
                              text=True, check=False).stdout
    text = "".join(f"## {p.name}\n{maintainers(str(p))}\n" for p in made)
    text += "## the whole series\n" + maintainers("--no-rolestats", *map(str, made))
    (out / "get_maintainer.txt").write_text(text)
    print(text, end="")
    say(f"wrote {len(list(out.glob('*.patch')))} files to {out}; nothing was sent")
    return out
