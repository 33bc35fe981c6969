# SPDX-License-Identifier: GPL-2.0
"""Prepare the tests for posting with b4, as you, without sending
anything.

What is posted is what applies to the kernel as it is: the line's source
as given (branch 'base' of the work tree, which already has both fast
paths) plus the upstream tier's KUnit patch; with --cert also the
certification tier's patches, marked RFC and described as not for
merging. The feature patches are not posted: they re-add what every
tree here already has.

  1. $BUILD/LINE/post, a worktree of the line's work tree, on branch
     sfp-post-LINE: 'base' + the patches, each commit re-authored as you
     (git's user.name and user.email; the project's placeholder identity
     and an address in a reserved domain are refused, the latter unless
     --trial) and signed off by you in place of the placeholder;
  2. b4 prep --enroll base, the cover letter (kunit/COVER, with
     kunit/cert/COVER under --cert, and the results of
     'sfp kunit --stock' on this very tree, per architecture, where they
     were recorded), b4 prep --auto-to-cc (the tree's get_maintainer.pl,
     and as Cc whom it names for lib/kunit/: KUnit's maintainers and lists);
  3. b4 send -o DIR --no-sign: the messages as files. b4 is given
     /bin/false as its mail program, so nothing can be sent;
  4. scripts/checkpatch.pl --strict on every message, and
     get_maintainer.pl's list in DIR/get_maintainer.txt.

b4 writes a base-commit: line naming 'base'. When the source was a git
checkout that is its HEAD, a commit the list can find; when it was a
directory or a tarball, 'base' is a commit only this work tree has, and
the line is taken out (give a git checkout as KSRC to keep it).

DIR (-o) defaults to $BUILD/LINE/submission; it must not exist or be
empty. Needs a prepared work tree (make prepare) and b4.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import tempfile
import textwrap
from typing import Callable

from harness import sfp_env, sfp_errors, sfp_kunit, sfp_patches, sfp_series as S
from harness.sfp_data import ROOT

PLACEHOLDER = ("sched-fastpath", "sched-fastpath@example.org")
# Domains no mail reaches (RFC 2606, RFC 6761).
RESERVED = re.compile(r"(^|\.)(example\.(com|net|org)|example|invalid|test|localhost)$")


class SubmissionError(sfp_errors.Failed):
    """The submission cannot be written; the message is one line."""


def identity(tree: pathlib.Path, say: Callable[[str], None],
             trial: bool = False) -> tuple[str, str]:
    """The user's name and address from git's configuration, as TREE sees
    it; the placeholder and a missing identity are refused, and so is an
    address in a reserved domain (no list can reply to it, and it can
    certify no Signed-off-by) unless TRIAL (a try of the command, its
    messages not for sending)."""
    name = S.git(tree, "config", "user.name").stdout.strip()
    email = S.git(tree, "config", "user.email").stdout.strip()
    if not name or not email:
        raise SubmissionError("git's user.name and user.email are not set: the patches go out "
                              "as you (git config --global user.name ...; user.email ...)")
    if name == PLACEHOLDER[0] or email == PLACEHOLDER[1]:
        raise SubmissionError(f"git's identity is the project's placeholder ({name} <{email}>): "
                              "set your own user.name and user.email")
    if RESERVED.search(email.rpartition("@")[2].lower()):
        if not trial:
            raise SubmissionError(f"{email} is in a reserved domain: no list can reply to it, "
                                  "and it cannot sign off a patch (give your own address, or "
                                  "--trial for messages that are not for sending)")
        say(f"warning: {email} is in a reserved domain: --trial, these messages are not "
            "for sending")
    return name, email


def cover_text(cert: bool, results: list[str]) -> str:
    """The cover letter: its subject line, then its text."""
    text = (ROOT / "kunit" / "COVER").read_text().rstrip("\n").replace(
        "{upstream}", "Patch 1" if cert else "This patch") + "\n"
    if cert:
        text += "\n" + (ROOT / "kunit" / "cert" / "COVER").read_text().rstrip("\n") + "\n"
    if results:
        text += "\n" + "\n".join(results) + "\n"
    return text


def results(build: pathlib.Path, tree: str, version: str) -> list[str]:
    """The results section: 'sfp kunit --stock' records of TREE (a git
    tree id: the stock source plus the upstream tier's patch)."""
    names = {"um": "UML (kunit.py's default)", "x86_64": "x86_64, QEMU", "arm64":
             "arm64, QEMU virt"}
    if not (got := [r for r in sfp_kunit.records(build) if r.tree == tree]):
        return []
    runs = sorted({r.runs for r in got})
    out = [f"kunit.py run --kunitconfig=kernel/sched/tests on {version} with this patch,",
           f"{'/'.join(map(str, runs))} run{'s' if runs != [1] else ''} per architecture:"]
    for r in sorted(got, key=lambda r: list(names).index(r.arch) if r.arch in names else 9):
        smp = f", -smp {r.vcpus}" if r.arch != "um" else ""
        same = "the same in every run" if r.identical and r.runs > 1 else \
            "" if r.identical else "NOT the same in every run"
        out.append(f"  {names.get(r.arch, r.arch)}{smp}: {r.result}"
                   + (f", {same}" if same else ""))
    return out


def mutant_results(build: pathlib.Path, patch: str, version: str) -> list[str]:
    """What 'sfp kunit --mutants all' recorded for this patch (PATCH: the
    sha256 of its file, 16 hex) on this VERSION: how many of the line's
    one-line mistakes in the two fast paths make a case of it fail."""
    out = []
    for f in sorted((build / "kunit").glob("mutants-*.record.json")):
        try:
            r = json.loads(f.read_text())
        except ValueError:
            continue
        if r.get("patch") != patch or r.get("version") != version:
            continue
        out.append(f"Each of {r['total']} one-line changes to the two fast paths (a bound off by "
                   f"one, an operator or a condition flipped or dropped, a check removed), applied "
                   f"in turn to {version} with this patch: {r['caught']} make a case fail under "
                   f"kunit.py ({r['arch']}), {r['no_build']} do not build, "
                   f"{r['total'] - r['caught'] - r['no_build']} pass: they change the newly-idle "
                   "balance, the values a statistics pass computes from real runqueues, or when "
                   "and how often the indicator is written, none of which fake objects reach.")
    return [textwrap.fill(t, 72) for t in out]


def _run(cmd: list[str], cwd: pathlib.Path, env: dict[str, str], what: str,
         stdin: str | None = None) -> str:
    r = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                       check=False)
    if r.returncode:
        tail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-3:]
        raise SubmissionError(f"{what} failed: {' / '.join(tail) or '?'}")
    return r.stdout


