# SPDX-License-Identifier: GPL-2.0
"""Merge test results into one table and the closing 'N passed, N failed'.

Inputs are JSON files written by the kernel's own parser
(tools/testing/kunit/kunit.py parse --json) and results TSVs (source,
suite, test, status[, note]) for results that have no TAP. Every row can
be written to --out as TSV, so later steps can add to it.
"""
from __future__ import annotations

import json
import pathlib

from harness.sfp_results import Case, read_tsv


def walk(group: dict, suite: str, rows: list[tuple[str, str, str]]) -> None:
    """Flatten a kunit.py JSON group into (suite, test, status) rows."""
    name = group.get("name") or suite
    if name == "KUnit Test Group":
        name = suite
    for case in group.get("test_cases", []):
        rows.append((name, case["name"], case["status"]))
    for sub in group.get("sub_groups", []):
        walk(sub, sub.get("name") or name, rows)


def from_json(source: str, suite: str, path: pathlib.Path) -> list[Case]:
    found: list[tuple[str, str, str]] = []
    try:
        with open(path, encoding="utf-8") as f:
            walk(json.load(f), suite, found)
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
        if c.status != "SKIP":
            out.append(c)
        elif (c.test or "(unnamed)") in timing:
            out.append(Case(c.source, c.suite, c.test, c.status,
                            "precondition not met in time: not a result"))
        else:
            out.append(Case(c.source, c.suite, c.test, "FAIL",
                            "skipped, but this guest should meet every prerequisite"))
    return out


def render(title: str, cases: list[Case]) -> tuple[str, dict[str, int]]:
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    width = max([len(c.name) for c in cases] + [20])
    out = [f"\n{title}", f"  {'source':13} {'suite.test':{width}} result"]
    for c in cases:
        shown = {"PASS": "pass", "SKIP": "skip"}.get(c.status, "FAIL")
        counts[{"pass": "PASS", "skip": "SKIP"}.get(shown, "FAIL")] += 1
        extra = f"  ({c.note})" if c.note else ""
        out.append(f"  {c.source:13} {c.name:{width}} {shown}{extra}")
    out.append(f"{counts['SKIP']} skipped")
    out.append(f"{counts['PASS']} passed, {counts['FAIL']} failed")
    return "\n".join(out), counts


def summarize(title: str, json_inputs: list[tuple[str, str, str]], tsvs: list[str],
              out: str | None, no_skips: bool, precondition_skips: str | None) -> int:
    cases: list[Case] = []
    for source, suite, path in json_inputs:
        cases += from_json(source, suite, pathlib.Path(path))
    for path in tsvs:
        p = pathlib.Path(path)
        if not p.exists():
            raise FileNotFoundError(f"no results file {path}")
        cases += read_tsv(p)
    if no_skips:
        timing: set[str] = set()
        if precondition_skips:
            timing = {ln.strip() for ln in pathlib.Path(precondition_skips).read_text(
                encoding="utf-8").splitlines() if ln.strip()}
        cases = apply_no_skips(cases, timing)
    text, counts = render(title, cases)
    print(text)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            for c in cases:
                f.write("\t".join((c.source, c.suite, c.test, c.status, c.note)) + "\n")
    return 1 if counts["FAIL"] or not cases else 0
