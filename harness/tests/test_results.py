# SPDX-License-Identifier: GPL-2.0
"""A boot's Result from its log directory, and the closing summary."""
import contextlib
import io
import pathlib
import shutil
import tempfile
import unittest

from harness import sfp_results
from harness import sfp_summary


class FromLogs(unittest.TestCase):
    def setUp(self):
        self.d = pathlib.Path(tempfile.mkdtemp())
        (self.d / "results.tsv").write_text(
            "kunit\tsched_fair_model\tmodel_set_side\tPASS\t\n"
            "guest\tsched_fastpath_newidle.newidle\tlight_load_skips_balance\tSKIP\t"
            "precondition: the light load could not be set up\n"
            "guest\tguest_state\tno_cgroups_left\tFAIL\tsee log\n"
            "guest\tkselftest\tx\tERROR\t\n")
        (self.d / "stage-times.tsv").write_text("build\t412\nboot\t21\n")
        (self.d / "console.log").write_text(
            "[    1.000] ok 1 x\r\n[    2.500] WARNING: CPU: 1 PID: 7 at kernel/sched/fair.c:1\r\n")
        (self.d / "boot.info").write_text("accel=tcg smp=4 topology=flat mem=512 wall=21s\n")
        (self.d / "qemu.cmd").write_text("qemu-system-x86_64 -accel tcg\n")

    def tearDown(self):
        shutil.rmtree(self.d)

    def test_read(self):
        r = sfp_results.read(self.d)
        self.assertEqual(r.counts(), {"PASS": 1, "FAIL": 2, "SKIP": 1})
        self.assertEqual(r.failed, ["guest_state.no_cgroups_left", "kselftest.x"])
        self.assertEqual(r.precondition_skips,
                         ["sched_fastpath_newidle.newidle.light_load_skips_balance"])
        self.assertEqual(r.stage_times, {"build": 412, "boot": 21})
        self.assertEqual(r.splats, ["WARNING: CPU: 1 PID: 7 at kernel/sched/fair.c:1"])
        self.assertEqual(r.boot["smp"], "4")
        self.assertIn('"counts"', r.to_json())

    def test_missing_logs_are_an_empty_result(self):
        r = sfp_results.read(self.d / "nothing")
        self.assertEqual(r.cases, [])
        self.assertEqual(r.counts(), {"PASS": 0, "FAIL": 0, "SKIP": 0})

    def test_summary_no_skips(self):
        timing = self.d / "timing"
        timing.write_text("light_load_skips_balance\n")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = sfp_summary.summarize("t", [], [str(self.d / "results.tsv")],
                                       str(self.d / "all.tsv"), True, str(timing))
        self.assertEqual(rc, 1)
        self.assertTrue(out.getvalue().endswith("1 skipped\n1 passed, 2 failed\n"))
        rows = (self.d / "all.tsv").read_text().splitlines()
        self.assertIn("precondition not met in time", rows[1])

    def test_summary_skip_without_precondition_fails(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sfp_summary.summarize("t", [], [str(self.d / "results.tsv")], None, True, None)
        self.assertIn("0 skipped\n1 passed, 3 failed", out.getvalue())

    def test_summary_of_nothing_fails(self):
        empty = self.d / "empty.tsv"
        empty.write_text("")
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(sfp_summary.summarize("t", [], [str(empty)], None, False, None), 1)

    def test_kunit_json(self):
        j = self.d / "k.json"
        j.write_text('{"name": "KUnit Test Group", "test_cases": [], "sub_groups": '
                     '[{"name": "sched_fair_model", "test_cases": '
                     '[{"name": "model_set_side", "status": "PASS"}], "sub_groups": []}]}')
        cases = sfp_summary.from_json("kunit", "kunit", j)
        self.assertEqual([(c.suite, c.test, c.status) for c in cases],
                         [("sched_fair_model", "model_set_side", "PASS")])
        # a log cut short: kunit.py gives the tests it never saw no name
        cut = self.d / "cut.json"
        cut.write_text('{"name": "KUnit Test Group", "test_cases": [{"name": "", "status": '
                       '"ERROR"}], "sub_groups": []}')
        self.assertEqual([(c.suite, c.test, c.status) for c in
                          sfp_summary.from_json("kunit", "kunit", cut)],
                         [("kunit", "(unfinished)", "ERROR")])
        bad = self.d / "bad.json"
        bad.write_text("{")
        self.assertEqual(sfp_summary.from_json("kunit", "kunit", bad)[0].status, "ERROR")


if __name__ == "__main__":
    unittest.main()
