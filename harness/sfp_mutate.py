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

import collections
import dataclasses
import pathlib
import re

from harness.sfp_data import Data
from harness.sfp_results import Result, read


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    what: str
    expect: str  # '' for the control, 'any', or the case names, space-separated
    kernel: str = "main"  # 'debug': only the debug kernel (lockdep, KASAN) can see it
    splat: str = ""  # a debug mutant's splat must contain this (its 'splat:' line)


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


def variant(data: Data, line: str, name: str, mutants: pathlib.Path | None = None) -> Variant:
    """NAME's record: the control, baseline, or MUTANTS/NAME.patch
    (default tests/mutants/LINE/)."""
    if name == "patched":
        return Variant(name, "nothing (control)", "")
    if name == "baseline":
        # As the table has always shown it: the cases, each followed by a space.
        return Variant(name, "both feature patches (baseline + the kselftests)",
                       "".join(c + " " for c in data.baseline_fails))
    path = (mutants or data.root / "tests" / "mutants" / line) / f"{name}.patch"
    # The header's lines, in this order: mutant:, expect:, kernel:, splat:
    head = zip(("mutant", "expect", "kernel", "splat"),
               path.read_text(encoding="utf-8").splitlines())
    got = {k: ln.removeprefix(f"{k}: ") for k, ln in head if ln.startswith(f"{k}: ")}
    return Variant(name, got.get("mutant", ""), got.get("expect", ""), got.get("kernel", "main"),
                   got.get("splat", ""))


def expected_failures(expect: list[str],
                      res: Result) -> tuple[list[str], list[str], list[str]]:
    """One boot held against the failures it must give (make mutate's
    variants, make stress's baseline), the one place that rule lives: the
    expected that passed, those skipped for an unmet precondition (no
    verdict), and the failures not expected."""
    failed, skipped, want = set(res.failed), set(res.precondition_skips), set(expect)
    return ([e for e in expect if e not in failed and e not in skipped],
            [e for e in expect if e not in failed and e in skipped],
            [f for f in res.failed if f not in want])


def baseline_expect(data: Data, also: list[str] | tuple[str, ...] = ()) -> list[str]:
    """What a baseline boot that runs the series' kselftests must fail:
    ALSO (a target's own checks), the cases of sfp.toml expect.baseline_fails,
    and the kselftest runner's verdict on each of their programs."""
    progs = sorted({c.split(".", 1)[0] for c in data.baseline_fails})
    return [*also, *data.baseline_fails, *(f"kselftest.selftests: sched: {p}" for p in progs)]


def baseline_verdict(expect: list[str], res: Result) -> tuple[bool, str]:
    """make stress's baseline boot: exactly the expected failures (an unmet
    one is no verdict)."""
    missed, unmet, unexpected = expected_failures(expect, res)

    def items(xs: list[str]) -> str:
        return "".join(x + ";" for x in xs)
    line = (f"baseline: unexpected failures: {items(unexpected) or 'none'}; "
            f"expected failures that passed: {items(missed) or 'none'}")
    if unmet:
        line += f"; no verdict (precondition not met): {items(unmet)}"
    return not missed and not unexpected, line


def judge(v: Variant, boots: int, results: list[Result | None], out: pathlib.Path,
          run_rc: int = 0) -> Verdict:
    """The verdict of one variant over its boots (None: no results)."""
    nfail: collections.Counter[str] = collections.Counter()
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
        nfail.update(failed)
        passed += not failed
        missed, skip, _ = expected_failures([] if v.expect == "any" else v.expect.split(), res)
        every = bool(failed) if v.expect == "any" else not missed
        if every and skip:
            unmet += 1
            unmet_cases += skip
            msgs.append(f"{v.name} boot {b}: no verdict: the precondition of "
                        f"{' '.join(skip)} was not met")
        caught += every and not skip
        msgs.append(f"{v.name} boot {b}: failed: {'; '.join(failed) or 'none'}")
    col = "".join(f"{f}; " if nfail[f] == boots else f"{f} ({nfail[f]}/{boots}); "
                  for f in sorted(nfail))
    catches = [f for f in sorted(nfail) if nfail[f] == boots and v.expect]
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


