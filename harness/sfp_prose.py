# SPDX-License-Identifier: GPL-2.0
"""Counts in prose, checked against the data they count.

Each [[prose]] record of sfp.toml quotes a sentence of a committed file
with its numbers as {counter} fields. The counters are computed here from
the repository: the mutants of a line (tests/mutants/LINE/*.patch), those
its committed mutation table shows caught in every boot, the KUnit cases
a line builds (kunit/fair_kunit.c with the line's header: its #if
SFT_... choices) in all and per suite, and the kselftest cases
(TEST_F) per program, and per run of the cost mode committed under
docs/bench/cost/ its workload windows and those where the plugin's
balanced calls equal schedstat's attempts (its cost.tsv), and per count
run under docs/bench/ whose guests ran the classify phase patched's sums
of it (its results.tsv). A quoted
sentence that is not in its file, or whose number differs from the
count, is reported; so is any "N mutants", "N KUnit cases" or "N of M
windows" in the watched files that no record quotes, so a new count
cannot be written without a check.

The reference docs (README.md, docs/*.md and sfp.toml; not the dated
records of docs/records/) are also read for what they name: every path
of the repository (one starting at one of its top folders; upper-case
words such as LINE stand for any name), every relative link, every
`./sfp SUBCOMMAND` and every `make TARGET` in backquotes must exist.
"""
from __future__ import annotations

import glob
import itertools
import pathlib
import re
import subprocess

from harness import sfp_benchlines, sfp_cost, sfp_patches
from harness.sfp_data import Data

# Phrases that carry a count; in the watched files each must be quoted by
# a [[prose]] record. Not a version's last number ("6.19 mutants").
COUNT_PHRASE = re.compile(r"(?<![\d.])(\d+) (?:(?:KUnit|model|kselftest) )?(?:mutants|cases)\b"
                          r"|(?<![\d.])(\d+) of (\d+) (?:workload )?windows\b")


def _norm(text: str) -> str:
    """Prose wraps anywhere: compare with runs of white space as one space."""
    return re.sub(r"\s+", " ", text)


def kunit_cases(data: Data, line: str) -> dict[str, int]:
    """KUnit cases per suite in LINE's SMP build of both tiers' files; a
    suite that only says it needs SMP has none."""
    hdr = data.root / "kunit" / f"fair_kunit-{data.line(line).kunit_header}.h"
    defs = sfp_patches.header_values(hdr)
    src = (data.root / "kunit" / "fair_kunit.c").read_text() + \
        (data.root / "kunit" / "cert" / "fair_cert_kunit.c").read_text() \
        .split("#else /* !CONFIG_SMP */")[0]
    suites: dict[str, int] = {}
    for m in re.finditer(r"static struct kunit_case (\w+)_cases\[\] = \{(.*?)\n\};", src, re.S):
        n, on = 0, [True]
        for ln in m.group(2).splitlines():
            ln = ln.strip()
            if cond := re.match(r"#if (SFT_[A-Z_]+)$", ln):
                on.append(on[-1] and defs.get(cond.group(1), 0) != 0)
            elif ln == "#endif":
                on.pop()
            elif on[-1] and re.match(r"SFT_CASE\w*\(", ln):
                n += 1
        if n:
            suites[m.group(1)] = n
    return suites


def caught_in_table(data: Data, line: str) -> int:
    """Mutants caught in every boot ('caught N/N') in the line's committed
    table: the first one, the current."""
    text = (data.root / data.line(line).mutation_table).read_text()
    start = text.find("| variant |")
    below = text[start:].splitlines()[2:] if start >= 0 else []
    rows = itertools.takewhile(lambda ln: ln.startswith("|"), below)
    cells = ([c.strip() for c in ln.strip("|").split("|")] for ln in rows)
    return sum(1 for c in cells if c[0] not in ("patched", "baseline")
               and re.match(r"caught (\d+)/\1$", c[-1]))


def cost_windows(data: Data) -> dict[str, tuple[int, int]]:
    """Per run of docs/bench/cost/: its windows (rows of cost.tsv), and
    those whose balanced calls equal schedstat's attempts."""
    out = {}
    for tsv in sorted((data.root / "docs" / "bench" / "cost").glob("*/cost.tsv")):
        rows = sfp_cost.cost_rows(tsv)
        out[tsv.parent.name] = (len(rows), sfp_cost.windows_equal(rows))
    return out


