#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge test results into one table and the closing 'N passed, N failed'.

Inputs are JSON files written by the kernel's own parser
(tools/testing/kunit/kunit.py parse --json) and TSV rows
(source, suite, test, status[, note]) for results that have no TAP.
Every row is appended to --out as TSV so later steps can add to it.
"""
import argparse
import json
import sys


def walk(group, suite, rows):
    """Flatten a kunit.py JSON group into (suite, test, status) rows."""
    name = group.get("name") or suite
    if name == "KUnit Test Group":
        name = suite
    for case in group.get("test_cases", []):
        rows.append((name, case["name"], case["status"]))
    for sub in group.get("sub_groups", []):
        walk(sub, sub.get("name") or name, rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", nargs=3, action="append", default=[],
                    metavar=("SOURCE", "SUITE", "FILE"),
                    help="kunit.py parse --json output; SUITE names top-level cases")
    ap.add_argument("--tsv", action="append", default=[], metavar="FILE",
                    help="rows: source, suite, test, PASS|FAIL|SKIP|ERROR, note")
    ap.add_argument("--out", metavar="FILE", help="write all rows here as TSV")
    ap.add_argument("--title", default="results")
    ap.add_argument("--no-skips", action="store_true",
                    help="count a skipped test as failed (a guest that should meet "
                         "every prerequisite)")
    ap.add_argument("--precondition-skips", metavar="FILE",
                    help="with --no-skips: tests (one name per line) that skipped "
                         "because a precondition of theirs could not be set up in "
                         "time; they stay skipped")
    args = ap.parse_args()

    rows = []
    for source, suite, path in args.json:
        found = []
        try:
            with open(path, encoding="utf-8") as f:
                walk(json.load(f), suite, found)
        except (OSError, ValueError) as e:
            found = [(suite, "(parse)", "ERROR", f"unreadable results: {e}")]
        if not found:
            found = [(suite, "(no tests)", "ERROR", "no test results found")]
        rows += [(source,) + tuple(r) + (("",) if len(r) == 3 else ()) for r in found]
    for path in args.tsv:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 4:
                    rows.append(tuple(parts[:4]) + ("\t".join(parts[4:]),))

    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    width = max([len(f"{r[1]}.{r[2]}") for r in rows] + [20])
    print(f"\n{args.title}")
    print(f"  {'source':13} {'suite.test':{width}} result")
    timing = set()
    if args.precondition_skips:
        with open(args.precondition_skips, encoding="utf-8") as f:
            timing = {line.strip() for line in f if line.strip()}
    if args.no_skips:
        rows = [(r[:4] + ("precondition not met in time: not a result",)
                 if (r[2] or "(unnamed)") in timing
                 else r[:3] + ("FAIL", "skipped, but this guest should meet every prerequisite"))
                if r[3] == "SKIP" else r for r in rows]
    for source, suite, test, status, note in rows:
        shown = {"PASS": "pass", "SKIP": "skip"}.get(status, "FAIL")
        counts[{"pass": "PASS", "skip": "SKIP"}.get(shown, "FAIL")] += 1
        extra = f"  ({note})" if note else ""
        print(f"  {source:13} {suite + '.' + test:{width}} {shown}{extra}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write("\t".join(r) + "\n")
    print(f"{counts['SKIP']} skipped")
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed")
    return 1 if counts["FAIL"] or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