@dataclasses.dataclass
class DebugVerdict:
    variant: Variant
    boots: int
    verdict: str
    seen: str  # per boot: the first splat, the failed cases, or all passed

    @property
    def ok(self) -> bool:
        """The control must be clean on the debug kernel, and a mutant that
        only it can see must be caught there; for the rest it is a second
        opinion, shown but not required."""
        if not self.variant.expect:
            return self.verdict.startswith("clean")
        return self.variant.kernel != "debug" or self.verdict.startswith("caught")


def judge_debug(v: Variant, results: list[Result | None]) -> DebugVerdict:
    """The verdict of a variant's boots on the debug kernel, where a splat
    (lockdep, KASAN, a WARN: it boots with panic_on_warn) counts as a
    failure as much as a failed case. A mutant with a 'splat:' line is
    caught only by a splat containing that text (the checker its mistake
    trips, e.g. lockdep's lock_unpin_lock); a boot whose only splats are
    others (the debug kernel stopped before the mistake could show) gives
    no verdict."""
    boots = len(results)
    caught = clean = unrelated = 0
    seen = []
    for b, res in enumerate(results, 1):
        splats = res.splats if res else []
        splat = next((x for x in splats if v.splat and v.splat in x), splats[0] if splats else "")
        failed = sorted(res.failed) if res else []
        if not res or (not res.cases and not splat):
            seen.append(f"boot {b}: no result")
            continue
        seen.append(f"boot {b}: " + (splat or ("failed " + "; ".join(failed) if failed
                                              else "all passed")))
        if not v.expect:
            clean += not splat and not failed
        elif v.splat and splat and v.splat not in splat:
            unrelated += 1
            seen[-1] += f" (not '{v.splat}': no verdict)"
        elif splat or (bool(failed) if v.expect == "any"
                       else all(e in failed for e in v.expect.split())):
            caught += 1
    if not v.expect:
        verdict = (f"clean in {boots}/{boots} boots" if clean == boots
                   else f"CONTROL FAILED in {boots - clean}/{boots} boots")
    elif unrelated == boots:
        verdict = f"NO VERDICT: only other splats than '{v.splat}' in every boot"
    elif caught == boots:
        verdict = f"caught {boots}/{boots}"
    elif caught + unrelated == boots:
        verdict = (f"caught {caught}/{caught} with a verdict "
                   f"({unrelated}/{boots} boots stopped by another splat)")
    else:
        verdict = f"MISSED in {boots - caught - unrelated}/{boots} boots"
    return DebugVerdict(v, boots, verdict, " / ".join(seen))


def with_debug(main: Verdict, debug: DebugVerdict | None) -> Verdict:
    """A mutant only the debug kernel can see takes its verdict from there;
    its main-kernel failures stay in the failed column."""
    if main.variant.kernel != "debug" or not main.variant.expect:
        return main
    col = main.failed_col or "none on the main kernel; "
    name = main.variant.name
    if debug is None:
        # Not a miss: the mistake was never shown to a kernel that can see it.
        return dataclasses.replace(
            main, verdict="not judged: only the debug kernel sees it, and none was booted "
            "(--debug-boots 0)", failed_col=col, catches=[], messages=main.messages + [
                f"{name}: not judged: only the debug kernel sees it (sfp mutate --debug-boots N)"])
    verdict = debug.verdict if debug.verdict.startswith("caught") else \
        f"{debug.verdict} on the debug kernel"
    return dataclasses.replace(main, verdict=verdict, failed_col=f"{col}debug kernel: {debug.seen}",
                               catches=[], messages=main.messages + [
                                   f"{name}: debug kernel: {debug.seen}"])


def judge_from_logs(data: Data, line: str, name: str, boots: int, out: pathlib.Path,
                    run_rc: int = 0, mutants: pathlib.Path | None = None) -> Verdict:
    """NAME's verdict from the boots saved in OUT/NAME/1..BOOTS."""
    results: list[Result | None] = [read(out / name / str(b)) for b in range(1, boots + 1)]
    return judge(variant(data, line, name, mutants), boots, results, out, run_rc)


# The tiers, by the source that defines a case: the upstream tier's
# KUnit file, then the certification tier's (both are included into
# fair.c, so a case function sched_fair_test_NAME is defined in one of
# them only, whichever suite lists it); a kselftest program is of the
# certification tier; the guest's own checks (guest_*) are the harness's.
TIER_SOURCES = (("upstream", "kunit/fair_kunit.c"),
                ("certification", "kunit/cert/fair_cert_kunit.c"))
