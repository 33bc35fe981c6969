# SPDX-License-Identifier: GPL-2.0
"""make mutate's verdicts and table from saved boots.

fixtures/mutate-table-6.12.md is what the bash mutate.sh (before the
port to sfp) printed with --from-logs for the boots that
make_mutate_fixture.py writes: one variant per branch of the rules. The
Python port must print the same table from the same boots.
"""
import dataclasses
import pathlib
import shutil
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent

from harness.tests import make_mutate_fixture
from harness import sfp_data
from harness import sfp_mutate
from harness.sfp_results import Case, Result


class FromLogs(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        make_mutate_fixture.main(self.tmp)
        self.out = self.tmp / "mutate"
        # The fixture's boots are of the kselftests as the bash script
        # saw them: baseline had to fail these four.
        self.data = dataclasses.replace(sfp_data.load(), baseline_fails=(
            "sched_fastpath_root_tg.root_tg.root_group_load_avg_untouched",
            "sched_fastpath_root_tg.root_tg.cpu_offline_online",
            "sched_fastpath_newidle.newidle.light_load_skips_balance",
            "sched_fastpath_newidle.partition.overload_elsewhere_keeps_skipping"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_table_identical_to_the_bash_script(self):
        names = list(make_mutate_fixture.VARIANTS)
        verdicts = [sfp_mutate.judge_from_logs(self.data, "6.12", n, 3, self.out) for n in names]
        text, ok, none_left = sfp_mutate.table(
            self.data, "6.12", verdicts, "sfp mutate -k 3 --from-logs " + " ".join(names))
        want = (HERE / "fixtures" / "mutate-table-6.12.md").read_text()
        self.assertEqual(text, want.replace("@OUT@", str(self.out)))
        self.assertFalse(ok)
        self.assertTrue(none_left)

    def test_verdicts(self):
        got = {n: sfp_mutate.judge_from_logs(self.data, "6.12", n, 3, self.out).verdict
               for n in make_mutate_fixture.VARIANTS}
        self.assertEqual(got["patched"], "clean in 3/3 boots")
        self.assertEqual(got["add-and-to-or"], "caught 3/3")
        self.assertTrue(got["add-nr-bound-minus1"].startswith("caught 2/2 with a verdict"))
        self.assertEqual(got["add-nr-dropped"], "MISSED in 2/3 boots")
        self.assertEqual(got["blind-newidle-gate-and"], "caught 3/3")
        self.assertTrue(got["blind-tg-parent-root"].startswith("NO RESULT in boot 2"))
        self.assertEqual(got["baseline"], "caught 3/3")


def res(*cases):
    return Result(logdir="x", cases=[Case("kunit", "s", c, st, note) for c, st, note in cases])


class FromLogsWithoutTree(unittest.TestCase):
    """--from-logs reads saved boots only: no prepared work tree needed,
    and a missing boots directory is refused, not taken as no boots."""

    def test_saved_boots_without_a_work_tree(self):
        import os
        import subprocess
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        make_mutate_fixture.main(tmp / "6.12")
        env = {k: v for k, v in os.environ.items() if k != "KSRC"} | {"LINE": "6.12"}
        sfp = str(HERE.parent.parent / "sfp")
        for build, rc, said in ((tmp, 1, "add-nr-eq-2"), (tmp / "none", 2, "no saved boots")):
            p = subprocess.run([sfp, "mutate", "-k", "3", "--from-logs", "patched", "add-nr-eq-2"],
                               env=env | {"BUILD": str(build)}, capture_output=True, text=True)
            self.assertEqual(p.returncode, rc, p.stderr)
            self.assertIn(said, p.stdout + p.stderr)
        self.assertTrue((tmp / "6.12" / "mutate" / "table.md").is_file())


class Tiers(unittest.TestCase):
    """A case's tier is the source that defines its function."""

    def setUp(self):
        self.tiers = sfp_mutate.suite_tiers(HERE.parent.parent)

    def test_by_suite(self):
        self.assertEqual(sfp_mutate.case_tier("sched_fair_overload_set.set_on_second_task",
                                              self.tiers), "upstream")
        self.assertEqual(sfp_mutate.case_tier("sched_fair_model.model_set_side", self.tiers),
                         "certification")
        self.assertEqual(sfp_mutate.case_tier(
            "sched_fastpath_newidle.newidle.light_load_skips_balance", self.tiers),
            "certification")
        self.assertEqual(sfp_mutate.case_tier("kselftest.selftests: sched: x", self.tiers),
                         "certification")
        self.assertEqual(sfp_mutate.case_tier("guest_state.no_cgroups_left", self.tiers), "guest")
        # a suite's test its log ended before, or the guest run itself, is no tier's case
        self.assertEqual(sfp_mutate.case_tier("sched_fair_overload_set.(unfinished)", self.tiers),
                         "guest")
        self.assertEqual(sfp_mutate.case_tier("boot.(guest run)", self.tiers), "guest")

    def test_a_moved_case_counts_where_it_is_defined(self):
        # Saved boots from before sub_never_clears moved to the
        # certification tier name it under the upstream suite.
        for suite in ("sched_fair_overload_set", "sched_fair_certify"):
            self.assertEqual(sfp_mutate.case_tier(f"{suite}.sub_never_clears", self.tiers),
                             "certification")


class Rules(unittest.TestCase):
    v = sfp_mutate.Variant("m", "a mutant", "s.a s.b")

    def test_control_fails_on_any_failure(self):
        ctl = sfp_mutate.Variant("patched", "nothing (control)", "")
        r = sfp_mutate.judge(ctl, 2, [res(("a", "PASS", "")), res(("a", "ERROR", ""))],
                             pathlib.Path("/o"))
        self.assertEqual(r.verdict, "CONTROL FAILED in 1/2 boots")

    def test_every_expected_case_must_fail(self):
        r = sfp_mutate.judge(self.v, 1, [res(("a", "FAIL", ""), ("b", "PASS", ""))],
                             pathlib.Path("/o"))
        self.assertEqual(r.verdict, "MISSED in 1/1 boots")

    def test_plain_skip_is_not_a_failure_nor_no_verdict(self):
        r = sfp_mutate.judge(self.v, 1, [res(("a", "FAIL", ""), ("b", "SKIP", "not built"))],
                             pathlib.Path("/o"))
        self.assertEqual(r.verdict, "MISSED in 1/1 boots")

    def test_precondition_skip_everywhere_is_no_verdict(self):
        r = sfp_mutate.judge(self.v, 2, [res(("a", "FAIL", ""), ("b", "SKIP", "precondition: x"))] * 2,
                             pathlib.Path("/o"))
        self.assertEqual(r.verdict, "NO VERDICT: a precondition unmet in every boot")

    def test_any_needs_a_failure_in_every_boot(self):
        anyv = sfp_mutate.Variant("blind-x", "blind", "any")
        r = sfp_mutate.judge(anyv, 2, [res(("a", "FAIL", "")), res(("a", "PASS", ""))],
                             pathlib.Path("/o"))
        self.assertEqual(r.verdict, "MISSED in 1/2 boots")

    def test_catches_only_cases_failing_in_every_boot(self):
        r = sfp_mutate.judge(self.v, 2, [res(("a", "FAIL", ""), ("b", "FAIL", ""), ("c", "FAIL", "")),
                                         res(("a", "FAIL", ""), ("b", "FAIL", ""))],
                             pathlib.Path("/o"))
        self.assertEqual(r.catches, ["s.a", "s.b"])
        self.assertEqual(r.failed_col, "s.a; s.b; s.c (1/2); ")

    def test_a_name_failed_twice_in_a_boot_counts_once(self):
        # kunit.py's unfinished tests of a log cut short share one name
        r = sfp_mutate.judge(self.v, 1, [res(("a", "FAIL", ""), ("(unfinished)", "ERROR", ""),
                                             ("(unfinished)", "ERROR", ""))], pathlib.Path("/o"))
        self.assertEqual(r.failed_col, "s.(unfinished); s.a; ")


class Debug(unittest.TestCase):
    """The debug kernel's verdicts: a splat counts as a failure."""

    def res(self, splat="", *cases):
        r = Result(logdir="/o", cases=[Case("kunit", c[0], c[1], c[2]) for c in cases])
        r.splats = [splat] if splat else []
        return r

    def test_splat_catches_a_debug_only_mutant(self):
        v = sfp_mutate.Variant("no-pin", "drops a pin", "any", "debug")
        d = sfp_mutate.judge_debug(v, [self.res("WARNING: unpinning an unpinned lock",
                                                ("s", "a", "PASS"))])
        self.assertEqual(d.verdict, "caught 1/1")
        self.assertTrue(d.ok)
        main = sfp_mutate.judge(v, 1, [self.res("", ("s", "a", "PASS"))], pathlib.Path("/o"))
        self.assertTrue(main.verdict.startswith("MISSED"))
        both = sfp_mutate.with_debug(main, d)
        self.assertEqual(both.verdict, "caught 1/1")
        self.assertIn("debug kernel: boot 1: WARNING: unpinning", both.failed_col)

    def test_debug_only_mutant_missed_there_is_not_ok(self):
        v = sfp_mutate.Variant("no-pin", "drops a pin", "any", "debug")
        d = sfp_mutate.judge_debug(v, [self.res("", ("s", "a", "PASS"))])
        self.assertEqual(d.verdict, "MISSED in 1/1 boots")
        self.assertFalse(d.ok)

    def test_debug_only_mutant_without_debug_boots_is_not_judged(self):
        # Booted on the main kernel only (--debug-boots 0): not a miss, and not ok.
        v = sfp_mutate.Variant("no-pin", "drops a pin", "any", "debug")
        main = sfp_mutate.judge(v, 5, [self.res("", ("s", "a", "PASS"))] * 5, pathlib.Path("/o"))
        got = sfp_mutate.with_debug(main, None)
        self.assertTrue(got.verdict.startswith("not judged: only the debug kernel"), got.verdict)
        self.assertFalse(got.ok)
        self.assertEqual(got.catches, [])
        plain = sfp_mutate.Variant("m", "a main-kernel mutant", "any")
        main = sfp_mutate.judge(plain, 1, [self.res("", ("s", "a", "FAIL"))], pathlib.Path("/o"))
        self.assertIs(sfp_mutate.with_debug(main, None), main)

    def test_named_splat_is_required(self):
        """A 'splat:' mutant is caught by its checker's splat only; a boot
        stopped by another splat first (6.19's debug kernel once died of a
        KASAN report in identify_cpu(), before the scheduler ran) gives
        no verdict, and not a catch."""
        v = sfp_mutate.Variant("no-pin", "drops a pin", "any", "debug", "lock_unpin_lock")
        hit = self.res("WARNING: CPU: 0 PID: 14 at lock_unpin_lock+0x1c3/0x1f0", ("s", "a", "PASS"))
        other = self.res("BUG: KASAN: wild-memory-access in rcu_is_watching+0x1c/0x40")
        none = self.res("", ("s", "a", "PASS"))
        self.assertEqual(sfp_mutate.judge_debug(v, [hit, hit]).verdict, "caught 2/2")
        d = sfp_mutate.judge_debug(v, [other])
        self.assertTrue(d.verdict.startswith("NO VERDICT"))
        self.assertFalse(d.ok)
        self.assertIn("no verdict", d.seen)
        d = sfp_mutate.judge_debug(v, [other, hit])
        self.assertEqual(d.verdict, "caught 1/1 with a verdict (1/2 boots stopped by another splat)")
        self.assertTrue(d.ok)
        d = sfp_mutate.judge_debug(v, [hit, none])
        self.assertEqual(d.verdict, "MISSED in 1/2 boots")
        self.assertFalse(d.ok)
        # the named splat found among several
        both = self.res("", ("s", "a", "PASS"))
        both.splats = ["BUG: KASAN: x", "WARNING: at lock_unpin_lock+0x1"]
        self.assertEqual(sfp_mutate.judge_debug(v, [both]).verdict, "caught 1/1")

    def test_splat_line_is_read(self):
        d = sfp_data.load()
        lines = [p.parent.name for p in (d.root / "tests" / "mutants").glob("*/exit-no-repin.patch")]
        self.assertTrue({"6.1", "6.12"} <= set(lines), lines)
        for line in lines:
            v = sfp_mutate.variant(d, line, "exit-no-repin")
            self.assertEqual((v.kernel, v.splat), ("debug", "lock_unpin_lock"))

    def test_control_with_a_splat_fails(self):
        v = sfp_mutate.Variant("patched", "nothing (control)", "")
        d = sfp_mutate.judge_debug(v, [self.res("BUG: KASAN: slab-out-of-bounds",
                                                ("s", "a", "PASS"))])
        self.assertTrue(d.verdict.startswith("CONTROL FAILED"))
        self.assertFalse(d.ok)
        self.assertTrue(sfp_mutate.judge_debug(v, [self.res("", ("s", "a", "PASS"))]).ok)

    def test_no_result_is_not_a_catch(self):
        v = sfp_mutate.Variant("m", "m", "s.a")
        d = sfp_mutate.judge_debug(v, [None, self.res("")])
        self.assertEqual(d.verdict, "MISSED in 2/2 boots")
        self.assertEqual(d.seen, "boot 1: no result / boot 2: no result")
        self.assertTrue(d.ok)  # a main-kernel mutant: the debug column is a second opinion


COMMITTED = """# Mutation table

Made by: an old run

| variant | what | expected to fail | failed (boots, if not all) | verdict |
|---|---|---|---|---|
| patched | nothing (control) | none | none | clean in 5/5 boots |
| m-a | a | s.a | s.a;  | caught 5/5 |
| m-c | c | s.b | s.b;  | caught 5/5 |
| baseline | both | s.k  | s.k;  | caught 5/5 |

| test case | caught variants (failed in every boot) |
|---|---|
| s.a | m-a  |
| s.b | m-c baseline  |
| s.z | none: nothing can fail it |

## Earlier runs
"""

RUN = """Made by: sfp mutate -k 5 patched m-b m-c

| variant | what | expected to fail | failed (boots, if not all) | verdict |
|---|---|---|---|---|
| patched | nothing (control) | none | none | clean in 5/5 boots |
| m-b | b | s.n | s.n;  | caught 5/5 |
| m-c | c | s.b | s.a; s.b;  | caught 5/5 |

| test case | caught variants (failed in every boot) |
|---|---|
| s.a | m-c  |
| s.n | m-b  |
| s.b | m-c  |
| s.z | none: nothing can fail it |
"""


class Merge(unittest.TestCase):
    """sfp mutate --into: a partial run's rows merged into a committed page."""

    def setUp(self):
        self.out = sfp_mutate.merge(COMMITTED, RUN, ["patched", "m-b", "m-c"], "the run --into t.md")

    def test_variant_rows_replaced_and_added_in_order(self):
        rows = [ln.split("|")[1].strip() for ln in self.out.splitlines()
                if ln.startswith("| ") and "caught 5/5" in ln or "clean in" in ln]
        self.assertEqual(rows, ["patched", "m-a", "m-b", "m-c", "baseline"])
        self.assertIn("| m-c | c | s.b | s.a; s.b;  | caught 5/5 |", self.out)

    def test_catchers_updated_and_new_case_placed(self):
        self.assertIn("| s.a | m-a m-c  |\n| s.n | m-b  |\n| s.b | m-c baseline  |\n"
                      "| s.z | none: nothing can fail it |\n", self.out)

    def test_a_run_without_the_control_keeps_the_cases(self):
        run = RUN.split("\n\n| test case |")[0].replace(
            "| patched | nothing (control) | none | none | clean in 5/5 boots |\n", "")
        out = sfp_mutate.merge(COMMITTED, run + "\n", ["m-b", "m-c"], "x")
        self.assertIn("| m-b | b | s.n | s.n;  | caught 5/5 |", out)
        self.assertIn("| s.a | m-a  |\n| s.b | baseline  |\n| s.z | none: nothing can fail it |", out)

    def test_rest_of_the_page_kept_and_merge_noted(self):
        self.assertIn("Made by: an old run\nRows merged by: the run --into t.md\n", self.out)
        self.assertTrue(self.out.endswith("## Earlier runs\n"))


if __name__ == "__main__":
    unittest.main()


class StressBaseline(unittest.TestCase):
    """make stress's baseline boot: exactly the expected failures, with
    the same rule for an unmet precondition as make mutate's."""

    def setUp(self):
        self.data = sfp_data.load()
        self.expect = sfp_mutate.baseline_expect(self.data, ["stress.x"])

    def boot(self, fail=(), skip=(), extra=()):
        cases = []
        for name in self.expect:
            suite, _, test = name.rpartition(".")
            st, note = ("FAIL", "") if name in fail else \
                ("SKIP", "precondition not met") if name in skip else ("PASS", "")
            cases.append(Case("guest", suite, test, st, note))
        cases += [Case("kunit", "s", e, "FAIL", "") for e in extra]
        return Result(logdir="x", cases=cases)

    def test_expect_names_programs_and_also(self):
        self.assertEqual(self.expect[0], "stress.x")
        self.assertTrue(set(self.data.baseline_fails) <= set(self.expect))
        progs = [e for e in self.expect if e.startswith("kselftest.")]
        self.assertEqual(progs, sorted(progs))
        self.assertIn("kselftest.selftests: sched: sched_fastpath_newidle", progs)

    def test_names_round_trip(self):
        r = self.boot(fail=self.expect)
        self.assertEqual(sorted(r.failed), sorted(self.expect))

    def test_exactly_the_expected(self):
        ok, line = sfp_mutate.baseline_verdict(self.expect, self.boot(fail=self.expect))
        self.assertTrue(ok, line)
        self.assertEqual(line, "baseline: unexpected failures: none; "
                               "expected failures that passed: none")

    def test_one_passed(self):
        ok, line = sfp_mutate.baseline_verdict(self.expect, self.boot(fail=self.expect[1:]))
        self.assertFalse(ok)
        self.assertIn("expected failures that passed: stress.x;", line)

    def test_an_unexpected_failure(self):
        ok, line = sfp_mutate.baseline_verdict(self.expect,
                                               self.boot(fail=self.expect, extra=["boom"]))
        self.assertFalse(ok)
        self.assertIn("unexpected failures: s.boom;", line)

    def test_unmet_precondition_is_no_verdict(self):
        ok, line = sfp_mutate.baseline_verdict(
            self.expect, self.boot(fail=self.expect[1:], skip=self.expect[:1]))
        self.assertTrue(ok, line)
        self.assertTrue(line.endswith("; no verdict (precondition not met): stress.x;"))


class JobSetStopped(unittest.TestCase):
    """Ctrl-C while a LAVA job set still builds: the boots already given
    end (their jobs cancelled) and none starts, rather than the client
    waiting for them at exit."""

    def test_interrupted_build_stops_the_given_boots(self):
        from unittest import mock
        from harness.cli import mutate as cli
        from harness import sfp_repeat
        d = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        built = []

        def build_saved(run, out, env):
            if built:
                raise KeyboardInterrupt
            built.append(out)
            return out / "images", None
        runner = mock.MagicMock()
        with mock.patch.object(sfp_repeat, "build_saved", build_saved), \
                mock.patch.object(sfp_repeat, "JobRunner", return_value=runner), \
                mock.patch.object(cli, "_note", lambda s: None):
            with self.assertRaises(KeyboardInterrupt):
                cli._mutate_job_set(["patched", "m1"], lambda n: cli.sfp_run.RunRequest(),
                                    1, 0, 2, d, {"BOOT_BACKEND": "lava-server"})
        self.assertEqual(runner.start.call_count, 1)
        runner.stop.assert_called_once_with()
        runner.results.assert_not_called()
