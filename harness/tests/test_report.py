# SPDX-License-Identifier: GPL-2.0
"""A boot's report (sfp report): the streams split and merged."""
import contextlib
import io
import pathlib
import shutil
import tempfile
import unittest

from harness import sfp_report

# A stand-in for the tree's kunit.py parse: 'ok N NAME' / 'not ok N NAME'
# lines into the JSON shape kunit.py writes.
FAKE_KUNIT = r'''
import json, re, sys
out = sys.argv[2].split("=", 1)[1]
cases = []
for ln in open(sys.argv[3], encoding="latin-1"):
    m = re.match(r"^(not )?ok \d+ (\S+)(?: # SKIP)?", ln.strip())
    if m:
        st = "FAILURE" if m.group(1) else ("SKIPPED" if "# SKIP" in ln else "SUCCESS")
        cases.append({"name": m.group(2), "status": {"FAILURE": "FAIL", "SKIPPED": "SKIP"}.get(st, "PASS")})
json.dump({"name": "KUnit Test Group", "test_cases": cases, "sub_groups": []}, open(out, "w"))
print("parsed", len(cases))
'''


class Split(unittest.TestCase):
    def test_guest_programs(self):
        log = ("noise\r\nsfp-begin: kselftest\r\nTAP version 13\r\nok 1 a\r\n"
               "sfp-end: kselftest rc=1\r\nbetween\nsfp-begin: stress\nok 1 b\n")
        done, taps = sfp_report.split_guest(log)
        self.assertEqual([(p.name, p.rc) for p in done], [("kselftest", "1")])
        self.assertEqual(taps["kselftest"], "TAP version 13\nok 1 a\n")
        self.assertEqual(taps["stress"], "ok 1 b\n")  # began, never ended: no rc

    def test_lines_split_at_newlines_only(self):
        self.assertEqual(sfp_report.lines_of("a\x0cb\nc\n"), ["a\x0cb", "c"])

    def test_kselftest_nested_streams_and_61_skip_name(self):
        tap = ("# selftests: sched: sched_fastpath_newidle\n"
               "# TAP version 13\n# #  RUN  newidle.light_load ...\n"
               "# ok 1 # SKIP precondition: no light load\n"
               "ok 1 selftests: sched: sched_fastpath_newidle\n"
               "# selftests: sched: other\n# ok 1 x\nok 2 selftests: sched: other\n")
        got = sfp_report.split_kselftest(tap)
        self.assertEqual([n for n, _ in got], ["sched_fastpath_newidle", "other"])
        self.assertEqual(got[0][1], "TAP version 13\n#  RUN  newidle.light_load ...\n"
                                    "ok 1 newidle.light_load # SKIP precondition: no light load\n")
        self.assertEqual(got[1][1], "ok 1 x\n")

    def test_precondition_skips(self):
        texts = ["    ok 3 light_load # SKIP precondition: x\r\n",
                 "# ok 1 # SKIP precondition: y\nok 2 other # SKIP not a precondition\n"]
        self.assertEqual(sfp_report.precondition_skips(texts), ["(unnamed)", "light_load"])

    def test_slow_rows_keep_the_line(self):
        rows = sfp_report.slow_rows("  # case: Test should be marked slow (runtime: 1.2s)\r\nok\n")
        self.assertEqual(rows, ["kunit\tkunit\t(speed)\tFAIL\t# case: Test should be marked "
                                "slow (runtime: 1.2s)\r\n"])


