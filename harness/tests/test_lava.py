# SPDX-License-Identifier: GPL-2.0
"""The LAVA backend: job and device definitions, and LAVA's records read
back and checked against the logs QEMU wrote."""
import json
import pathlib
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import sfp_lava  # noqa: E402

CONSOLE = """Linux version 6.12.118\r
KTAP version 1\r
1..1\r
    KTAP version 1\r
    # Subtest: sched_fair_model\r
    1..2\r
    ok 1 model_set_side\r
hrtimer: interrupt took 19942557 ns\r
    not ok 2 model_tg_side\r
# sched_fair_model: pass:1 fail:1 skip:0 total:2\r
not ok 1 sched_fair_model\r
sfp: guest 6.12.118 up, 4 CPUs\r
reboot: Restarting system\r
"""
GUEST = """sfp-begin: guest_preconditions\r
ok 1 kernel_is_the_build\r
ok 2 schedstat_has_domains # SKIP not here\r
sfp-end: guest_preconditions rc=0\r
sfp-done\r
"""


def entry(lvl, msg):
    return json.dumps({"dt": "2026-12-03T22:42:03", "lvl": lvl, "msg": msg})


def result(definition, case, res, **extra):
    return entry("results", {"definition": definition, "case": case, "result": res,
                             "extra": extra or {"test_case_id": case}})


class Definitions(unittest.TestCase):
    def test_job(self):
        j = sfp_lava.job("t", "/k/bzImage", "/k/initrd", "console=ttyS0 panic=-1", 600)
        kinds = [next(iter(a)) for a in j["actions"]]
        self.assertEqual(kinds, ["deploy", "boot", "test", "boot", "test"])
        self.assertEqual([next(iter(a.values()))["namespace"] for a in j["actions"]],
                         ["vm", "vm", "vm", "guest", "guest"])
        self.assertEqual(j["actions"][0]["deploy"]["images"]["kernel"]["url"], "file:///k/bzImage")
        self.assertIn('-append "console=ttyS0 panic=-1"',
                      j["actions"][0]["deploy"]["images"]["kernel"]["image_arg"])
        self.assertEqual(j["actions"][2]["test"]["timeout"], {"seconds": 600})
        with self.assertRaises(ValueError):
            sfp_lava.job("t", "/k", "/i", 'a="b"', 1)

    def test_patterns_never_end_in_a_newline(self):
        # The console reaches LAVA with \r\r\n line ends; and a pattern is
        # tried as text arrives, so it must end at the white space after a
        # name, and not match inside a word ("took 19942557 ns").
        j = sfp_lava.job("t", "/k", "/i", "x", 1)
        for a in (j["actions"][2], j["actions"][4]):
            pat = a["test"]["monitors"][0]["pattern"]
            self.assertFalse(pat.endswith("\\n") or pat.endswith("\\r?\\n"))
            self.assertTrue(pat.endswith("\\s"))
            self.assertIsNone(re.search(pat, "interrupt took 19942557 ns\r"))
            m = re.search(pat, "    not ok 2 model_tg_side\r")
            self.assertEqual((m.group("result"), m.group("test_case_id")), ("not ok", "model_tg_side"))
            # a name cut where the text arrived so far is not a match
            self.assertIsNone(re.search(pat, "    ok 1 model_set_si"))

    def test_device(self):
        opts = sfp_lava.qemu_options(["-smp", "4"], "/l/console.log", "/l/guest.log")
        self.assertIn("stdio,id=con,signal=off,logfile=/l/console.log", opts)
        self.assertIn("file:/l/guest.log", opts)
        d = sfp_lava.device("qemu-system-x86_64", opts, "/l/guest.log")
        self.assertEqual(d["commands"]["connections"]["guest"]["connect"],
                         "tail -n +1 -F /l/guest.log")
        for const in ("failure_retry", "boot_retry", "kernel-start-message", "shutdown-message",
                      "default-shell-prompt", "spawn_maxread"):
            self.assertIn(const, d["constants"])