def same_windows(data: Data) -> dict[str, int]:
    """Per ordered pair of runs in docs/bench/{cost,exact}/: the windows both
    have (both_windows:DIR:A:B), and those the same (same_windows:...)."""
    out: dict[str, int] = {}
    for sub in ("cost", "exact"):
        runs = {tsv.parent.name: sfp_cost.windows(sfp_cost.cost_rows(tsv)) for tsv in
                sorted((data.root / "docs" / "bench" / sub).glob("*/cost.tsv"))}
        for (a, wa), (b, wb) in itertools.permutations(runs.items(), 2):
            both, same = sfp_cost.compare(wa, wb)
            out |= {f"both_windows:{sub}:{a}:{b}": both, f"same_windows:{sub}:{a}:{b}": same}
    return out


def classify_sums(data: Data) -> dict[str, int]:
    """Per count run of docs/bench/DIR/RUN/ that ran the classify phase:
    patched's sums as sfp bench-lines tables them (class_rows), as
    classify:DIR:RUN:TOPOLOGY:WORKLOAD:FIELD."""
    out: dict[str, int] = {}
    for tsv in sorted((data.root / "docs" / "bench").glob("*/*/results.tsv")):
        run = tsv.parent
        try:
            rows = sfp_benchlines.class_rows(sfp_benchlines.load(run))
        except sfp_benchlines.RunError:
            continue
        out |= {f"classify:{run.parent.name}:{run.name}:{r.topology}:{r.workload}:{field}": n
                for r in rows for field, n in r.counts.items()}
    return out


def counters(data: Data) -> dict[str, int]:
    """Every {counter} a [[prose]] record can quote, by name."""
    c: dict[str, int] = {}
    for line in data.line_names():
        suites = kunit_cases(data, line)
        c |= {f"mutants:{line}": len(data.mutants(line)), f"caught:{line}":
              caught_in_table(data, line), f"kunit_cases:{line}": sum(suites.values())}
        c |= {f"kunit_suite:{suite}:{line}": n for suite, n in suites.items()}
    for prog in sorted((data.root / "selftests").glob("*.c")):
        c[f"kselftest_cases:{prog.stem}"] = len(re.findall(r"^TEST_F\(", prog.read_text(), re.M))
    runs = cost_windows(data)
    for run, (n, equal) in runs.items():
        c[f"cost_windows:{run}"], c[f"cost_windows_equal:{run}"] = n, equal
    c["cost_windows:all"] = sum(n for n, _ in runs.values())
    c["cost_windows_equal:all"] = sum(e for _, e in runs.values())
    return c | same_windows(data) | classify_sums(data)


def _pattern(says: str) -> tuple[re.Pattern, list[str]]:
    parts = re.split(r"\{([a-z_]+(?::[\w.-]+)*)\}", _norm(says))
    names = parts[1::2]
    rx = "".join(re.escape(p) if i % 2 == 0 else r"(\d+)" for i, p in enumerate(parts))
    return re.compile(rx.replace(r"\ ", " ")), names


def check(data: Data, claims: list[dict] | None = None,
          watched: list[str] | None = None) -> tuple[list[str], int]:
    """The problems found, and how many counts were checked."""
    claims = list(data.prose) if claims is None else claims
    watched = list(data.prose_watch) if watched is None else watched
    have = counters(data)
    problems, checked = [], 0
    quoted: dict[str, list[tuple[int, int]]] = {}
    for cl in claims:
        path, says = cl["file"], cl["says"]
        text = _norm((data.root / path).read_text())
        rx, names = _pattern(says)
        if not (m := rx.search(text)):
            problems.append(f"{path}: the sentence \"{says}\" is not there")
            continue
        quoted.setdefault(path, []).append(m.span())
        for i, name in enumerate(names, 1):
            if name not in have:
                problems.append(f"{path}: unknown counter {{{name}}} (known: "
                                f"{', '.join(sorted(have))})")
                continue
            checked += 1
            if int(m.group(i)) != have[name]:
                problems.append(f"{path}: says {m.group(i)} for {{{name}}}, the data has "
                                f"{have[name]}: \"{m.group(0)}\"")
        for extra in cl.get("equal", []):
            a, b = extra.split("=")
            checked += 1
            if have.get(a) != have.get(b):
                problems.append(f"{path}: \"{m.group(0)}\" needs {{{a}}} = {{{b}}}; the data "
                                f"has {have.get(a)} and {have.get(b)}")
    for path in watched:
        text = _norm((data.root / path).read_text())
        problems += [f"{path}: \"{m.group(0)}\" is a count that no [[prose]] record of "
                     "sfp.toml checks" for m in COUNT_PHRASE.finditer(text)
                     if not any(a <= m.start() < b for a, b in quoted.get(path, []))]
    return problems, checked


