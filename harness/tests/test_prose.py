# SPDX-License-Identifier: GPL-2.0
"""sfp prose: counts in prose against the data, and the sweep for
counts that no record checks."""
import pathlib
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_prose


class Counters(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()
        self.c = sfp_prose.counters(self.d)

    def test_mutants_are_the_files(self):
        for line in self.d.line_names():
            self.assertEqual(self.c[f"mutants:{line}"], len(self.d.mutants(line)))

    def test_kunit_cases_follow_the_line_header(self):
        # 6.1 has neither the clear path nor the rate limit: three cases
        # fewer, two of the upstream tier's root and child clear, one of
        # the certification tier's rate limit.
        self.assertEqual(self.c["kunit_cases:6.12"] - self.c["kunit_cases:6.1"], 3)
        self.assertEqual(self.c["kunit_suite:sched_fair_tg_load_avg:6.12"]
                         - self.c["kunit_suite:sched_fair_tg_load_avg:6.1"], 2)
        self.assertEqual(self.c["kunit_suite:sched_fair_certify:6.12"]
                         - self.c["kunit_suite:sched_fair_certify:6.1"], 1)
        self.assertEqual(self.c["kunit_cases:6.12"],
                         sum(v for k, v in self.c.items()
                             if k.startswith("kunit_suite:") and k.endswith(":6.12")))

    def test_cost_windows_are_the_rows(self):
        # Each committed cost run: one row per workload window, and the
        # equal ones at most all of them.
        runs = sfp_prose.cost_windows(self.d)
        self.assertIn("6.12-quiet", runs)
        self.assertEqual(self.c["cost_windows:all"], sum(n for n, _ in runs.values()))
        self.assertEqual(self.c["cost_windows_equal:all"], sum(e for _, e in runs.values()))
        for run, (n, equal) in runs.items():
            tsv = self.d.root / "docs/bench/cost" / run / "cost.tsv"
            self.assertEqual(n, len(tsv.read_text().splitlines()) - 1)
            self.assertLessEqual(equal, n)
            self.assertEqual(self.c[f"cost_windows_equal:{run}"], equal)

    def test_classify_sums_are_patched_repetitions(self):
        # Each counter is patched's rows of results.tsv summed over the
        # repetitions; baseline's classify rows are empty.
        run = self.d.root / "docs/bench/exact/6.12-classify"
        want: dict[str, float] = {}
        for ln in (run / "results.tsv").read_text().splitlines()[1:]:
            kernel, topo, _, _, metric, value = ln.split("\t")
            wl, _, field = metric.partition(".classify.")
            if field in ("balances", "sets") and value:
                self.assertEqual(kernel, "patched")
                key = f"classify:exact:6.12-classify:{topo}:{wl}:{field}"
                want[key] = want.get(key, 0) + float(value)
        self.assertEqual(len(want), 8)
        for key, n in want.items():
            self.assertEqual(self.c[key], n)

    def test_committed_docs_agree(self):
        problems, checked = sfp_prose.check(self.d)
        self.assertEqual(problems, [])
        self.assertGreater(checked, 10)


class Check(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()

    def test_wrong_count_reported(self):
        n = len(self.d.mutants("6.12"))
        claims = [{"file": "docs/tests.md", "says": "`make mutate` builds {mutants:6.1} mutants of 6.12's"}]
        problems, _ = sfp_prose.check(self.d, claims, [])
        self.assertEqual(len(problems), 1)
        self.assertIn(f"says {n} for {{mutants:6.1}}", problems[0])

    def test_missing_sentence_reported(self):
        claims = [{"file": "docs/tests.md", "says": "builds {mutants:6.12} mutants of 7.1's"}]
        problems, _ = sfp_prose.check(self.d, claims, [])
        self.assertIn("is not there", problems[0])

    def test_unequal_counters_reported(self):
        claims = [{"file": "docs/tests.md", "says": "`make mutate` builds {mutants:6.12} mutants",
                   "equal": ["mutants:6.12=mutants:6.1"]}]
        problems, _ = sfp_prose.check(self.d, claims, [])
        self.assertIn("needs {mutants:6.12} = {mutants:6.1}", problems[0])

    def test_unchecked_count_reported(self):
        problems, _ = sfp_prose.check(self.d, [], ["docs/tests.md"])
        self.assertTrue(any("no [[prose]] record" in p for p in problems))

    def test_count_phrases(self):
        found = [m.group(0) for m in sfp_prose.COUNT_PHRASE.finditer(
            "built 6.19 mutants and 7 mutants; 3 KUnit cases; 44 of 48 windows; "
            "90 of 96 workload windows; version 6.1 cases")]
        self.assertEqual(found, ["7 mutants", "3 KUnit cases", "44 of 48 windows",
                                 "90 of 96 workload windows"])

    def test_wrong_cost_window_count_reported(self):
        # the sentence of docs/benchmark.md with one run's count where the
        # sum over the runs is written
        claims = [{"file": "docs/benchmark.md",
                   "says": "(equal in {cost_windows_equal:6.12-quiet} of {cost_windows:all} "
                           "windows, off by 1 to 4"}]
        problems, _ = sfp_prose.check(self.d, claims, [])
        self.assertEqual(len(problems), 1)
        self.assertIn("for {cost_windows_equal:6.12-quiet}", problems[0])


class Named(unittest.TestCase):
    """Every path, link, ./sfp subcommand and make target a reference doc
    names exists."""

    def test_missing_names_are_reported(self):
        import types
        with tempfile.TemporaryDirectory() as t:
            root = pathlib.Path(t)
            (root / "docs" / "records").mkdir(parents=True)
            (root / "scripts").mkdir()
            (root / "scripts" / "setup.sh").write_text("")
            (root / "docs" / "records" / "README.md").write_text("")
            (root / "docs" / "a.md").write_text(
                "Run `scripts/setup.sh`, not `scripts/run.sh`; see [r](records/README.md), "
                "[gone](gone.md), [web](https://example.org/x.md). The kernel's "
                "`scripts/checker-valid.sh`; `selftests/sched: Add x`; "
                "`tests/mutants/LINE/x.patch`. `./sfp run`, `./sfp nosuch`, `make check`, "
                "`make nosuch`; make its count.\n")
            data = types.SimpleNamespace(root=root)
            problems, n = sfp_prose.named(data, ["docs/a.md"], targets={"check"},
                                          subcommands={"run"})
        self.assertEqual(problems, [
            "docs/a.md: links to gone.md, which does not exist",
            "docs/a.md: names scripts/run.sh, which does not exist",
            "docs/a.md: names tests/mutants/LINE/x.patch, which does not exist",
            "docs/a.md: names ./sfp nosuch, which is no subcommand",
            "docs/a.md: names make nosuch, which is no target of the Makefile"])
        self.assertEqual(n, 9)


if __name__ == "__main__":
    unittest.main()