class Records(unittest.TestCase):
    def setUp(self):
        self.d = pathlib.Path(tempfile.mkdtemp())
        (self.d / "console.log").write_text(CONSOLE)
        (self.d / "guest.log").write_text(GUEST)

    def tearDown(self):
        shutil.rmtree(self.d)

    def log(self, *lines):
        (self.d / "lava.log").write_text("\n".join(lines) + "\nnot json\n")
        return sfp_lava.parse_log(self.d / "lava.log")

    def all_cases(self):
        return [result("kunit", "model_set_side", "pass"),
                result("kunit", "model_tg_side", "fail"),
                result("kunit", "sched_fair_model", "fail"),
                result("guest", "kernel_is_the_build", "pass"),
                result("guest", "schedstat_has_domains", "pass")]

    def test_counts_in_logs(self):
        self.assertEqual(sfp_lava.count_in_logs(self.d / "console.log", self.d / "guest.log"),
                         {"kunit": 3, "guest": 2})

    def test_complete_job_agrees(self):
        rec = self.log(*self.all_cases(), result("lava", "job", "pass"))
        self.assertEqual(rec.job_result, "pass")
        self.assertEqual(rec.count("kunit"), 3)
        self.assertEqual(sfp_lava.lava_check(rec, self.d / "console.log", self.d / "guest.log"), [])

    def test_a_case_lava_missed_is_reported(self):
        rec = self.log(*self.all_cases()[1:], result("lava", "job", "pass"))
        self.assertEqual(sfp_lava.lava_check(rec, self.d / "console.log", self.d / "guest.log"),
                         ["LAVA recorded 2 kunit results, the logs hold 3"])

    def test_failed_and_timed_out_jobs(self):
        rec = self.log(entry("error", "lava-test-monitor timed out after 25 seconds"),
                       entry("results", {"definition": "lava", "case": "job", "result": "fail",
                                         "error_msg": "lava-test-monitor timed out after 25 seconds",
                                         "error_type": "Job"}))
        self.assertEqual(rec.job_result, "fail")
        self.assertTrue(rec.timed_out)
        rec = self.log(entry("results", {"definition": "lava", "case": "job", "result": "fail",
                                         "error_msg": "Connection closed",
                                         "error_type": "Infrastructure"}))
        self.assertFalse(rec.timed_out)
        self.assertEqual(rec.job_error, "Connection closed")

    def test_no_log(self):
        rec = sfp_lava.parse_log(self.d / "none")
        self.assertEqual(rec.job_result, "incomplete")
        self.assertTrue(rec.errors)


if __name__ == "__main__":
    unittest.main()


class ServerRecords(unittest.TestCase):
    """sfp lab reads a server's results (lavacli results --json) into the
    same record as lava-run's log."""

    def test_record(self):
        import sfp_lab
        rows = [
            {"suite": "lava", "name": "validate", "result": "pass", "metadata": {}},
            {"suite": "kunit", "name": "root_tg_update_skipped", "result": "pass",
             "metadata": {"extra": [{"test_case_id": "root_tg_update_skipped"}]}},
            {"suite": "guest", "name": "kernel_is_the_build", "result": "fail", "metadata": {}},
            {"suite": "lava", "name": "job", "result": "fail",
             "metadata": {"error_msg": "lava-test-monitor timed out after 25 seconds",
                          "error_type": "Job"}},
        ]
        saved = sfp_lab._run
        sfp_lab._run = lambda *cmd, check=True: json.dumps(rows)
        try:
            rec = sfp_lab.record("7")
        finally:
            sfp_lab._run = saved
        self.assertEqual(rec.cases, {"kunit": [("root_tg_update_skipped", "pass")],
                                     "guest": [("kernel_is_the_build", "fail")]})
        self.assertEqual(rec.job_result, "fail")
        self.assertTrue(rec.timed_out)

    def test_server_job_context(self):
        import subprocess
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            for f in ("bz", "rd"):
                (d / f).write_text("x")
            sfp = pathlib.Path(__file__).resolve().parent.parent.parent / "sfp"
            p = subprocess.run([str(sfp), "lava-job", "--server", "--name", "t", "--kernel",
                                str(d / "bz"), "--initrd", str(d / "rd"), "--append", "a",
                                "--timeout", "60", "--console-log", str(d / "console.log"),
                                "--guest-log", str(d / "guest.log"), "--out", str(d / "lava"),
                                "--", "-smp", "4"], capture_output=True, text=True, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            job = json.loads((d / "lava" / "job.yaml").read_text())
            self.assertEqual(job["device_type"], "sfp-qemu")
            self.assertEqual(job["context"]["extra_options"], ["-smp", "4"])
            self.assertEqual(job["context"]["sfp_dir"], str(d.resolve()))
            self.assertFalse((d / "lava" / "device.yaml").exists())
        finally:
            shutil.rmtree(d)
