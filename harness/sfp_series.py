# SPDX-License-Identifier: GPL-2.0
"""A line's series (docs/series.md): read it, back its features out of a
source, apply it, and say per patch what happened. Nothing else in the
project applies or backs out a patch. With THREEWAY_FROM (a work tree
prepared from a known-good source of the line), a patch whose context
differs goes in or out with a three-way merge, reading the blobs it was
made from through GIT_ALTERNATE_OBJECT_DIRECTORIES, never writing them
into the repository being changed.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from harness.sfp_env import makefile_version, tar_top
from harness import sfp_errors

GIT_ID = ["-c", "user.name=sched-fastpath", "-c", "user.email=sched-fastpath@example.org"]
ROLES = ("prereq", "feature", "test")
# patches/LINE/series's sections; patches before any section are features.
_SECTIONS = (("# prerequisites", "prereq"), ("# features", "feature"), ("# generated", "test"))
# What the work tree did with a patch of a role, by whether 'base' contains it (states).
_STATES = {"prereq": ("prerequisite, not in the source: applied",
                      "prerequisite, in the source: skipped"),
           "feature": ("feature, not in the source: applied",
                       "feature, in the source: backed out, re-applied")}


class SeriesError(sfp_errors.Failed):
    """The series cannot be read; the message is one line."""


class GitFailed(sfp_errors.Failed):
    """A git command that must work did not."""


@dataclasses.dataclass(frozen=True)
class Patch:
    path: pathlib.Path
    role: str  # prereq, feature or test

    @property
    def name(self) -> str:
        return self.path.name


def load(patches: pathlib.Path) -> list[Patch]:
    """The series file's patches and their roles, in order."""
    sfile = patches / "series"
    if not sfile.is_file():
        raise SeriesError(f"no series file at {sfile}")
    role, out = "feature", []
    for ln in sfile.read_text().splitlines():
        section = next((r for head, r in _SECTIONS if ln.startswith(head)), "")
        nm = "".join(ln.split("#", 1)[0].split())
        if section:
            role = section
        elif nm:
            if not (patches / nm).is_file():
                raise SeriesError(f"patches/series names {nm}, which is not in {patches}")
            out.append(Patch(patches / nm, role))
    if not out:
        raise SeriesError(f"{sfile} names no patches")
    return out


def series_hash(series: list[Patch]) -> str:
    """Identifies the series' content, to know when to apply it again."""
    h = hashlib.sha256()
    for p in series:
        h.update(p.path.read_bytes())
    return h.hexdigest()[:16]


def subject(patch: pathlib.Path) -> str:
    """The Subject of a git format-patch file, unfolded, without its [PATCH n/m] prefix."""
    text = "\n".join(patch.read_text(encoding="utf-8", errors="replace").splitlines())
    m = re.search(r"^Subject: .*(?:\n[ \t].*)*", text, re.M)
    return re.sub(r"^Subject: (\[PATCH[^]]*\] )?", "", m.group(0).replace("\n", "")) if m else ""


def kernel_version(tree: pathlib.Path) -> str:
    """'6.12.117' from TREE's top-level Makefile."""
    return makefile_version((tree / "Makefile").read_text(errors="replace"))


def git(tree: pathlib.Path, *args: str, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True,
                          input=stdin, env=env, check=False)


def _threeway(threeway_from: pathlib.Path) -> dict[str, str]:
    return dict(os.environ, GIT_ALTERNATE_OBJECT_DIRECTORIES=str(threeway_from / ".git" /
                                                                 "objects"))


def _ok(tree: pathlib.Path, *args: str, env: dict[str, str] | None = None) -> bool:
    return git(tree, *args, env=env).returncode == 0


def _must(tree: pathlib.Path, *args: str, stdin: str | None = None) -> str:
    r = git(tree, *args, stdin=stdin)
    if r.returncode:
        raise GitFailed(f"git {' '.join(args[:3])} failed in {tree}: "
                        f"{(r.stderr.strip().splitlines() or ['?'])[0]}")
    return r.stdout