def write(line: str, build: pathlib.Path, patches: pathlib.Path, out: pathlib.Path | None,
          say: Callable[[str], None], cert: bool = False, trial: bool = False) -> pathlib.Path:
    """The submission in OUT (default BUILD/submission); its directory."""
    sfp_env.need_tools(SubmissionError, ("git", "git"), ("perl", "perl"), ("b4", "b4"))
    wt = build / "tree"
    if not (wt / ".git").is_dir():
        raise SubmissionError(f"no work tree at {wt}: run 'make prepare' (or KSRC=... ./sfp "
                              "prepare) first")
    if not (wt / "scripts" / "get_maintainer.pl").is_file():
        raise SubmissionError(f"{wt} has no scripts/get_maintainer.pl")
    name, email = identity(wt, say, trial)
    with sfp_errors.raised_as(SubmissionError, S.SeriesError):
        upstream, certs = S.load_tiers(patches)
    out = out or build / "submission"
    if out.is_dir() and any(out.iterdir()) or out.exists() and not out.is_dir():
        raise SubmissionError(f"'{out}' is not empty: move it away, or give another with -o")

    post = build / "post"
    posted = upstream + (certs if cert else [])
    say(f"{post}: 'base' + {', '.join(p.name for p in posted)}")
    with sfp_errors.raised_as(SubmissionError, S.SeriesError, S.GitFailed):
        S.stock_worktree(wt, post, posted)
    # git and b4 see the user's identity; b4's mail program is /bin/false.
    # A KUnit suite new to its directory goes to KUnit's people as well:
    # whom the tree's MAINTAINERS names for lib/kunit/, as Cc.
    kunit = subprocess.run(["perl", "scripts/get_maintainer.pl", "--nogit", "--nogit-fallback",
                            "--norolestats", "-f", "lib/kunit/test.c"], cwd=post,
                           capture_output=True, text=True, check=False).stdout.split("\n")
    env = dict({k: v for k, v in os.environ.items() if k not in sfp_patches.IDENTITY},
               GIT_CONFIG_COUNT="3", GIT_CONFIG_KEY_0="sendemail.smtpserver",
               GIT_CONFIG_VALUE_0="/bin/false", GIT_CONFIG_KEY_1="b4.prep-cover-strategy",
               GIT_CONFIG_VALUE_1="commit", GIT_CONFIG_KEY_2="b4.send-series-cc",
               GIT_CONFIG_VALUE_2=", ".join(a for a in kunit if a.strip()))

    def git(*args: str, stdin: str | None = None) -> str:
        return _run(["git", *args], post, env, f"git {args[0]}", stdin)

    commits = git("rev-list", "--reverse", "base..HEAD").split()
    branch = f"sfp-post-{line}"
    git("checkout", "-q", "-B", branch, "base")
    placeholder = f"Signed-off-by: {PLACEHOLDER[0]} <{PLACEHOLDER[1]}>"
    with tempfile.TemporaryDirectory(prefix="sfp-post.") as tmp:
        for c in commits:
            git("cherry-pick", "--allow-empty", c)
            msg = git("log", "-1", "--format=%B", "HEAD")
            git("commit", "-q", "--amend", "--reset-author", "--signoff", "-F", "-",
                stdin="".join(ln for ln in msg.splitlines(keepends=True)
                              if ln.rstrip("\n") != placeholder))
        upstream_tree = git("rev-parse", f"{branch}~{len(commits) - 1}^{{tree}}").strip()
        version = S.kernel_version(post)
        found = results(build, upstream_tree, version)
        muts = mutant_results(build, sfp_kunit.patch_digest(upstream[0].path), version)
        found += ([""] if found and muts else []) + muts
        if not found:
            say(f"warning: no 'sfp kunit --stock' results recorded for this tree: the cover "
                f"letter gives none (LINE={line} ./sfp kunit --stock --arch ARCH --runs 10)")
        cover = pathlib.Path(tmp) / "cover"
        cover.write_text(cover_text(cert, found))
        say(f"b4 prep --enroll base on {branch}; the cover letter; b4 prep --auto-to-cc")
        _run(["b4", "prep", "--enroll", "base"], post, env, "b4 prep --enroll")
        ed = dict(env, GIT_CONFIG_COUNT="4", GIT_CONFIG_KEY_3="core.editor",
                  GIT_CONFIG_VALUE_3=f"cp {cover}")
        _run(["b4", "prep", "--edit-cover"], post, ed, "b4 prep --edit-cover")
        if cert:
            _run(["b4", "prep", "--set-prefixes", "RFC"], post, env, "b4 prep --set-prefixes")
        _run(["b4", "prep", "--auto-to-cc"], post, env, "b4 prep --auto-to-cc")

    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    say(f"b4 send -o {out} --no-sign (nothing is sent)")
    _run(["b4", "send", "-o", str(out), "--no-sign"], post, env, "b4 send -o")
    made = sorted(out.glob("*.eml"))
    base = S.git(post, "log", "-1", "--format=%an%x00%s", "base").stdout
    if own_base := base.startswith(f"{PLACEHOLDER[0]}\0base: "):
        say("the source is not a git checkout: base-commit names a commit only this work tree "
            "has, and is taken out (give KSRC a git checkout to keep it)")
        for m in made:
            m.write_text("".join(ln for ln in m.read_text().splitlines(keepends=True)
                                 if not ln.startswith("base-commit: ")))

    say(f"scripts/checkpatch.pl --strict and scripts/get_maintainer.pl -> {out}")
    report = []
    listed = S.listed_dirs(post)
    for m in made:
        if m.name.startswith("0000-"):  # the cover letter
            continue
        # Without the source's history checkpatch cannot look the cited
        # commits up; with it, it does. It asks whether MAINTAINERS needs
        # updating for every new file, even one a listed directory covers.
        text = m.read_text()
        listed += re.findall(r"^\+F:\t(\S+/)$", text, re.M)
        ignore = (["UNKNOWN_COMMIT_ID"] if own_base else []) + \
            (["FILE_PATH_CHANGES"] if S.new_files_covered(text, listed) else [])
        r = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict",
                            *(["--ignore", ",".join(ignore)] if ignore else []), str(m)], cwd=post,
                           capture_output=True, text=True, check=False)
        total = next((ln for ln in r.stdout.splitlines() if ln.startswith("total:")), "?")
        report.append(f"{m.name}: {len(text.splitlines())} lines; checkpatch --strict: {total}"
                      + (f" (ignored: {', '.join(ignore)})" if ignore else ""))
    maint = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git",
                            "--no-git-fallback", *map(str, made)], cwd=post, capture_output=True,
                           text=True, check=False).stdout
    (out / "get_maintainer.txt").write_text(maint)
    print("".join(f"{ln}\n" for ln in report) + maint, end="")
    say(f"wrote {len(made)} messages to {out}, as {name} <{email}>; nothing was sent")
    return out