TIER_NAMES = ("upstream", "certification", "guest")


def suite_tiers(root: pathlib.Path) -> dict[str, str]:
    """Suite name, and KUnit case name (its function's name without the
    prefix), -> tier: from the KUnit sources' suite definitions and case
    functions, and the kselftest programs in selftests/."""
    out: dict[str, str] = {}
    for tier, src in TIER_SOURCES:
        text = (root / src).read_text()
        for m in re.finditer(r'^\t\.name = "(\w+)",$', text, re.M):
            out.setdefault(m.group(1), tier)
        for m in re.finditer(r"^static void sched_fair_test_(\w+)\(struct kunit \*test\)$",
                             text, re.M):
            out.setdefault(f"case:{m.group(1)}", tier)
    for prog in sorted((root / "selftests").glob("*.c")):
        out.setdefault(prog.stem, "certification")
    return out


def case_tier(case: str, tiers: dict[str, str]) -> str:
    """The tier of CASE (suite.case): a KUnit case's is the tier of the
    source defining its function, whichever suite it ran in (a case
    moved between tiers keeps its name, and boots saved before the move
    are counted as the sources stand); the runner's own result of a
    kselftest program (kselftest.PROGRAM) is the certification tier's;
    'guest' for what no source defines."""
    suite, _, name = case.partition(".")
    if name.startswith("("):  # a guest run or a test the log ended before: no tier's case
        return "guest"
    if suite == "kselftest":
        return "certification"
    return tiers.get(f"case:{name}", tiers.get(suite, "guest"))


def tier_table(verdicts: list[Verdict], tiers: dict[str, str]) -> list[str]:
    """Which tier's cases catch each mutant (fail in every boot), and the
    counts: what the upstream tier catches alone, and what only the
    certification tier or the guest's checks catch."""
    muts = [v for v in verdicts if v.variant.expect and v.variant.name != "baseline"]
    if not muts:
        return []
    out = ["", "| variant | upstream tier | certification tier | guest checks |",
           "|---|---|---|---|"]
    count = dict.fromkeys(TIER_NAMES, 0)
    only = dict.fromkeys(TIER_NAMES, 0)
    for v in muts:
        by = {case_tier(c, tiers) for c in v.catches}
        for t in by:
            count[t] += 1
            only[t] += len(by) == 1
        out.append(f"| {v.variant.name} | " + " | ".join(
            ", ".join(c for c in v.catches if case_tier(c, tiers) == t) or "-"
            for t in TIER_NAMES) + " |")
    out += ["", f"Of {len(muts)} mutants the upstream tier catches {count['upstream']} "
            f"({only['upstream']} by it alone), the certification tier "
            f"{count['certification']} ({only['certification']} alone), the guest checks "
            f"{count['guest']} ({only['guest']} alone); "
            f"{sum(1 for v in muts if not v.catches)} are caught by no case in every boot."]
    return out


def table(data: Data, line: str, verdicts: list[Verdict], made_by: str,
          debug: list[DebugVerdict] | None = None) -> tuple[str, bool, bool]:
    """The table (markdown), whether every verdict is in order, and whether a
    case of the control has neither a catcher nor a reason.

    With an explicit list of variants (not the whole set), a case without
    a catcher is shown but not held against the run, as before.
    """
    debug = debug or []
    out = [f"Made by: {made_by}", "",
           "| variant | what | expected to fail | failed (boots, if not all) | verdict |",
           "|---|---|---|---|---|"] + [
        f"| {v.variant.name} | {v.variant.what} | {v.variant.expect or 'none'} | "
        f"{v.failed_col or 'none'} | {v.verdict} |" for v in verdicts]
    if debug:  # the debug kernel's rows: a table of their own
        out += ["", "| variant | debug kernel boots | what the debug kernel showed | verdict |",
                "|---|---|---|---|"] + \
            [f"| {d.variant.name} | {d.boots} | {d.seen} | {d.verdict} |" for d in debug]
    ok = all(v.ok for v in verdicts) and all(d.ok for d in debug)
    cases: list[str] = next((v.cases for v in reversed(verdicts) if v.cases is not None), [])
    none_left = False
    tiers = suite_tiers(data.root)
    if cases:
        reasons = data.no_catcher_reasons(line)
        # A KUnit case's name is unique in fair.c: boots saved before it
        # moved to another suite find its reason under the suite it is in.
        by_case = {f"case:{k.partition('.')[2]}": r for k, r in reasons.items()}
        out += ["", "| test case | caught variants (failed in every boot) |", "|---|---|"]
        for c in cases:
            by = "".join(v.variant.name + " " for v in verdicts if c in v.catches)
            kunit = f"case:{c.partition('.')[2]}"
            if not by:
                if c in reasons:
                    by = f"none: {reasons[c]}"
                elif kunit in tiers and kunit in by_case:
                    by = f"none: {by_case[kunit]}"
                else:
                    by = f"NONE, and no reason in sfp.toml (lines.{line}.no_catcher)"
                    none_left = True
            out.append(f"| {c} | {by} |")
    out += tier_table(verdicts, tiers)
    return "\n".join(out) + "\n", ok, none_left


