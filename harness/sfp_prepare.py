# SPDX-License-Identifier: GPL-2.0
"""Prepare a line's work tree from one kernel source, with these branches:
  base         the source as found
  series-base  base with every feature patch of the series that it already
               contains reverse-applied, one commit per patch: what
               'git am' of the series applies onto
  baseline     series-base + the series' prerequisite fixes: the kernel
               without the features, the 'A' side of every A/B comparison
  patched      series-base + 'git am' of the series (checked out)

The series is patches/LINE/series (docs/series.md): LINE is the kernel
line of $KSRC (6.1.192 is on line 6.1), else $LINE, else sfp.toml's
default line.

SOURCE (--source, else $KSRC, else $SFP_SRC_<LINE>, else the tarball of the
line's Debian package where it has one) is a kernel git checkout, a
kernel source directory or a source tarball. A SOURCE on another line
than $LINE is refused unless LINE was given. The source itself is never
modified: a git checkout is fetched into the work tree (its objects
shared, without its branches), anything else is copied or extracted
under the build folder. A tarball's 'base' is kept, by the tarball's
sha256, as a bare git repository in $SFP_CACHE (default
$XDG_CACHE_HOME/sched-fastpath, else ~/.cache/sched-fastpath): the next
work tree from the same tarball is a local clone of it and a checkout,
not an extraction and a commit of 80,000 files.

WORKTREE (-o) defaults to $BUILD/LINE/tree. If it exists it is reused as
it is; if patches/ changed since it was prepared, 'baseline' and
'patched' are rebuilt from 'series-base' provided the work tree has no
uncommitted edits and no commits of the user's on 'patched' (on failure
both branches are put back). A new work tree is made aside (WORKTREE.new)
and moved into place only when complete.

Per patch, the source either contains it (it reverse-applies), lacks it
(it applies) or neither (context drifted). 'Neither' stops with the
patch, the file and the first failing hunk, and leaves nothing behind;
unless THREEWAY_FROM names a work tree prepared from a known-good source
of the line: then the patch is backed out or applied with a three-way
merge, and only a conflict stops, naming the files.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import time
from typing import Callable

from harness import sfp_env
from harness import sfp_data
from harness import sfp_series as S
from harness.sfp_data import Data
from harness import sfp_errors

SPACE_GIB = 3  # a source tree (1.4 GB), its git objects and a build beside it
TARBALL = (".tar", ".tar.xz", ".tar.gz", ".tgz", ".tar.bz2")


class PrepareError(sfp_errors.Failed):
    """The work tree cannot be prepared; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Source:
    path: pathlib.Path
    kind: str  # git, dir or tar
    id: str    # what the work tree records it was made from


def is_kernel_tree(d: pathlib.Path) -> bool:
    """A Linux source tree with the files the series touches."""
    mk = d / "Makefile"
    return mk.is_file() and (d / "kernel" / "sched" / "fair.c").is_file() and \
        re.search(r"^PATCHLEVEL = ", mk.read_text(errors="replace"), re.M) is not None


def wt_meta(tree: pathlib.Path, key: str) -> str:
    """One value of the work tree's metadata (git notes under refs/notes/sfp)."""
    rev = "refs/sfp/prepared" if key == "series" else "base"
    out = S.git(tree, "notes", "--ref=sfp", "show", rev).stdout
    return next((ln[len(key) + 1:] for ln in out.splitlines() if ln.startswith(key + " ")), "")


def existing(path: pathlib.Path) -> pathlib.Path:
    """PATH, or its nearest parent that exists (the file system it will be on)."""
    while not path.exists():
        path = path.parent
    return path


def free_gib(path: pathlib.Path) -> int:
    return shutil.disk_usage(existing(path)).free // (1 << 30)


