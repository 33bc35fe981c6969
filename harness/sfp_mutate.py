# SPDX-License-Identifier: GPL-2.0
"""make mutate's verdicts and table, computed from the boots' Results.

A variant is the control ('patched'), 'baseline' or a mutant of
tests/mutants/LINE/. Each was booted BOOTS times; boot B's logs are in
OUT/NAME/B. The rules (docs/tests.md, "Mutants"):
  - the control must pass every case in every boot;
  - a mutant (and baseline) is caught in a boot when every case on its
    expect: line failed there ('any': some case failed); an expected case
    that skipped for an unmet precondition gives that boot no verdict;
  - a case of the control catches a variant when it failed in every boot
    of it; a case that catches none needs a reason (sfp.toml no_catcher).
"""
from __future__ import annotations

import dataclasses
import pathlib

from sfp_data import Data
from sfp_results import Result, read


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    what: str
    expect: str  # '' for the control, 'any', or the case names, space-separated


@dataclasses.dataclass
class Verdict:
    variant: Variant
    verdict: str
    failed_col: str
    messages: list[str]
    cases: list[str] | None  # the control's cases, in the order of its last boot
    catches: list[str]  # the cases that failed in every boot (for a mutant)

    @property
    def ok(self) -> bool:
        return self.verdict.startswith(("caught", "clean"))


def variant(data: Data, line: str, name: str) -> Variant:
    if name == "patched":
        return Variant(name, "nothing (control)", "")
    if name == "baseline":
        # As the table has always shown it: the cases, each followed by a space.
        return Variant(name, "both feature patches (baseline + the kselftests)",
                       "".join(c + " " for c in data.baseline_fails))
    path = data.root / "tests" / "mutants" / line / f"{name}.patch"
    head = path.read_text(encoding="utf-8").splitlines()[:2]
    what = head[0].removeprefix("mutant: ") if head and head[0].startswith("mutant: ") else ""
    expect = head[1].removeprefix("expect: ") if len(head) > 1 and head[1].startswith("expect: ") else ""
    return Variant(name, what, expect)


def judge(v: Variant, boots: int, results: list[Result | None], out: pathlib.Path,
          run_rc: int = 0) -> Verdict:
    """The verdict of one variant over its boots (None: no results)."""
    nfail: dict[str, int] = {}
    caught = passed = unmet = 0
    noresult = ""
    unmet_cases: list[str] = []
    cases: list[str] | None = None
    msgs = []
    for b in range(1, boots + 1):
        res = results[b - 1] if b - 1 < len(results) else None
        if res is None or not res.cases:
            noresult = (f"NO RESULT in boot {b} (build or boot failed, exit {run_rc}: see "
                        f"{out}/{v.name}.repeat and {out}/{v.name}/{b}.out)")
            msgs.append(f"{v.name} boot {b}: no result")
            break
        if v.name == "patched":
            cases = [c.name for c in res.cases]
        failed = sorted(res.failed)
        for f in failed:
            nfail[f] = nfail.get(f, 0) + 1
        if not failed:
            passed += 1
        skipped = set(res.precondition_skips)
        every, skip = True, []
        if v.expect == "any":
            every = bool(failed)
        else:
            for e in v.expect.split():
                if e in failed:
                    continue
                if e in skipped:
                    skip.append(e)
                else:
                    every = False
        if every and skip:
            unmet += 1
            unmet_cases += skip
            msgs.append(f"{v.name} boot {b}: no verdict: the precondition of "
                        f"{' '.join(skip)} was not met")
        elif every:
            caught += 1
        msgs.append(f"{v.name} boot {b}: failed: {''.join(f + '; ' for f in failed) or '; '}")
    col, catches = "", []
    for f in sorted(nfail):
        if nfail[f] == boots:
            col += f"{f}; "
            if v.expect:
                catches.append(f)
        else:
            col += f"{f} ({nfail[f]}/{boots}); "
    if noresult:
        verdict = noresult
    elif not v.expect:
        verdict = (f"clean in {boots}/{boots} boots" if passed == boots
                   else f"CONTROL FAILED in {boots - passed}/{boots} boots")
    elif caught == boots:
        verdict = f"caught {boots}/{boots}"
    elif caught > 0 and caught + unmet == boots:
        which = " ".join(sorted(set(unmet_cases)))
        verdict = (f"caught {caught}/{caught} with a verdict (precondition unmet in "
                   f"{unmet}/{boots} boots: {which})")
    elif unmet == boots:
        verdict = "NO VERDICT: a precondition unmet in every boot"
    else:
        verdict = f"MISSED in {boots - caught}/{boots} boots"
    msgs.append(f"{v.name}: {verdict}; failed: {col or 'none'}")
    return Verdict(v, verdict, col, msgs, cases, catches)


def judge_from_logs(data: Data, line: str, name: str, boots: int, out: pathlib.Path,
                    run_rc: int = 0) -> Verdict:
    results = [read(out / name / str(b)) for b in range(1, boots + 1)]
    return judge(variant(data, line, name), boots, results, out, run_rc)


def table(data: Data, line: str, verdicts: list[Verdict], made_by: str) -> tuple[str, bool, bool]:
    """The table (markdown), whether every verdict is in order, and whether a
    case of the control has neither a catcher nor a reason.

    With an explicit list of variants (not the whole set), a case without
    a catcher is shown but not held against the run, as before.
    """
    rows = [f"| {v.variant.name} | {v.variant.what} | {v.variant.expect or 'none'} | "
            f"{v.failed_col or 'none'} | {v.verdict} |" for v in verdicts]
    out = [f"Made by: {made_by}", "",
           "| variant | what | expected to fail | failed (boots, if not all) | verdict |",
           "|---|---|---|---|---|"] + rows
    ok = all(v.ok for v in verdicts)
    cases: list[str] = []
    for v in verdicts:
        if v.cases is not None:
            cases = v.cases
    none_left = False
    if cases:
        reasons = data.no_catcher_reasons(line)
        out += ["", "| test case | caught variants (failed in every boot) |", "|---|---|"]
        for c in cases:
            by = "".join(v.variant.name + " " for v in verdicts if c in v.catches)
            if not by:
                if c in reasons:
                    by = f"none: {reasons[c]}"
                else:
                    by = f"NONE, and no reason in sfp.toml (lines.{line}.no_catcher)"
                    none_left = True
            out.append(f"| {c} | {by} |")
    return "\n".join(out) + "\n", ok, none_left