def _md_table(lines: list[str], head: str, need: bool = True) -> tuple[int, int]:
    """The [start, end) lines of the first table whose header starts with
    HEAD, header and separator included; (0, 0) for none unless NEED."""
    for i, ln in enumerate(lines):
        if ln.startswith(head):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            return i, j
    if need:
        raise ValueError(f"no table headed '{head}'")
    return 0, 0


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _merge_rows(old: list[str], new: list[str]) -> list[str]:
    """A variant table's OLD rows with NEW's, replaced or added (the control
    first, mutants in name order, baseline last)."""
    rows = {_cells(r)[0]: r for r in old + new}
    return [rows[n] for n in sorted(rows, key=lambda n: ({"patched": 0, "baseline": 2}.get(n, 1),
                                                          n))]


def merge(committed: str, run: str, run_names: list[str], merged_by: str) -> str:
    """@committed (a line's mutation table page) with this run's rows: a
    variant of the run replaces its row or joins the table, in the
    variant table and in the debug kernel's (which joins the page after
    the variant table if it has none); each test case's catchers lose
    the run's variants and gain those the run saw it catch; a case new in
    the run joins after the case before it there. A 'Rows merged by:'
    line under the page's 'Made by:' says which run."""
    old, new = committed.splitlines(), run.splitlines()
    vs, ve = _md_table(old, "| variant |")
    nvs, nve = _md_table(new, "| variant |")
    vtable = old[vs:vs + 2] + _merge_rows(old[vs + 2:ve], new[nvs + 2:nve])
    rest = old[ve:]
    nds, nde = _md_table(new, "| variant | debug kernel", need=False)
    if nde:
        ds, de = _md_table(rest, "| variant | debug kernel", need=False)
        if de:
            rest[ds + 2:de] = _merge_rows(rest[ds + 2:de], new[nds + 2:nde])
        else:
            rest = [""] + new[nds:nde] + rest
    cs, ce = _md_table(rest, "| test case |")
    # A run without the control lists no cases.
    ncs, nce = _md_table(new, "| test case |", need=False)
    ran = set(run_names)
    catchers: dict[str, tuple[set[str], str]] = {}
    order: list[str] = []
    for r in rest[cs + 2:ce]:
        case, by = _cells(r)[:2]
        reason = by if by.lower().startswith("none") else ""
        catchers[case] = (set() if reason else set(by.split()) - ran, reason)
        order.append(case)
    prev = ""
    for r in new[ncs + 2:nce]:
        case, by = _cells(r)[:2]
        got = set() if by.lower().startswith("none") else set(by.split())
        if case not in catchers:
            catchers[case] = (set(), "")
            order.insert(order.index(prev) + 1 if prev in order else len(order), case)
        have, reason = catchers[case]
        catchers[case] = (have | got, reason or (by if not got else ""))
        prev = case
    ctable = rest[cs:cs + 2]
    for case in order:
        have, reason = catchers[case]
        # Catchers as the table lists them: mutants sorted, baseline last.
        by = "".join(n + " " for n in sorted(have - {"baseline"})) + \
            ("baseline " if "baseline" in have else "")
        ctable.append(f"| {case} | {by if have else reason} |")
    out = old[:vs] + vtable + rest[:cs] + ctable + rest[ce:]
    for i, ln in enumerate(out[:vs]):
        if ln.startswith("Made by:"):
            while out[i + 1].startswith("Rows merged by:"):
                i += 1
            out.insert(i + 1, f"Rows merged by: {merged_by}")
            break
    return "\n".join(out) + "\n"