def need_space(where: pathlib.Path, gib: int, what: str, env: dict[str, str]) -> None:
    """Refuse when the file system holding WHERE has less than GIB GiB free."""
    if env.get("SFP_NO_SPACE_CHECK", "0") != "0":
        return
    d = existing(where)
    if (have := free_gib(d)) < gib:
        raise PrepareError(f"{what} needs about {gib} GiB free where {d} is; there are {have} "
                           f"GiB (df -h {d}): free some, or point BUILD= (or TMPDIR=) elsewhere; "
                           "SFP_NO_SPACE_CHECK=1 runs anyway")


def source_hint(data: Data, line: str) -> str:
    """How to give LINE a source, for messages."""
    pkg = data.lines[line].debian_package
    var = "SFP_SRC_" + line.replace(".", "_")
    give = f"give a tree as KSRC=/path/to/linux or {var}=/path/to/linux"
    return f"install {pkg} (make setup), or {give}" if pkg else \
        f"no Debian package carries {line}: {give}"


def _git(tree: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    """git -C TREE ARGS as the project's identity (its notes are commits)."""
    return S.git(tree, *S.GIT_ID, *args)


def _must(tree: pathlib.Path, *args: str) -> str:
    r = _git(tree, *args)
    if r.returncode:
        first = (r.stderr.strip().splitlines() or ["?"])[0]
        raise PrepareError(f"git {' '.join(args[:2])} failed in {tree}: {first}")
    return r.stdout


def _no_links(src: pathlib.Path, dst: pathlib.Path) -> list[str]:
    """git clone --local hard-links objects, which fails across file
    systems (a build directory on another disk than the cache): there it
    copies them."""
    try:
        return [] if src.stat().st_dev == dst.stat().st_dev else ["--no-hardlinks"]
    except OSError:
        return ["--no-hardlinks"]


def _source_from_meta(meta: str) -> str:
    kind, sep, rest = meta.partition(":")
    if not sep or kind not in ("dir", "git", "tar"):
        return meta
    return rest if kind == "dir" else rest.rpartition("@")[0] or rest


def resolve(data: Data, line: str, line_from: str, src_arg: str, default_src: str,
            wt: pathlib.Path, say: Callable[[str], None]) -> Source:
    """The source to prepare from, or PrepareError: nothing is written."""
    src = src_arg or default_src
    # A line without a default source: a work tree prepared before (with
    # KSRC) goes on with the source it was made from.
    if not src and (wt / ".git").is_dir():
        src = _source_from_meta(wt_meta(wt, "source"))
    if not src:
        raise PrepareError(f"no source for the {line} line: {source_hint(data, line)}")
    sfp_env.need_tools(PrepareError, ("git", "git"))
    p = pathlib.Path(src)
    if not p.exists():
        if src == default_src:
            raise PrepareError(f"{src} not found: {source_hint(data, line)}")
        raise PrepareError(f"kernel source '{src}' does not exist")
    p = p.resolve()
    v = sfp_env.source_version(p)
    if v and ".".join(v.split(".")[:2]) != line:
        if line_from != "LINE":
            raise PrepareError(f"'{p}' is Linux {v}, not on the {line} line: give it as "
                               f"KSRC={p}, and the line follows the source (lines: "
                               f"{' '.join(data.line_names())}), or force one with LINE=X.Y")
        say(f"LINE={line}: the {line} series on Linux {v}, as asked")
    wt_abs = pathlib.Path(os.path.abspath(wt))
    if str(p).startswith(str(wt_abs) + "/") or p == wt_abs:
        raise PrepareError(f"the source '{p}' is inside the work tree '{wt}'")
    if p.is_dir():
        if not is_kernel_tree(p):
            raise PrepareError(f"'{p}' is not a kernel source tree (no Makefile with PATCHLEVEL, "
                               "or no kernel/sched/fair.c)")
        top = _git(p, "rev-parse", "--show-toplevel").stdout.strip()
        if not top or pathlib.Path(top) != p:
            return Source(p, "dir", f"dir:{p}")
        if _git(p, "status", "--porcelain", "--untracked-files=no").stdout.strip():
            raise PrepareError(f"'{p}' has uncommitted changes; commit or stash them (the "
                               "work tree is a clone of HEAD and would not see them)")
        return Source(p, "git", f"git:{p}@{_must(p, 'rev-parse', 'HEAD').strip()}")
    if not p.is_file():
        raise PrepareError(f"'{p}' is not a directory or a file")
    if not p.name.endswith(TARBALL):
        raise PrepareError(f"'{p}' is neither a directory nor a .tar[.xz|.gz|.bz2] kernel tarball")
    st = p.stat()
    return Source(p, "tar", f"tar:{p}@{st.st_size}-{int(st.st_mtime)}")


class Preparer:
    """One preparation: the series, the source, the work tree."""

    def __init__(self, data: Data, line: str, series: list[S.Patch], src: Source,
                 wt: pathlib.Path, threeway: pathlib.Path | None, cache: pathlib.Path,
                 env: dict[str, str], say: Callable[[str], None]):
        self.data, self.line, self.series, self.src = data, line, series, src
        self.wt, self.threeway, self.cache, self.env, self.say = wt, threeway, cache, env, say

    def record_prepared(self, tree: pathlib.Path) -> None:
        """'patched' as it is now is what was prepared, from this series."""
        _must(tree, "update-ref", "refs/sfp/prepared", "patched")
        _git(tree, "notes", "--ref=sfp", "add", "-f", "-m", f"series {S.series_hash(self.series)}",
             "refs/sfp/prepared")

    def apply_series(self, tree: pathlib.Path) -> None:
        """git am the series on TREE's branch; 'baseline' after the prerequisites."""
        with sfp_errors.raised_as(PrepareError, S.GitFailed):
            r = S.apply(tree, self.series, S.ROLES, self.threeway)
        if r.failed is not None:
            merge = f"; a three-way merge conflicts in {r.fail_conflicts or '?'}" \
                if self.threeway else ""
            hint = "" if self.threeway else \
                "; THREEWAY_FROM=<a work tree prepared from it> tries a three-way merge"
            raise PrepareError(
                f"{self.series[r.failed].name} neither applies to nor is contained in "
                f"{self.src.path} ({S.kernel_version(tree)}): first failing hunk in {r.fail_where}"
                f"{merge}; known to work: {self.data.lines[self.line].known_good}{hint}")
        for i, how in sorted(r.how.items()):
            if how == "contained":
                self.say(f"{self.series[i].name}: prerequisite already in the source, skipped")
            elif how == "3way":
                self.say(f"{self.series[i].name}: applied with a three-way merge (first hunk "
                         f"that did not fit: {r.where[i]})")
        _must(tree, "branch", "-f", "baseline", r.prereq_end)

    def reuse(self) -> None:
        """An existing work tree: up to date, or its series applied again."""
        wt = self.wt
        made_from = wt_meta(wt, "source")
        if not made_from:
            raise PrepareError(f"'{wt}' exists but was not made by sfp prepare (or by an older "
                               "version of it); move it away, or remove it (make clean-tree)")
        if made_from != self.src.id:
            raise PrepareError(f"'{wt}' was prepared from {made_from}, not {self.src.id}; "
                               "remove it first (make clean-tree)")
        want = S.series_hash(self.series)
        if wt_meta(wt, "series") == want:
            self.say(f"work tree {wt} is up to date ({wt_meta(wt, 'version')}, series {want})")
            return
        if _git(wt, "status", "--porcelain", "--untracked-files=no").stdout.strip():
            raise PrepareError(f"patches/ changed but '{wt}' has uncommitted edits; commit or "
                               "discard them, or remove the work tree (make clean-tree)")
        old_patched = _git(wt, "rev-parse", "patched").stdout.strip() or "none"
        if old_patched != _git(wt, "rev-parse", "refs/sfp/prepared").stdout.strip():
            raise PrepareError(f"patches/ changed but 'patched' in '{wt}' has commits of yours; "
                               "move them to another branch, or remove the work tree (make "
                               "clean-tree)")
        # A tree prepared before the series had prerequisites: its
        # 'baseline' is what the series applies onto.
        if _git(wt, "rev-parse", "-q", "--verify", "series-base").returncode:
            _must(wt, "branch", "series-base", "baseline")
        self.say(f"patches/ changed: rebuilding 'baseline' and 'patched' from 'series-base' in "
                 f"{wt}")
        old_baseline = _must(wt, "rev-parse", "baseline").strip()
        try:
            _must(wt, "checkout", "-q", "-B", "patched", "series-base")
            _must(wt, "branch", "-f", "baseline", "series-base")
            self.apply_series(wt)
        except BaseException:
            _git(wt, "am", "--abort")
            _git(wt, "checkout", "-q", "-f", "-B", "patched", old_patched)
            _git(wt, "branch", "-f", "baseline", old_baseline)
            raise
        self.record_prepared(wt)

    def base(self, tmp: pathlib.Path) -> None:
        """TMP as a git tree whose branch 'base' is the source as found."""
        src = self.src
        if src.kind == "git":
            # As clone --shared, without the source's branches: its own may
            # be called base, baseline or patched.
            _must(tmp.parent, "init", "-q", "-b", "sfp-unborn", str(tmp))
            objects = _must(src.path, "rev-parse", "--git-path", "objects").strip()
            alt = pathlib.Path(objects) if objects.startswith("/") else src.path / objects
            (tmp / ".git" / "objects" / "info" / "alternates").write_text(f"{alt}\n")
            _must(tmp, "fetch", "-q", "--no-tags", str(src.path), "HEAD")
            _must(tmp, "checkout", "-q", "-b", "base", "FETCH_HEAD")
            return
        cached = self.cache / f"base-{sfp_data.file_sha256(src.path)}.git" \
            if src.kind == "tar" else None
        if cached and not _git(cached, "rev-parse", "-q", "--verify", "refs/heads/base").returncode:
            self.say(f"checking out the source's 'base' from the cache {cached}")
            _must(tmp.parent, "clone", "-q", "--local", *_no_links(cached, tmp.parent), "-b",
                  "base", str(cached), str(tmp))
            _must(tmp, "remote", "remove", "origin")
            return
        tmp.mkdir()
        if src.kind == "tar":
            self.say(f"extracting {src.path.name}")
            if subprocess.run(["tar", "-xf", str(src.path), "-C", str(tmp),
                               "--strip-components=1"], check=False).returncode:
                raise PrepareError(f"cannot extract {src.path}")
            if not is_kernel_tree(tmp):
                raise PrepareError(f"'{src.path}' does not contain a kernel source tree")
        else:
            self.say(f"copying {src.path}")
            if subprocess.run(["cp", "-a", f"{src.path}/.", f"{tmp}/"], check=False).returncode:
                raise PrepareError(f"cannot copy {src.path}")
        _must(tmp, "init", "-q", "-b", "base")
        self.say("committing the source as 'base' (about a minute)")
        _must(tmp, "add", "-A")
        # Debian's linux-source tarball ignores '/*' (its packaging
        # .gitignore), so a plain add sees nothing: take every file then.
        if _git(tmp, "ls-files", "--error-unmatch", "kernel/sched/fair.c").returncode:
            _must(tmp, "add", "-A", "-f")
        _must(tmp, *S.GIT_ID, "commit", "-q", "-m",
              f"base: {src.path.name} ({S.kernel_version(tmp)})")
        if cached:
            self.keep(tmp, cached)

    def keep(self, tmp: pathlib.Path, cached: pathlib.Path) -> None:
        """'base' kept for the next work tree from this tarball; a cache that
        cannot be written costs only the next extraction."""
        new = cached.with_name(cached.name + ".new")
        shutil.rmtree(new, ignore_errors=True)
        try:
            self.cache.mkdir(parents=True, exist_ok=True)
            r = subprocess.run(["git", "clone", "-q", "--bare", "--local",
                                *_no_links(tmp, self.cache), str(tmp), str(new)],
                               capture_output=True, text=True, check=False)
            if r.returncode:
                raise OSError((r.stderr.strip().splitlines() or ["git clone failed"])[0])
            new.rename(cached)
            self.say(f"kept 'base' in the cache {cached}")
        except OSError as e:
            shutil.rmtree(new, ignore_errors=True)
            self.say(f"could not keep 'base' in the cache {self.cache} (carrying on): {e}")

    def make(self) -> None:
        """A new work tree, made aside and moved into place when complete."""
        wt = self.wt
        if wt.exists():
            raise PrepareError(f"'{wt}' exists and is not a work tree; move it away")
        need_space(wt, SPACE_GIB, "a new work tree", self.env)
        wt.parent.mkdir(parents=True, exist_ok=True)
        tmp = wt.with_name(wt.name + ".new")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            t0 = time.monotonic()
            self.say(f"new work tree from {self.src.kind} source {self.src.path}")
            self.base(tmp)
            self.say(f"base committed in {int(time.monotonic() - t0)}s")
            version = S.kernel_version(tmp)
            _must(tmp, "checkout", "-q", "-b", "series-base", "base")
            try:
                b = S.back_out(tmp, self.series, self.threeway)
            except S.GitFailed as e:
                raise PrepareError(f"git failed while backing the features out of "
                                   f"{self.src.path}") from e
            for i, state in sorted(b.state.items()):
                if state in ("contained", "drifted"):
                    self.say(f"{self.series[i].name}: contained in the source, backed out for "
                             "series-base" + (" (three-way merge: its context differs here)"
                                              if state == "drifted" else ""))
            _must(tmp, "branch", "baseline", "series-base")
            _must(tmp, "checkout", "-q", "-b", "patched", "series-base")
            self.apply_series(tmp)
            _git(tmp, "notes", "--ref=sfp", "add", "-f", "-m", f"source {self.src.id}", "-m",
                 f"version {version}", "base")
            self.record_prepared(tmp)
            shutil.rmtree(wt, ignore_errors=True)
            tmp.rename(wt)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.say(f"work tree ready: {wt} ({version}; {b.backed_out} feature patch(es) backed "
                 "out for series-base)")


def prepare(data: Data, env: dict[str, str], src_arg: str, wt_arg: str,
            say: Callable[[str], None], choice: sfp_env.LineChoice | None = None) -> pathlib.Path:
    """Make or reuse the line's work tree (CHOICE's, else ENV's line); its path.
    PrepareError on bad input or a patch that does not go in (nothing left behind)."""
    choice = choice or sfp_env.select_line(data, env)
    line = choice.line
    wt = pathlib.Path(os.path.abspath(wt_arg or choice.build / "tree"))
    src = resolve(data, line, choice.source_from, src_arg or env.get("KSRC", ""),
                  data.lines[line].default_source(env), wt, say)
    with sfp_errors.raised_as(PrepareError, S.SeriesError):
        series = S.load(choice.patches)
    threeway = None
    if env.get("THREEWAY_FROM"):
        threeway = pathlib.Path(env["THREEWAY_FROM"])
        if not (threeway / ".git" / "objects").is_dir():
            raise PrepareError(f"THREEWAY_FROM={threeway} is not a git work tree (no .git/objects)")
        threeway = threeway.resolve()
    p = Preparer(data, line, series, src, wt, threeway, sfp_env.cache_dir(env), env, say)
    if (wt / ".git").is_dir():
        p.reuse()
    else:
        p.make()
    return wt