def in_rev(tree: pathlib.Path, rev: str, patch: pathlib.Path) -> bool:
    """PATCH is in REV of TREE: it reverses cleanly there (in a scratch index)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, GIT_INDEX_FILE=str(pathlib.Path(d) / "index"))
        return _ok(tree, "read-tree", rev, env=env) and \
            _ok(tree, "apply", "--cached", "--check", "-R", str(patch), env=env)


def states(tree: pathlib.Path, series: list[Patch]) -> list[tuple[str, str]]:
    """Per patch, its role and what the work tree did with it, from 'base'."""
    return [(p.name, _STATES[p.role][in_rev(tree, "base", p.path)] if p.role in _STATES
             else "test: applied") for p in series]


def paths(patches: pathlib.Path) -> list[str]:
    """The paths the patches in PATCHES change and none creates, and the top
    Makefile, sorted: enough of a source to apply the series and check series-base."""
    seen: set[str] = set()
    created: set[str] = set()
    for patch in patches.glob("*.patch"):
        f = ""
        for ln in patch.read_text(encoding="utf-8", errors="replace").splitlines():
            if m := re.match(r"^diff --git a/(\S+)", ln):
                f = m.group(1)
                seen.add(f)
            elif ln.startswith("new file mode "):
                created.add(f)
    return sorted({"Makefile", *(seen - created)})


def mini_tree(src: pathlib.Path, dest: pathlib.Path, patches: pathlib.Path, rev: str = "HEAD",
              extra: tuple[str, ...] = ()) -> None:
    """The files of SRC (a tarball, a git checkout's REV or a directory) that
    paths() names, and with a git checkout EXTRA's where REV has them, as a
    git tree with one commit on branch 'base'."""
    want = paths(patches)
    dest.mkdir(parents=True, exist_ok=True)
    if extra and not (src / ".git").exists():
        raise GitFailed("extra paths need a git checkout")
    if src.is_file():
        top = tar_top(src)
        if subprocess.run(["tar", "-xf", str(src), "-C", str(dest), "--strip-components=1",
                           *(f"{top}/{w}" for w in want)], check=False).returncode:
            raise GitFailed(f"cannot extract the series' files from {src}")
    elif (src / ".git").exists():
        if extra:
            want += _must(src, "ls-tree", "--name-only", rev, "--", *extra).splitlines()
        arch = subprocess.Popen(["git", "-C", str(src), "archive", rev, "--", *want],
                                stdout=subprocess.PIPE)
        untar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=arch.stdout, check=False)
        assert arch.stdout
        arch.stdout.close()
        if arch.wait() or untar.returncode:
            raise GitFailed(f"cannot extract the series' files from {src} at {rev}")
    else:
        for w in want:
            (dest / w).parent.mkdir(parents=True, exist_ok=True)
            if subprocess.run(["cp", "-a", str(src / w), str(dest / w)], check=False).returncode:
                raise GitFailed(f"cannot copy {w} from {src}")
    _must(dest, "init", "-q", "-b", "base")
    _must(dest, "add", "-A", "-f")
    _must(dest, *GIT_ID, "commit", "-q", "-m", f"base: {kernel_version(dest)}")


def selftests_diff(tree: pathlib.Path) -> bytes:
    """What 'patched' adds to 'baseline' under tools/testing/selftests (the
    series' kselftests, for a baseline kernel that runs them); never nothing."""
    diff = subprocess.run(["git", "-C", str(tree), "diff", "baseline", "patched", "--",
                           "tools/testing/selftests"], capture_output=True, check=False)
    if diff.returncode or not diff.stdout:
        raise SeriesError(f"'patched' adds no kselftests to 'baseline' in {tree}")
    return diff.stdout


def features_end(tree: pathlib.Path, series: list[Patch]) -> str:
    """The commit of TREE's 'patched' after the last feature patch."""
    ntests = sum(p.role == "test" for p in series)
    return _must(tree, "rev-parse", f"patched~{ntests}").strip()


def source_fixed(tree: pathlib.Path, series: list[Patch]) -> str:
    """The tree id of TREE's 'base' plus the prerequisite fixes it lacks (in
    a scratch index): what the feature patches on series-base must give back."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, GIT_INDEX_FILE=str(pathlib.Path(d) / "index"))
        if not _ok(tree, "read-tree", "base", env=env):
            raise GitFailed(f"git read-tree base failed in {tree}")
        for p in series:
            if p.role == "prereq" and not in_rev(tree, "base", p.path):
                if not _ok(tree, "apply", "--cached", str(p.path), env=env):
                    raise GitFailed(f"{p.name} does not apply to base")
        r = git(tree, "write-tree", env=env)
        if r.returncode:
            raise GitFailed(f"git write-tree failed in {tree}")
        return r.stdout.strip()


def _conflicts(tree: pathlib.Path) -> str:
    r = git(tree, "diff", "--name-only", "--diff-filter=U")
    return "".join(f"{f} " for f in r.stdout.splitlines()) if r.returncode == 0 else ""


@dataclasses.dataclass
class BackOut:
    """Per feature patch (by index): contained (backed out), drifted (backed
    out three-way), absent (it applies) or stuck (neither; the tree is left
    as it was, conflicts names the files a merge conflicted in)."""
    state: dict[int, str] = dataclasses.field(default_factory=dict)
    conflicts: dict[int, str] = dataclasses.field(default_factory=dict)
    backed_out: int = 0


def back_out(tree: pathlib.Path, series: list[Patch],
             threeway_from: pathlib.Path | None = None) -> BackOut:
    """On TREE's checked-out branch, back out, newest first, every feature
    patch TREE contains, one commit each."""
    res = BackOut()
    version = kernel_version(tree)
    for i, p in reversed([(i, p) for i, p in enumerate(series) if p.role == "feature"]):
        how = ""
        if _ok(tree, "apply", "--check", "-R", str(p.path)):
            _must(tree, "apply", "-R", "--index", str(p.path))
            res.state[i] = "contained"
        elif _ok(tree, "apply", "--check", str(p.path)):
            res.state[i] = "absent"
            continue
        elif threeway_from and _ok(tree, "apply", "-R", "--3way", "--index", str(p.path),
                                   env=_threeway(threeway_from)):
            res.state[i] = "drifted"
            how = " (three-way merge: its context differs here)"
        else:
            res.state[i] = "stuck"
            res.conflicts[i] = _conflicts(tree)
            _must(tree, "reset", "-q", "--hard")
            continue
        msg = (f'Back out "{subject(p.path)}"\n\n'
               f"The source ({version}) already contains this change; "
               f"patches/{p.path.parent.name}/{p.name}\n"
               f"reverse-applies to it{how}. It is backed out here so that 'series-base'\n"
               "is the kernel before the series and 'patched' (git am of the series onto\n"
               "series-base) shows exactly what the series adds.\n")
        _must(tree, *GIT_ID, "commit", "-q", "-F", "-", stdin=msg)
        res.backed_out += 1
    return res


@dataclasses.dataclass
class Applied:
    """Per patch (by index): how it went in: am, 3way (where: the first hunk
    that did not fit) or contained (a prerequisite the tree has: skipped).
    prereq_end: the commit after the last prerequisite. On failure, failed
    is the patch's index, with where, conflicts and git's first error."""
    how: dict[int, str] = dataclasses.field(default_factory=dict)
    where: dict[int, str] = dataclasses.field(default_factory=dict)
    prereq_end: str = ""
    failed: int | None = None
    fail_where: str = ""
    fail_conflicts: str = ""
    fail_err: str = ""


def _first_hunk(err: str, patch: pathlib.Path) -> str:
    where = next((ln[len("error: patch failed: "):] for ln in err.splitlines()
                  if ln.startswith("error: patch failed: ")), "")
    file, _, line = where.rpartition(":") if ":" in where else (where, "", where)
    hunk = ""
    if line:
        hunk = next((ln for ln in patch.read_text(errors="replace").splitlines()
                     if ln.startswith(f"@@ -{line},")), "")
    return f"{file or '?'} at line {line or '?'}" + (f" ({hunk})" if hunk else "")


def apply(tree: pathlib.Path, series: list[Patch], roles: tuple[str, ...] = ROLES,
          threeway_from: pathlib.Path | None = None) -> Applied:
    """On TREE's branch, git am each patch of ROLES, in order; one that does not go
    in sets failed and leaves TREE at the commit before it."""
    res = Applied(prereq_end=_must(tree, "rev-parse", "HEAD").strip())
    for i, p in enumerate(series):
        if p.role not in roles:
            continue
        if p.role == "prereq" and _ok(tree, "apply", "--check", "-R", str(p.path)):
            res.how[i] = "contained"
            continue
        chk = git(tree, "apply", "--check", "-v", str(p.path))
        err = chk.stdout + chk.stderr
        if chk.returncode == 0:
            am = git(tree, *GIT_ID, "am", "-q", str(p.path))
            err = am.stdout + am.stderr
        if chk.returncode == 0 and am.returncode == 0:
            res.how[i] = "am"
        else:
            git(tree, "am", "--abort")
            where = _first_hunk(err, p.path)
            am3 = git(tree, *GIT_ID, "am", "-q", "--3way", str(p.path),
                      env=_threeway(threeway_from)) if threeway_from else None
            if am3 is not None and am3.returncode == 0:
                res.how[i], res.where[i] = "3way", where
            else:
                res.failed, res.fail_where, res.fail_conflicts = i, where, _conflicts(tree)
                res.fail_err = next((ln for ln in (am3.stderr if am3 else err).splitlines()
                                     if ln.startswith(("error", "CONFLICT"))), "")
                git(tree, "am", "--abort")
                return res
        if p.role == "prereq":
            res.prereq_end = _must(tree, "rev-parse", "HEAD").strip()
    return res


def load_tiers(patches: pathlib.Path) -> tuple[list[Patch], list[Patch]]:
    upstream, cert = tiers(load(patches))
    if not upstream:
        raise SeriesError(f"{patches}/series has no test patches")
    return upstream, cert


def tiers(series: list[Patch]) -> tuple[list[Patch], list[Patch]]:
    """The test patches as (upstream tier, certification tier), in gen-patches' order."""
    tests = [p for p in series if p.role == "test"]
    return tests[:1], tests[1:]


def stock_worktree(tree: pathlib.Path, dest: pathlib.Path, patches: list[Patch]) -> str:
    """DEST, a git worktree of TREE at 'base' (the source as given) plus
    PATCHES by git am, made again each time; its HEAD."""
    if not _ok(tree, "rev-parse", "-q", "--verify", "base"):
        raise SeriesError(f"the work tree {tree} has no branch 'base': run 'make prepare'")
    if dest.exists() and not (dest / ".git").is_file():
        raise SeriesError(f"'{dest}' exists and is not a worktree of {tree}: move it away")
    if dest.exists() and not _ok(dest, "rev-parse", "--verify", "-q", "HEAD"):
        # Its repository went away (make clean-tree of an older version).
        shutil.rmtree(dest)
    if dest.exists():
        git(dest, "am", "--abort")
        _must(dest, "reset", "-q", "--hard")
        _must(dest, "checkout", "-q", "--detach", "base")
        _must(dest, "clean", "-q", "-fd")
    else:
        git(tree, "worktree", "prune")
        _must(tree, "worktree", "add", "-q", "--detach", str(dest), "base")
    for p in patches:
        am = git(dest, *GIT_ID, "am", "-q", str(p.path))
        if am.returncode:
            git(dest, "am", "--abort")
            where = _first_hunk(am.stdout + am.stderr, p.path)
            raise SeriesError(f"{p.name} does not apply to the source as given ('base' of "
                              f"{tree}): first failing hunk in {where}")
    return _must(dest, "rev-parse", "HEAD").strip()


def listed_dirs(tree: pathlib.Path) -> list[str]:
    """The directories TREE's MAINTAINERS lists (F: lines ending in '/')."""
    m = tree / "MAINTAINERS"
    return re.findall(r"^F:\t(\S+/)$", m.read_text(errors="replace"), re.M) if m.is_file() else []


def new_files_covered(text: str, listed: list[str]) -> bool:
    """The patch TEXT creates files, each under a directory of LISTED: the
    answer to checkpatch's 'does MAINTAINERS need updating?' (FILE_PATH_CHANGES)."""
    new = re.findall(r"^diff --git a/\S+ b/(\S+)\nnew file mode", text, re.M)
    return bool(new) and all(any(f.startswith(d) for d in listed) for f in new)
