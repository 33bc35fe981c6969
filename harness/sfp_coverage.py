# SPDX-License-Identifier: GPL-2.0
"""Which code of the two mechanisms the tests execute: a coverage kind
(sfp.toml) builds kernel/sched/ with gcov, the guest's
scripts/guest/gcov_dump.sh sends the .gcda files back after every test,
and gcov's counts are summed over the units that include a line (an
inline function of sched.h is compiled into several). Reported, by the
rule that places sfp mutants' mutants (harness/sfp_mutgen.py): each
function holding a line the series changes under kernel/sched/, its
lines and branches run, and each line under kernel/sched/ that calls one,
how often; in BUILD/LINE/coverage/KIND.md and KIND.json."""
from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import itertools
import json
import pathlib
import re
import shutil
import subprocess
import tarfile
from typing import Callable

from harness import sfp_errors, sfp_mutgen

GCOV_BEGIN, GCOV_END = "# gcov-begin", "# gcov-end"
KINDS = ("coverage", "coverage-distro")
DUMP = "scripts/guest/gcov_dump.sh"


class CoverageError(sfp_errors.Failed):
    """No counts can be had; one line."""


def gcda_archive(guest_log: str) -> bytes:
    """The gzip'd tar that gcov_dump.sh printed between its markers."""
    lines = guest_log.replace("\r", "").splitlines()
    try:
        a = lines.index(GCOV_BEGIN)
        b = lines.index(GCOV_END, a)
    except ValueError as e:
        raise CoverageError("the guest log has no gcov counts (no '# gcov-begin' ... "
                            "'# gcov-end': did gcov_dump.sh run?)") from e
    body = "".join(ln[2:] for ln in lines[a + 1:b] if ln.startswith("# "))
    try:
        return gzip.decompress(base64.b64decode(body, validate=True))
    except (ValueError, OSError, EOFError) as e:
        raise CoverageError(f"the gcov counts in the guest log are damaged ({e})") from e


