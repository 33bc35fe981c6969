# SPDX-License-Identifier: GPL-2.0
"""Merge test results into one table and the closing 'N passed, N failed'.

Inputs are JSON files written by the kernel's own parser
(tools/testing/kunit/kunit.py parse --json) and results TSVs (source,
suite, test, status[, note]) for results that have no TAP. Every row can
be written to --out as TSV, so later steps can add to it.
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Iterator

from harness.sfp_results import Case, Result, read_tsv, tsv_row


def walk(group: dict, suite: str) -> Iterator[tuple[str, str, str]]:
    """A kunit.py JSON group flattened into (suite, test, status) rows."""
    name = group.get("name") or suite
    name = suite if name == "KUnit Test Group" else name
    # kunit.py names no test the log ended before: an unfinished one
    yield from ((name, case["name"] or "(unfinished)", case["status"])
                for case in group.get("test_cases", []))
    for sub in group.get("sub_groups", []):
        yield from walk(sub, sub.get("name") or name)


def from_json(source: str, suite: str, path: pathlib.Path) -> list[Case]:
    """The cases of a kunit.py JSON file; one ERROR case if it has none."""
    try:
        found = list(walk(json.loads(path.read_text(encoding="utf-8")), suite))
    except (OSError, ValueError) as e:
        return [Case(source, suite, "(parse)", "ERROR", f"unreadable results: {e}")]
    if not found:
        return [Case(source, suite, "(no tests)", "ERROR", "no test results found")]
    return [Case(source, *r) for r in found]


def apply_no_skips(cases: list[Case], timing: set[str]) -> list[Case]:
    """A skip on a guest that should meet every prerequisite is a failure,
    except for a case whose precondition could not be set up in time."""
    out = []
    for c in cases:
        if c.status == "SKIP" and (c.test or "(unnamed)") in timing:
            c = dataclasses.replace(c, note="precondition not met in time: not a result")
        elif c.status == "SKIP":
            c = dataclasses.replace(c, status="FAIL",
                                    note="skipped, but this guest should meet every prerequisite")
        out.append(c)
    return out


def render(title: str, cases: list[Case]) -> tuple[str, dict[str, int]]:
    """The table of CASES under TITLE, ending in the counts; the counts."""
    width = max([len(c.name) for c in cases] + [20])
    out = [f"\n{title}", f"  {'source':13} {'suite.test':{width}} result"]
    for c in cases:
        extra = f"  ({c.note})" if c.note else ""
        out.append(f"  {c.source:13} {c.name:{width}} "
                   f"{'FAIL' if c.failed else c.status.lower()}{extra}")
    counts = Result("", cases).counts()
    out += [f"{counts['SKIP']} skipped", f"{counts['PASS']} passed, {counts['FAIL']} failed"]
    return "\n".join(out), counts


def summarize(title: str, json_inputs: list[tuple[str, str, str]], tsvs: list[str],
              out: str | None, no_skips: bool, precondition_skips: str | None) -> int:
    cases: list[Case] = []
    for source, suite, path in json_inputs:
        cases += from_json(source, suite, pathlib.Path(path))
    for path in tsvs:
        if not pathlib.Path(path).exists():
            raise FileNotFoundError(f"no results file {path}")
        cases += read_tsv(pathlib.Path(path))
    if no_skips:
        lines = pathlib.Path(precondition_skips).read_text(encoding="utf-8").splitlines() \
            if precondition_skips else []
        cases = apply_no_skips(cases, {ln.strip() for ln in lines if ln.strip()})
    text, counts = render(title, cases)
    print(text)
    if out:
        pathlib.Path(out).write_text("".join(map(tsv_row, cases)), encoding="utf-8")
    return 1 if counts["FAIL"] or not cases else 0