# --- paths and commands the reference docs name --------------------------------------

# A path of the repository in prose: it starts at one of its top folders.
_PATH = re.compile(r"(?<![\w./~$-])((?:scripts|harness|kernel-config|kunit|selftests|tests|"
                   r"patches|docs|bench|\.ci)/[\w./*{}<>-]*[\w*}>/])")
_KERNELS = re.compile(r"(kernel|tree)'s `?$")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_SFP = re.compile(r"(?<![\w/])\./sfp ([a-z][a-z0-9-]+)")
_MAKE = re.compile(r"`make ([a-z][a-z0-9-]+)\b")


def reference_docs(data: Data) -> list[str]:
    out = subprocess.run(["git", "-C", str(data.root), "ls-files", "README.md", "docs/*.md",
                          "sfp.toml"], capture_output=True, text=True, check=False).stdout.split()
    return sorted(f for f in out if not f.startswith("docs/records/") and f.count("/") <= 1)


def _exists(root, here, path: str) -> bool:
    pat = re.sub(r"<[^>]*>|\{[^}]*\}|\b[A-Z][A-Z0-9_]*\b", "*", path.rstrip("/"))
    return any(bool(glob.glob(str(base / pat))) if "*" in pat else (base / pat).exists()
               for base in (root, root / here))


def named(data: Data, docs: list[str] | None = None, targets: set[str] | None = None,
          subcommands: set[str] | None = None) -> tuple[list[str], int]:
    """What the reference docs name (paths, links, `./sfp SUBCOMMAND`, `make
    TARGET`) that does not exist; and how many names were checked."""
    root = data.root
    docs = reference_docs(data) if docs is None else docs
    if targets is None:
        targets = set(re.findall(r"^([a-z][a-z0-9-]*)\s*:", (root / "Makefile").read_text(), re.M))
    problems, checked = [], 0
    for doc in docs:
        text = (root / doc).read_text(errors="replace")
        here = pathlib.PurePosixPath(doc).parent
        md = "" if doc == "sfp.toml" else text  # no links or make targets in sfp.toml
        # (what, name), each checked once per doc
        found = [("link", m.group(1)) for m in _LINK.finditer(md)
                 if not re.match(r"[a-z]+:", m.group(1))]
        # A path of the kernel's tree, said as such, or a subject prefix
        # ('selftests/sched: Add ...'), is not ours.
        found += [("path", m.group(1).rstrip(".")) for m in _PATH.finditer(text)
                  if not _KERNELS.search(text[max(0, m.start() - 20):m.start()])
                  and text[m.end():m.end() + 1] != ":"]
        found += [("sfp", m.group(1)) for m in _SFP.finditer(text) if subcommands is not None]
        found += [("make", m.group(1)) for m in _MAKE.finditer(md)]
        for what, name in dict.fromkeys(found):
            checked += 1
            if what == "link" and not (root / here / name).exists():
                problems.append(f"{doc}: links to {name}, which does not exist")
            elif what == "path" and not _exists(root, here, name):
                problems.append(f"{doc}: names {name}, which does not exist")
            elif what == "sfp" and name not in (subcommands or ()):
                problems.append(f"{doc}: names ./sfp {name}, which is no subcommand")
            elif what == "make" and name not in targets:
                problems.append(f"{doc}: names make {name}, which is no target of the Makefile")
    return problems, checked