class Report(unittest.TestCase):
    def setUp(self):
        self.d = pathlib.Path(tempfile.mkdtemp())
        self.tree = self.d / "tree"
        (self.tree / "tools/testing/kunit").mkdir(parents=True)
        (self.tree / "tools/testing/kunit/kunit.py").write_text(FAKE_KUNIT)
        self.obj = self.d / "obj"
        self.obj.mkdir()
        (self.obj / ".config").write_text("CONFIG_SCHED_FASTPATH_KUNIT_TEST=y\n")
        self.log = self.d / "log"
        self.log.mkdir()
        (self.log / "boot.info").write_text("smp=4\n")

    def tearDown(self):
        shutil.rmtree(self.d)

    def run_report(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = sfp_report.report(self.log, self.tree, self.obj)
        return rc, out.getvalue()

    def test_merged_table_and_rows(self):
        (self.log / "console.log").write_text("KTAP version 1\nok 1 model_set_side\n")
        (self.log / "guest.log").write_text(
            "sfp-begin: kselftest\n# selftests: sched: t\n# ok 1 a\n"
            "# ok 2 b # SKIP precondition: none\nok 1 selftests: sched: t\n"
            "sfp-end: kselftest rc=0\nsfp-begin: stress\nok 1 s\nsfp-end: stress rc=3\n")
        rc, out = self.run_report()
        self.assertEqual(rc, 1)  # stress exited 3 with no failed case
        self.assertIn("In-guest results: smp=4", out)
        self.assertTrue(out.endswith("1 skipped\n4 passed, 1 failed\n"), out)
        rows = (self.log / "results.tsv").read_text().splitlines()
        self.assertIn("guest\tstress\t(exit status)\tFAIL\texited with 3", rows)
        self.assertIn("guest\tt\tb\tSKIP\tprecondition not met in time: not a result", rows)
        self.assertEqual((self.log / "precondition-skips").read_text(), "b\n")
        self.assertEqual((self.log / "kselftest-list").read_text(), "t\n")

    def test_lava_records_are_compared_with_the_result(self):
        # A skip with no precondition is a failure in the Result, and so in
        # the guest's case lines LAVA records: a LAVA 'skip' for it disagrees.
        (self.log / "console.log").write_text("KTAP version 1\nok 1 k\n")
        (self.log / "guest.log").write_text(
            "sfp-begin: g\nok 1 a\nok 2 b # SKIP no debugfs\n"
            "ok 3 c # SKIP precondition: late\nsfp-end: g rc=0\n")
        (self.log / "lava").mkdir()
        tsv = self.log / "lava" / "lava-results.tsv"

        def records(b):
            tsv.write_text("".join(f"lava\t{d}\t{c}\t{r}\t\n" for d, c, r in (
                ("kunit", "kunit_k", "PASS"), ("guest", "g_a", "PASS"), ("guest", "g_b", b),
                ("guest", "g_c", "SKIP"))))
            self.run_report()
            return [r for r in (self.log / "results.tsv").read_text().splitlines()
                    if r.startswith("lava\trecords")]
        self.assertEqual(records("FAIL"), [])
        self.assertEqual(records("SKIP"), ["lava\trecords\t1\tFAIL\tLAVA recorded guest g.b "
                                           "as skip, the logs have fail"])

    def test_lava_records_of_a_guest_that_listed_nothing(self):
        # The guest hung before it listed the KUnit cases and ran no program
        # to its end: LAVA has no record of them to compare, and the hang is
        # a failure of its own, not one disagreement a case.
        (self.log / "console.log").write_text("KTAP version 1\nok 1 k\nnot ok 2 j\n")
        (self.log / "guest.log").write_text("sfp-begin: g\nok 1 a\n")
        (self.log / "lava").mkdir()
        (self.log / "lava" / "lava-results.tsv").write_text("")
        rc, _ = self.run_report()
        rows = (self.log / "results.tsv").read_text().splitlines()
        self.assertEqual(rc, 1)
        self.assertEqual([r for r in rows if r.startswith("lava\trecords")], [])
        self.assertIn("guest\tg\t(unfinished)\tERROR\tthe program did not end (no 'sfp-end: g' "
                      f"line in {self.log / 'guest.log'})", rows)
        # once the guest has listed them, a case LAVA lacks is a disagreement
        (self.log / "console.log").write_text("KTAP version 1\nok 1 k\nsfp-cases-end: kunit\n")
        self.run_report()
        rows = (self.log / "results.tsv").read_text().splitlines()
        self.assertEqual([r for r in rows if r.startswith("lava\trecords")],
                         ["lava\trecords\t1\tFAIL\tLAVA has no record of kunit kunit.k "
                          "(the logs: pass)"])

    def test_configured_kunit_without_ktap_is_an_error(self):
        (self.log / "console.log").write_text("Kernel panic\n")
        rc, out = self.run_report()
        self.assertEqual(rc, 1)
        self.assertIn("KUnit tests are configured but the console has no KTAP", out)

    def test_a_guest_that_never_finished_keeps_the_kunit_cases(self):
        # the guest hung in its first program: the KUnit cases that ran
        # before are results, and the unfinished programs an error
        (self.log / "console.log").write_text("KTAP version 1\nok 1 good\nnot ok 2 bad\n")
        (self.log / "guest.log").write_text("sfp-begin: kselftest\nok 1 a\n")
        rc, out = self.run_report()
        self.assertEqual(rc, 1)
        rows = (self.log / "results.tsv").read_text().splitlines()
        self.assertTrue(any(r.startswith("kunit\t") and "\tgood\tPASS" in r for r in rows), rows)
        self.assertTrue(any(r.startswith("kunit\t") and "\tbad\tFAIL" in r for r in rows), rows)
        # and the program it hung in: the cases it printed, and a row saying it did not end
        self.assertTrue(any(r.startswith("guest\t") and "\ta\tPASS" in r for r in rows), rows)
        self.assertTrue(any(r.startswith("guest\tkselftest\t(unfinished)\tERROR\tthe program "
                                         "did not end") for r in rows), rows)

    def test_a_guest_that_began_no_program(self):
        (self.log / "console.log").write_text("KTAP version 1\nok 1 good\n")
        (self.log / "guest.log").write_text("")
        rc, out = self.run_report()
        self.assertEqual(rc, 1)
        rows = (self.log / "results.tsv").read_text().splitlines()
        self.assertTrue(any(r.startswith("guest\tguest\t(programs)\tERROR\tno guest program "
                                         "began") for r in rows), rows)

    def test_bad_input(self):
        with self.assertRaisesRegex(sfp_report.ReportError, "no console.log"):
            self.run_report()
        (self.log / "console.log").write_text("")
        with self.assertRaisesRegex(sfp_report.ReportError, "has no tools/testing/kunit"):
            sfp_report.report(self.log, self.d, self.obj)


class KtapHeaders(unittest.TestCase):
    """A kernel message inside a test's header is left out of what
    kunit.py parses; elsewhere, and outside KTAP, nothing is."""

    CONSOLE = ("Linux version 6.19.0\r\nKTAP version 1\r\n1..2\r\n    KTAP version 1\r\n"
               "tsc: Refined TSC clocksource calibration: 2096.017 MHz\r\n"
               "    # Subtest: a\r\n    1..1\r\nclocksource: Switched to clocksource tsc\r\n"
               "    ok 1 x\r\nok 1 a\r\n    KTAP version 1\r\n    # Subtest: b\r\n"
               "Freeing initrd memory: 3416K\r\n    1..1\r\n    ok 1 y\r\nok 2 b\r\n")

    def test_header_lines_dropped(self):
        got = sfp_report.ktap_headers_clean(self.CONSOLE)
        self.assertEqual(got, self.CONSOLE.replace(
            "tsc: Refined TSC clocksource calibration: 2096.017 MHz\r\n", "").replace(
            "Freeing initrd memory: 3416K\r\n", ""))

    def test_prefix(self):
        console = "[    1.0] KTAP version 1\n[    1.1] 1..1\n[    1.2]     KTAP version 1\n" \
                  "[    1.3] noise\n[    1.4]     # Subtest: a\n[    1.5]     1..1\n"
        self.assertNotIn("noise", sfp_report.ktap_headers_clean(console))
        self.assertEqual(sfp_report.ktap_headers_clean("no tests here\n"), "no tests here\n")

    def test_kunit_part_stops_at_the_guest(self):
        # A guest with no port of its own writes its TAP on the console
        # after KUnit's (a portable LAVA job); kunit.py parse sees none of it.
        guest = "sfp-begin: kselftest\nTAP version 13\nok 1 selftests: sched: t\nsfp-done\n"
        self.assertEqual(sfp_report.kunit_part(self.CONSOLE + "sfp: guest up\n" + guest),
                         self.CONSOLE + "sfp: guest up\n")
        self.assertEqual(sfp_report.kunit_part(self.CONSOLE), self.CONSOLE)
        self.assertEqual(sfp_report.kunit_part("x sfp-begin: not at a line's start\n"),
                         "x sfp-begin: not at a line's start\n")


if __name__ == "__main__":
    unittest.main()