def unpack(archive: bytes, obj: pathlib.Path, out: pathlib.Path) -> list[pathlib.Path]:
    """The .gcda files of ARCHIVE in OUT, each beside its .gcno from
    OBJ/kernel/sched/; the .gcda paths."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    got = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:
        for m in t.getmembers():
            name = pathlib.PurePath(m.name).name
            if not m.isfile() or not name.endswith(".gcda"):
                continue
            f = t.extractfile(m)
            assert f is not None
            (out / name).write_bytes(f.read())
            gcno = obj / "kernel" / "sched" / (name[:-5] + ".gcno")
            if not gcno.is_file():
                raise CoverageError(f"{gcno} not found: the counts are not of this build")
            shutil.copy(gcno, out / gcno.name)
            got.append(out / name)
    if not got:
        raise CoverageError("the gcov archive holds no .gcda file")
    return sorted(got)


@dataclasses.dataclass
class LineCount:
    count: int = 0
    branches: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Func:
    file: str      # kernel/sched/NAME
    name: str
    start: int
    end: int


Counts = dict[tuple[str, int], LineCount]


def gcov_json(gcdas: list[pathlib.Path]) -> Counts:
    """gcov -j -b on each unit; the line counts of kernel/sched/ files,
    summed over units."""
    counts: Counts = {}
    for gcda in gcdas:
        r = subprocess.run(["gcov", "-j", "-b", "-o", str(gcda.parent), gcda.name[:-5] + ".c"],
                           cwd=gcda.parent, capture_output=True, text=True, check=False)
        js = gcda.parent / (gcda.name[:-5] + ".gcda.gcov.json.gz")
        if not js.is_file():
            if not (cands := list(gcda.parent.glob(gcda.name[:-5] + "*.gcov.json.gz"))):
                raise CoverageError(f"gcov made nothing of {gcda.name}: {r.stderr.strip()[:200]}")
            js = cands[0]
        doc = json.loads(gzip.decompress(js.read_bytes()))
        js.unlink()
        for f in doc.get("files", []):
            if not (m := re.search(r"kernel/sched/.*$", f["file"])):
                continue
            for ln in f.get("lines", []):
                lc = counts.setdefault((m.group(0), ln["line_number"]), LineCount())
                lc.count += ln["count"]
                br = [b["count"] for b in ln.get("branches", [])]
                lc.branches = [a + b for a, b in itertools.zip_longest(lc.branches, br,
                                                                       fillvalue=0)]
    return counts


@dataclasses.dataclass(frozen=True)
class CallSite:
    file: str
    line: int
    callee: str
    caller: str
    text: str
    count: int | None   # None: no code there in any unit (compiled out)


def mechanism(tree: pathlib.Path) -> tuple[list[Func], list[CallSite]]:
    """The mechanisms' functions and call sites, by sfp_mutgen's rule (the
    same places its mutants are made), with no counts yet."""
    funcs, sites = sfp_mutgen.places(tree, sfp_mutgen.changed_lines(tree))
    return ([Func(f, n, s, e) for f, n, s, e in funcs],
            [CallSite(f, n, callee, caller, text, None) for f, n, callee, caller, text in sites])


def counted(sites: list[CallSite], counts: Counts) -> list[CallSite]:
    lcs = [counts.get((s.file, s.line)) for s in sites]
    return [dataclasses.replace(s, count=lc.count if lc else None) for s, lc in zip(sites, lcs)]


@dataclasses.dataclass(frozen=True)
class FuncCoverage:
    func: Func
    lines: int
    lines_run: int
    branches: int
    branches_taken: int
    never_run: tuple[int, ...]
    branch_lines: tuple[int, ...]   # lines with a branch never taken


def function_coverage(mech: list[Func], counts: Counts) -> list[FuncCoverage]:
    out = []
    for f in mech:
        rows = [(n, counts[(f.file, n)]) for n in range(f.start, f.end + 1)
                if (f.file, n) in counts]
        out.append(FuncCoverage(
            f, len(rows), sum(1 for _, c in rows if c.count), sum(len(c.branches) for _, c in rows),
            sum(1 for _, c in rows for b in c.branches if b),
            tuple(n for n, c in rows if not c.count),
            tuple(n for n, c in rows if any(b == 0 for b in c.branches))))
    return out


def render(line: str, kind: str, tree: pathlib.Path, fc: list[FuncCoverage],
           sites: list[CallSite], unrun: dict[str, str] | None = None) -> tuple[str, int]:
    """The report, and how many never-run lines and call sites no reason
    in UNRUN ("FUNCTION: code" -> why) explains."""
    reasons = unrun or {}
    src: dict[str, list[str]] = {}

    def text(file: str, n: int) -> str:
        if file not in src:
            src[file] = (tree / file).read_text(errors="replace").splitlines()
        return src[file][n - 1].strip() if n <= len(src[file]) else ""

    unexplained = 0

    def why(func: str, code: str) -> str:
        nonlocal unexplained
        if not (reason := reasons.get(f"{func}: {code}", "")):
            unexplained += 1
        return reason or "**not explained**"

    out = [f"# Coverage of the mechanisms, line {line}, kind {kind}", "",
           "Counts after one boot with every test (gcov, summed over the units that "
           "include a line). Functions: those holding a line the series adds or changes; "
           "call sites: every line under kernel/sched/ that calls one of them. Each line "
           "or call site that never ran gives its reason (sfp.toml coverage_unrun).", "",
           "| function | file | lines run | branches taken |", "|---|---|---|---|"]
    out += [f"| `{c.func.name}()` | {c.func.file}:{c.func.start} | "
            f"{c.lines_run}/{c.lines} | {c.branches_taken}/{c.branches} |" for c in fc]
    out += ["", "## Call sites", "", "| callee | caller | where | count | why not run |",
            "|---|---|---|---|---|"]
    out += [f"| `{s.callee}()` | `{s.caller}()` | {s.file}:{s.line} | "
            f"{'compiled out' if s.count is None else s.count} | "
            f"{why(s.caller, s.text) if not s.count else ''} |" for s in sites]
    never = [(c, n) for c in fc for n in c.never_run]
    out += ["", "## Lines of those functions never run", ""]
    out += [f"- {c.func.file}:{n} (`{c.func.name}`): `{text(c.func.file, n)}`: "
            f"{why(c.func.name, text(c.func.file, n))}" for c, n in never] or ["(none)"]
    br = [(c, n) for c in fc for n in c.branch_lines]
    out += ["", "## Lines with a branch never taken", "",
            "(Listed, not judged: a line's branches include those of the calls and macros "
            "inlined there.)", ""]
    out += [f"- {c.func.file}:{n} (`{c.func.name}`): `{text(c.func.file, n)}`"
            for c, n in br] or ["(none)"]
    out += ["", f"Never run and not explained: {unexplained}."]
    return "\n".join(out) + "\n", unexplained


def as_json(fc: list[FuncCoverage], sites: list[CallSite]) -> str:
    return json.dumps({
        "functions": [{"name": c.func.name, "file": c.func.file, "start": c.func.start,
                       "lines": c.lines, "lines_run": c.lines_run, "branches": c.branches,
                       "branches_taken": c.branches_taken, "never_run": list(c.never_run)}
                      for c in fc],
        "call_sites": [dataclasses.asdict(s) for s in sites]}, indent=1) + "\n"


def report(line: str, kind: str, tree: pathlib.Path, obj: pathlib.Path,
           logdir: pathlib.Path, out: pathlib.Path, say: Callable[[str], None],
           unrun: dict[str, str] | None = None) -> int:
    """From a coverage boot's logs and build: OUT/KIND.md and .json; the
    number of never-run lines and call sites that UNRUN does not explain."""
    guest = logdir / "guest.log"
    if not guest.is_file():
        raise CoverageError(f"{guest} not found: boot the {kind} kernel first")
    gcdas = unpack(gcda_archive(guest.read_text(errors="replace")), obj, out / f"{kind}-gcda")
    counts = gcov_json(gcdas)
    with sfp_errors.raised_as(CoverageError, sfp_mutgen.MutgenError):
        mech, sites = mechanism(tree)
    fc = function_coverage(mech, counts)
    sites = counted(sites, counts)
    md = out / f"{kind}.md"
    text, unexplained = render(line, kind, tree, fc, sites, unrun)
    md.write_text(text)
    (out / f"{kind}.json").write_text(as_json(fc, sites))
    say(f"{kind}: {len(fc)} functions, {sum(c.lines_run for c in fc)}/{sum(c.lines for c in fc)} "
        f"lines, {len(sites)} call sites ({sum(1 for s in sites if s.count)} run), {unexplained} "
        f"never run and not explained: {md}")
    return unexplained
