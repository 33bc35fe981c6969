# SPDX-License-Identifier: GPL-2.0
"""The LAVA backend: job and device definitions, and LAVA's records read
back and checked against the logs QEMU wrote."""
import gzip
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import yaml

from harness import sfp_lava

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
sfp-cases: kunit\r
sfp-case: pass sched_fair_model.model_set_side\r
sfp-case: fail sched_fair_model.model_tg_side\r
sfp-cases-end: kunit\r
sfp: guest 6.12.118 up, 4 CPUs\r
reboot: Restarting system\r
"""
GUEST = """sfp-begin: guest_preconditions\r
ok 1 kernel_is_the_build\r
ok 2 schedstat_has_domains # SKIP precondition: not here\r
sfp-end: guest_preconditions rc=0\r
sfp-case: pass guest_preconditions.kernel_is_the_build\r
sfp-case: skip guest_preconditions.schedstat_has_domains\r
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

    def test_a_monitor_per_kunit_suite(self):
        j = sfp_lava.job("t", "/k", "/i", "x", 1, suites=["s", "s_t"])
        monitors = j["actions"][2]["test"]["monitors"]
        # 'kunit' too: the guest's group of a result with no suite
        self.assertEqual([m["name"] for m in monitors], ["kunit", "s", "s_t"])
        _, s, s_t = monitors
        self.assertTrue(re.search(s["start"], "sfp-suite: s\r\r\n"))
        self.assertIsNone(re.search(s["start"], "sfp-suite: s_t\r\r\n"))
        self.assertTrue(re.search(s["end"], "sfp-suite-end: s\r\r\n"))
        self.assertIsNone(re.search(s["end"], "sfp-suite-end: s_t\r"))
        m = re.search(s["pattern"], "sfp-case: skip s.a.b\r\r\n")
        self.assertEqual((m["result"], m["test_case_id"]), ("skip", "a.b"))
        self.assertIsNone(re.search(s["pattern"], "sfp-case: pass s_t.a\r\r\n"))
        # without the kernel's suites: one monitor, the suite in each case's name
        flat = sfp_lava.job("t", "/k", "/i", "x", 1)["actions"][2]["test"]["monitors"]
        self.assertEqual([(m["name"], m["start"], m["end"]) for m in flat],
                         [("kunit", "sfp-cases: kunit", "sfp-cases-end: kunit")])
        m = re.search(flat[0]["pattern"], "sfp-case: pass s.a\r")
        self.assertEqual(m["test_case_id"], "s.a")
        # a portable job keeps them on its one console
        pj = sfp_lava.portable_job("t", "http://h/k", "http://h/i", "x", 1, [], 512,
                                   suites=["s"])
        self.assertEqual([m["name"] for a in pj["actions"] if "test" in a
                          for m in a["test"]["monitors"]], ["kunit", "s", "guest"])

    def test_the_kernels_suites_from_its_vmlinux(self):
        # A vmlinux in small: suite structures whose name starts them, and
        # the table of pointers between the symbols the kernel's linker
        # script sets, in another order than the names'.
        src = r"""
struct suite { char name[256]; int other; };
struct suite beta = { "sched_beta" }, alpha = { "sched_alpha" }, init = { "init_one" };
struct suite *table[] = { &beta, &alpha };
struct suite *init_table[] = { &init };
asm(".globl __kunit_suites_start\n.set __kunit_suites_start, table\n"
    ".globl __kunit_suites_end\n.set __kunit_suites_end, table + 16\n"
    ".globl __kunit_init_suites_start\n.set __kunit_init_suites_start, init_table\n"
    ".globl __kunit_init_suites_end\n.set __kunit_init_suites_end, init_table + 8\n");
int main(void) { return 0; }
"""
        if not shutil.which("gcc") or os.uname().machine != "x86_64":
            self.skipTest("needs gcc for x86_64")
        with tempfile.TemporaryDirectory() as tmp:
            d = pathlib.Path(tmp)
            (d / "v.c").write_text(src)
            subprocess.run(["gcc", "-no-pie", "-o", str(d / "vmlinux"), str(d / "v.c")],
                           check=True)
            self.assertEqual(sfp_lava.kunit_suites(d / "vmlinux"),
                             ["init_one", "sched_alpha", "sched_beta"])
            self.assertEqual(sfp_lava.kunit_suites(d / "v.c"), [])
            self.assertEqual(sfp_lava.kunit_suites(d / "none"), [])
            # a file cut short, or empty: no suites, no exception
            (d / "short").write_bytes((d / "vmlinux").read_bytes()[:200])
            (d / "empty").write_bytes(b"")
            self.assertEqual(sfp_lava.kunit_suites(d / "short"), [])
            self.assertEqual(sfp_lava.kunit_suites(d / "empty"), [])

    def test_patterns_never_end_in_a_newline(self):
        # The console reaches LAVA with \r\r\n line ends, and a pattern is
        # tried as text arrives: it matches a whole 'sfp-case:' line once
        # its end has arrived, and nothing else.
        j = sfp_lava.job("t", "/k", "/i", "x", 1)
        for a in (j["actions"][2], j["actions"][4]):
            pat = a["test"]["monitors"][0]["pattern"]
            m = re.search(pat, "sfp-case: fail sched_fair_model.model_tg_side\r\r\n")
            self.assertEqual((m.group("result"), m.group("test_case_id")),
                             ("fail", "sched_fair_model.model_tg_side"))
            m = re.search(pat, "sfp-case: skip kselftest.selftests: sched: x\n")
            self.assertEqual((m.group("result"), m.group("test_case_id")),
                             ("skip", "kselftest.selftests: sched: x"))
            # a line cut where the text arrived so far is not a match
            self.assertIsNone(re.search(pat, "sfp-case: pass sched_fair_model.model_set_si"))
            for other in ("    not ok 2 model_tg_side\r", "interrupt took 19942557 ns\r",
                          "sfp-case: ok a.b\r"):
                self.assertIsNone(re.search(pat, other))

    def test_every_wait_is_the_boots(self):
        # A guest program's cases come when it ends: no monitor may give
        # up sooner than the boot's timeout.
        j = sfp_lava.job("t", "/k/bzImage", "/k/initrd", "console=ttyS0", 600)
        self.assertEqual(j["timeouts"]["connection"], {"seconds": 600})
        self.assertEqual(j["timeouts"]["connections"], {"lava-test-monitor": {"seconds": 600}})
        self.assertEqual({a["boot"]["timeout"]["seconds"] for a in j["actions"] if "boot" in a},
                         {600})

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

    LOGS = [("kunit", "sched_fair_model.model_set_side", "PASS"),
            ("kunit", "sched_fair_model.model_tg_side", "FAIL"),
            ("guest", "guest_preconditions.kernel_is_the_build", "PASS"),
            ("guest", "guest_preconditions.schedstat_has_domains", "SKIP")]

    def all_cases(self):
        return [result(d, n.replace(".", "_"), r.lower(), test_case_id=n)
                for d, n, r in self.LOGS]

    def records(self, rec):
        return [(d, c, r) for d, cs in rec.cases.items() for c, r in cs]

    def test_complete_job_agrees(self):
        rec = self.log(*self.all_cases(), result("lava", "job", "pass"))
        self.assertEqual(rec.job_result, "pass")
        self.assertEqual(rec.count("kunit"), 2)
        self.assertEqual(sfp_lava.disagreements(self.records(rec), self.LOGS), [])
        # a skip is a skip in LAVA's records, not a pass
        self.assertIn(("guest", "guest_preconditions.schedstat_has_domains", "skip"),
                      self.records(rec))

    def test_every_disagreement_is_named(self):
        rec = self.log(*self.all_cases()[1:], result("lava", "job", "pass"))
        lava = self.records(rec)
        self.assertEqual(sfp_lava.disagreements(lava, self.LOGS),
                         ["LAVA has no record of kunit sched_fair_model.model_set_side "
                          "(the logs: pass)"])
        doctored = [(d, c, "pass") for d, c, _ in lava]
        self.assertEqual(sfp_lava.disagreements(doctored, self.LOGS[1:]),
                         ["LAVA recorded kunit sched_fair_model.model_tg_side as pass, the logs "
                          "have fail",
                          "LAVA recorded guest guest_preconditions.schedstat_has_domains as pass, "
                          "the logs have skip"])
        self.assertEqual(sfp_lava.disagreements(lava + lava[:1] + [("guest", "x.y", "pass")],
                                                self.LOGS[1:]),
                         ["LAVA recorded kunit sched_fair_model.model_tg_side twice",
                          "LAVA recorded guest x.y, which the logs do not hold"])
        # From LAVA 2023.02 a record keeps only LAVA's own name of a case.
        bare = [(d, sfp_lava.case_name(n), r.lower()) for d, n, r in self.LOGS]
        self.assertEqual(bare[0], ("kunit", "sched_fair_model_model_set_side", "pass"))
        self.assertEqual(sfp_lava.disagreements(bare, self.LOGS), [])
        self.assertEqual(sfp_lava.disagreements([], [("kunit", "a.b_c", "PASS"),
                                                     ("kunit", "a_b.c", "PASS")]),
                         ["kunit a_b.c and a.b_c are one case to LAVA (a_b_c)",
                          "LAVA has no record of kunit a_b.c (the logs: pass)"])
        # a case kunit.py found crashed is a fail
        self.assertEqual(sfp_lava.disagreements([("kunit", "a.b", "fail")],
                                                [("kunit", "a.b", "ERROR")]), [])

    def test_a_monitor_per_suite(self):
        # Each KUnit case is LAVA's CASE of the definition SUITE.
        per_suite = [("sched_fair_model", "model_set_side", "pass"),
                     ("sched_fair_model", "model_tg_side", "fail"),
                     ("guest", "guest_preconditions.kernel_is_the_build", "pass"),
                     ("guest", "guest_preconditions.schedstat_has_domains", "skip")]
        self.assertEqual(sfp_lava.disagreements(per_suite, self.LOGS), [])
        flipped = [per_suite[0][:2] + ("fail",)] + per_suite[1:]
        self.assertEqual(sfp_lava.disagreements(flipped, self.LOGS),
                         ["LAVA recorded sched_fair_model model_set_side as fail, the logs "
                          "have pass"])
        # under another suite, a case is not the same case
        moved = [("sched_fair_other", "model_set_side", "pass")] + per_suite[1:]
        self.assertEqual(sfp_lava.disagreements(moved, self.LOGS),
                         ["LAVA has no record of sched_fair_model model_set_side (the logs: "
                          "pass)",
                          "LAVA recorded sched_fair_other model_set_side, which the logs do "
                          "not hold"])
        # LAVA keeps a suite's name in lower case, a case's as case_name makes it
        self.assertEqual(sfp_lava.disagreements([("s", "a_b", "pass")],
                                                [("kunit", "S.a-b", "PASS")]), [])
        # a result with no suite is the guest's 'kunit.NAME': LAVA's NAME of 'kunit'
        self.assertEqual(sfp_lava.disagreements(per_suite + [("kunit", "s_d", "fail")],
                                                self.LOGS + [("kunit", "kunit.s_d", "FAIL")]),
                         [])

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

    def test_boot_made_again_is_said(self):
        # as lava-run logged it when QEMU was killed before the kernel's
        # command line: the inner waits fail too, then the boot is retried
        failed = "boot-image-retry failed: 1 of 2 attempts. 'Connection closed'"
        rec = self.log(entry("error", "auto-login-action failed: 1 of 2 attempts. "
                                      "'Connection closed'"),
                       entry("warning", "Retrying: 2.2 auto-login-action (timeout 00:10:00)"),
                       entry("error", "auto-login-action failed: 2 of 2 attempts. "
                                      "'Connection closed'"),
                       entry("error", failed),
                       entry("warning", "Retrying: 2 boot-image-retry (timeout 00:10:00)"),
                       *self.all_cases(), result("lava", "job", "pass"))
        status, lines = sfp_lava.report(rec, self.d)
        self.assertEqual(status, 0)
        self.assertEqual(lines[1:], [f"LAVA booted again: {failed}"])
        # an error with no time left for another boot: none was made
        rec = self.log(entry("error", "boot-image-retry failed: 1 of 2 attempts. "
                                      "'login-action timed out after 120 seconds'"),
                       result("lava", "job", "fail"))
        self.assertEqual(rec.boot_retries, [])

    def test_no_log(self):
        rec = sfp_lava.parse_log(self.d / "none")
        self.assertEqual(rec.job_result, "incomplete")
        self.assertTrue(rec.errors)


class ServerRecords(unittest.TestCase):
    """sfp lab reads a server's results (lavacli results --json) into the
    same record as lava-run's log."""

    def test_record(self):
        from harness import sfp_lab
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
            job = yaml.safe_load((d / "lava" / "job.yaml").read_text())
            self.assertEqual(job["device_type"], "sfp-qemu")
            self.assertEqual(job["context"]["extra_options"], ["-smp", "4"])
            self.assertRegex(job["context"]["sfp_run"], r"^[0-9a-f]{32}$")
            self.assertNotIn("sfp_dir", job["context"])
            self.assertFalse((d / "lava" / "device.yaml").exists())
        finally:
            shutil.rmtree(d)


class PortableJobs(unittest.TestCase):
    """A job for a lab elsewhere: LAVA's stock QEMU device type, images by
    URL, the console and the guest's TAP read back from the job's log."""

    MACHINE = ["-accel", "tcg", "-cpu", "max", "-smp", "4", "-m", "512", "-nodefaults",
               "-display", "none", "-no-reboot", "-icount", "shift=3"]

    def test_job(self):
        j = sfp_lava.portable_job("t", "http://lab/k/bzImage", "https://lab/k/rd", "a b", 600,
                                  self.MACHINE, 1024)
        self.assertEqual(j["device_type"], "qemu")
        self.assertEqual([next(iter(a)) for a in j["actions"]], ["deploy", "boot", "test", "test"])
        self.assertEqual({next(iter(a.values()))["namespace"] for a in j["actions"]}, {"vm"})
        images = j["actions"][0]["deploy"]["images"]
        self.assertEqual((images["kernel"]["url"], images["initrd"]["url"]),
                         ("http://lab/k/bzImage", "https://lab/k/rd"))
        self.assertEqual(j["context"]["memory"], 1024)
        self.assertTrue(j["context"]["no_kvm"])
        # what the stock type sets itself, or what would take its one
        # serial port away, is left out; the rest of the machine stays
        self.assertEqual(j["context"]["extra_options"],
                         ["-accel", "tcg", "-cpu", "max", "-smp", "4", "-no-reboot", "-icount",
                          "shift=3"])
        self.assertEqual([a["test"]["monitors"][0]["name"] for a in j["actions"][2:]],
                         ["kunit", "guest"])
        for url in ("file:///k/bzImage", "/k/bzImage", "ftp://lab/k"):
            with self.assertRaises(ValueError):
                sfp_lava.portable_job("t", url, "http://lab/rd", "a", 60, [], 512)

    def test_log_lines(self):
        # As lavacli --raw and a server's output.yaml write them: YAML in
        # JSON's flow style, with YAML's escapes and a tag on a string that
        # looks like a number.
        e = sfp_lava.log_entry(r'- {"dt": "x", "lvl": "target", "msg": "a\e[0m\x85\N\_b\\\"c"}')
        self.assertEqual(e["msg"], 'a\x1b[0m\x85\x85\xa0b\\"c')
        e = sfp_lava.log_entry(r'- {"dt": "x", "lvl": "results", "msg": {"size": ! "3485944", '
                               r'"u": "\U0001F600\u00e9"}}')
        self.assertEqual(e["msg"], {"size": "3485944", "u": "\U0001F600\u00e9"})
        self.assertEqual(sfp_lava.log_entry('{"lvl": "info", "msg": "m"}')["msg"], "m")
        for junk in ("", "not json", "- [1, 2]", "- {broken"):
            self.assertIsNone(sfp_lava.log_entry(junk))

    def test_console_and_guest_from_the_log(self):
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            lines = [entry("info", "Boot command: qemu-system-x86_64 -smp 4")]
            lines += [entry("target", ln) for ln in CONSOLE.split("\n")[:-3]]
            lines += [entry("target", "sfp: guest 6.12.118 up, 4 CPUs"),
                      entry("debug", "not the console")]
            lines += [entry("target", ln) for ln in GUEST.split("\n")[:-1]]
            lines += [entry("target", "reboot: Restarting system")]
            (d / "lava.log").write_text("\n".join("- " + ln for ln in lines) + "\n")
            n = sfp_lava.logs_from_job(d / "lava.log", d / "console.log", d / "guest.log")
            self.assertEqual(n, len(lines) - 2)
            console = (d / "console.log").read_text()
            self.assertNotIn("\r", console)
            self.assertNotIn("not the console", console)
            self.assertEqual((d / "guest.log").read_text(), GUEST.replace("\r", ""))
            self.assertEqual(sfp_lava.boot_command(d / "lava.log"), "qemu-system-x86_64 -smp 4")
            # a guest that never began gives an empty guest log, not the console
            (d / "lava.log").write_text("- " + entry("target", "Kernel panic") + "\n")
            sfp_lava.logs_from_job(d / "lava.log", d / "console.log", d / "guest.log")
            self.assertEqual((d / "guest.log").read_text(), "")
        finally:
            shutil.rmtree(d)

    def test_a_real_portable_job(self):
        # fixtures/lava-portable-job.log.gz: the log of a portable job of
        # the 6.1 control on the local lab's qemu-01 (lavacli jobs logs
        # --raw), from before the guest named its cases: the records in
        # it, and the console and guest logs made from it.
        import gzip
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            fixture = pathlib.Path(__file__).parent / "fixtures" / "lava-portable-job.log.gz"
            (d / "lava.log").write_bytes(gzip.decompress(fixture.read_bytes()))
            sfp_lava.logs_from_job(d / "lava.log", d / "console.log", d / "guest.log")
            rec = sfp_lava.parse_log(d / "lava.log")
            self.assertEqual(rec.job_result, "pass")
            self.assertEqual((rec.count("kunit"), rec.count("guest")), (33, 20))
            guest = (d / "guest.log").read_text()
            self.assertTrue(guest.startswith("sfp-begin: guest_preconditions\n"))
            self.assertTrue(guest.endswith("sfp-done\n"))
            self.assertNotIn("sfp-begin", (d / "console.log").read_text().split(
                "sfp-begin: guest_preconditions")[0])
            self.assertIn("-no-reboot", sfp_lava.boot_command(d / "lava.log"))
        finally:
            shutil.rmtree(d)


class GuestCases(unittest.TestCase):
    """scripts/guest/cases.awk, as the guest's busybox runs it: each case
    of a stream as 'sfp-case: RESULT SUITE.CASE', with the names the
    host's parser gives."""

    AWK = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "guest" / "cases.awk"

    def cases(self, stream, text):
        p = subprocess.run(["busybox", "awk", "-v", f"stream={stream}", "-f", str(self.AWK)],
                           input=text, capture_output=True, text=True, check=True)
        return p.stdout.splitlines()

    def test_ktap_suites_and_parameters(self):
        self.assertEqual(self.cases("kunit", CONSOLE), [
            "sfp-case: pass sched_fair_model.model_set_side",
            "sfp-case: fail sched_fair_model.model_tg_side"])
        text = """KTAP version 1
1..2
    KTAP version 1
    # Subtest: s
    1..3
        KTAP version 1
        # Subtest: param_case
        ok 1 p0
        not ok 2 p1
    not ok 1 param_case
    ok 2 skipped # SKIP precondition: no isolation
    ok 3 plain
not ok 1 s
ok 2 empty_suite # SKIP no cases
"""
        self.assertEqual(self.cases("kunit", text), [
            "sfp-case: pass param_case.p0", "sfp-case: fail param_case.p1",
            "sfp-case: skip s.skipped", "sfp-case: pass s.plain",
            "sfp-case: fail kunit.empty_suite"])

    def test_suites_each_between_markers_in_name_order(self):
        awk = self.AWK.with_name("suites.awk")
        lines = ["sfp-case: pass s_b.x", "sfp-case: fail s.y", "sfp-case: pass s_b.z.w",
                 "sfp-case: skip a.q", "sfp-case: pass s.param case 1"]
        p = subprocess.run(["busybox", "awk", "-f", str(awk)], input="\n".join(lines) + "\n",
                           capture_output=True, text=True, check=True)
        self.assertEqual(p.stdout.splitlines(), [
            "sfp-suite: a", "sfp-case: skip a.q", "sfp-suite-end: a",
            "sfp-suite: s", "sfp-case: fail s.y", "sfp-case: pass s.param case 1",
            "sfp-suite-end: s",
            "sfp-suite: s_b", "sfp-case: pass s_b.x", "sfp-case: pass s_b.z.w",
            "sfp-suite-end: s_b"])
        # the order LAVA's monitors are given in
        self.assertEqual(sorted(["s_b", "s", "a"]), ["a", "s", "s_b"])
        # a group for each name it is told of, if empty
        p = subprocess.run(["busybox", "awk", "-v", "always=kunit s_c s", "-f", str(awk)],
                           input="sfp-case: fail kunit.s_d\nsfp-case: pass s.y\n",
                           capture_output=True, text=True, check=True)
        self.assertEqual(p.stdout.splitlines(), [
            "sfp-suite: kunit", "sfp-case: fail kunit.s_d", "sfp-suite-end: kunit",
            "sfp-suite: s", "sfp-case: pass s.y", "sfp-suite-end: s",
            "sfp-suite: s_c", "sfp-suite-end: s_c"])

    def test_a_skip_without_a_precondition_is_a_fail(self):
        # As in the host's Result: only an 'ok' skipped for a precondition
        # stays a skip.
        text = ("1..4\nok 1 a # SKIP precondition: late\nok 2 b # SKIP no debugfs\n"
                "not ok 3 c # SKIP precondition: late\nok 4 # SKIP\n")
        self.assertEqual(self.cases("g", text), [
            "sfp-case: skip g.a", "sfp-case: fail g.b", "sfp-case: fail g.c",
            "sfp-case: fail g.(unnamed)"])

    def test_a_guest_program_and_kselftests(self):
        self.assertEqual(self.cases("guest_preconditions", GUEST.split("sfp-end")[0]), [
            "sfp-case: pass guest_preconditions.kernel_is_the_build",
            "sfp-case: skip guest_preconditions.schedstat_has_domains"])
        text = """TAP version 13
1..2
# selftests: sched: prog_a
# TAP version 13
# 1..2
# #  RUN           f.one ...
# ok 1 f.one
# #  RUN           f.two ...
# ok 2 # SKIP precondition: late
ok 1 selftests: sched: prog_a
# selftests: sched: prog_b
# 1..1
# not ok 1 g.x
not ok 2 selftests: sched: prog_b # exit=1
"""
        self.assertEqual(self.cases("kselftest", text), [
            "sfp-case: pass prog_a.f.one", "sfp-case: skip prog_a.f.two",
            "sfp-case: pass kselftest.selftests: sched: prog_a",
            "sfp-case: fail prog_b.g.x",
            "sfp-case: fail kselftest.selftests: sched: prog_b"])

    def test_the_guest_and_the_host_agree_on_precondition_skips(self):
        # Each line as a case of its own: the guest's verdict (skip or fail)
        # is the host's (sfp_report.precondition_skips, then the Result's
        # skip rule).
        from harness import sfp_report
        lines = ["ok 1 a # SKIP precondition: late", "ok 2 - b # SKIP precondition: x",
                 "ok 3 c d # SKIP precondition: x", "ok 4 e # SKIP  precondition: x",
                 "ok 5 f # SKIPprecondition: x", "ok 7 g  # SKIP precondition: x",
                 "not ok 8 h # SKIP precondition: x", "ok 9 i # SKIP no debugfs",
                 "ok 10 j # SKIP", "ok 11 k # SKIP Precondition: x",
                 "ok 12 l # SKIP precondition:"]
        for line in lines:
            guest = self.cases("s", f"1..1\n{line}\n")
            self.assertEqual(len(guest), 1, line)
            st, name = guest[0].split(" ", 2)[1:]
            host = sfp_report.precondition_skips([line + "\n"])
            self.assertEqual(st == "skip", host == [name.split(".", 1)[1]], (line, guest, host))

    def test_a_suite_that_never_ended(self):
        text = "KTAP version 1\n1..1\n    # Subtest: s\n    1..2\n    ok 1 a\n"
        self.assertEqual(self.cases("kunit", text), ["sfp-case: pass s.a"])


class Schema(unittest.TestCase):
    """Every job the harness writes is valid by LAVA's own schema
    (lava_common.schemas, Debian's lava-common)."""

    def setUp(self):
        try:
            from lava_common import schemas  # type: ignore[import]
        except ImportError:
            self.skipTest("precondition: lava_common (Debian's lava-common) is not importable "
                          f"by {sys.executable}")
        self.schemas = schemas

    def test_jobs_validate(self):
        meta = {"sfp.line": "6.12", "sfp.variant": "patched", "sfp.commit": "0" * 40}
        j = sfp_lava.job("t", "/k/bzImage", "/k/initrd", "console=ttyS0", 600, meta)
        self.assertEqual(j["metadata"], meta)
        self.schemas.validate(j)
        self.schemas.validate(sfp_lava.job("t", "/k/bzImage", "/k/initrd", "console=ttyS0", 600,
                                           meta, suites=["sched_fair_model", "s"]))
        self.schemas.validate(sfp_lava.portable_job(
            "t", "http://lab/k", "http://lab/rd", "a b", 600, PortableJobs.MACHINE, 1024,
            metadata=meta, suites=["sched_fair_model"]))
        # The local lab's device type takes its options and run name
        # from the job's context: a server must allow these variables.
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            sfp_lava.write_job(d, "t", d / "k", d / "i", "a", 60, d / "console.log",
                               d / "guest.log", ["-smp", "2"], server=True, metadata=meta)
            self.schemas.validate(yaml.safe_load((d / "job.yaml").read_text()),
                                  extra_context_variables=["extra_options", "sfp_run"])
            # and the lab's health check (sfp lab up --health)
            from harness import sfp_lab
            for name in ("k", "i"):
                (d / name).write_bytes(b"")
            self.schemas.validate(sfp_lab._health_job(d / "lab", sfp_lab.HealthCheck(
                d / "k", d / "i", "console=ttyS0", suites=("sched_fair_model",))),
                extra_context_variables=["extra_options"])
        finally:
            shutil.rmtree(d)
        bad = sfp_lava.job("t", "/k", "/i", "a", 60)
        bad["actions"][2]["test"]["monitors"][0].pop("pattern")
        with self.assertRaises(Exception):
            self.schemas.validate(bad)


class BootRetry(unittest.TestCase):
    """LAVA itself boots again when QEMU fails before the kernel prints its
    command line (before the scheduler is set up): the boot action waits
    for that line and has two attempts, in a local job and in a portable
    one."""

    def test_boot_lasts_until_the_command_line(self):
        for j in (sfp_lava.job("t", "/k", "/i", "a", 60),
                  sfp_lava.portable_job("t", "http://lab/k", "http://lab/rd", "a", 60,
                                        PortableJobs.MACHINE, 1024)):
            boots = [a["boot"] for a in j["actions"]
                     if "boot" in a and a["boot"]["namespace"] == "vm"]
            self.assertEqual([(b["failure_retry"], b["prompts"]) for b in boots],
                             [(2, ["Kernel command line:"])])

    def test_prompt_is_printed_before_the_cases(self):
        # A real job's console (a portable job on LAVA's stock device):
        # the prompt comes once, after the kernel's first line and before
        # the scheduler's first message and the KUnit suites.
        fixture = pathlib.Path(__file__).parent / "fixtures" / "lava-portable-job.log.gz"
        with gzip.open(fixture, "rt") as f:
            msgs = [e["msg"] for e in yaml.safe_load(f)
                    if e.get("lvl") == "target" and isinstance(e.get("msg"), str)]
        prompt = sfp_lava.job("t", "/k", "/i", "a", 60)["actions"][1]["boot"]["prompts"][0]
        at = [i for i, m in enumerate(msgs) if prompt in m]
        self.assertEqual(len(at), 1)
        self.assertLess(min(i for i, m in enumerate(msgs) if "Linux version" in m),
                        at[0])
        self.assertLess(at[0], min(i for i, m in enumerate(msgs) if m.startswith("rcu: ")
                                   or "sched_clock" in m or "KTAP version" in m))


class DeviceTemplate(unittest.TestCase):
    """The lab's device type, rendered as lava-server renders it (a
    sandboxed Jinja2 over lava-server's base.jinja2): a job's context
    names no path on the worker."""

    BASE = pathlib.Path("/usr/share/lava-server/device-types")

    def setUp(self):
        if not (self.BASE / "base.jinja2").is_file():
            self.skipTest("lava-server's device types are not installed (make lab)")
        import jinja2.sandbox
        self.d = pathlib.Path(tempfile.mkdtemp())
        (self.d / "dev.jinja2").write_text("{% extends 'sfp-qemu.jinja2' %}\n"
                                           "{% set device_dir = '/var/lib/sfp-lab/d1' %}\n")
        here = pathlib.Path(__file__).resolve().parent.parent / "lava"
        self.env = jinja2.sandbox.SandboxedEnvironment(
            loader=jinja2.FileSystemLoader([str(self.d), str(here), str(self.BASE)]),
            autoescape=False, trim_blocks=True)

    def tearDown(self):
        shutil.rmtree(self.d)

    def files(self, **context):
        dev = yaml.safe_load(self.env.get_template("dev.jinja2").render(**context))
        opts = " ".join(dev["actions"]["boot"]["methods"]["qemu"]["parameters"]["options"])
        follow = dev["commands"]["connections"]["guest"]["connect"]
        return re.findall(r"(?:logfile=|file:)(\S+)", opts), follow

    def test_run_name(self):
        name = "0123456789abcdef" * 2
        logs, follow = self.files(sfp_run=name, extra_options=["-smp", "2"])
        self.assertEqual(logs, [f"/var/lib/sfp-lab/d1/{name}.console.log",
                                f"/var/lib/sfp-lab/d1/{name}.guest.log"])
        self.assertEqual(follow, f"tail -n +1 -F /var/lib/sfp-lab/d1/{name}.guest.log")

    GOOD = ["-accel", "tcg", "-cpu", "max", "-smp", "8,sockets=2,cores=2,threads=2",
            "-object", "memory-backend-ram,id=m0,size=256M", "-numa",
            "node,nodeid=0,cpus=0-3,memdev=m0", "-m", "512", "-nodefaults", "-display", "none",
            "-no-reboot", "-icount", "shift=1,sleep=off", "-rtc",
            "base=2026-01-01T00:00:00,clock=vm", "-seed", "3"]
    BAD = ("-smp\ncommands:\n  connections:\n    guest:\n      connect: id",
           ["-virtfs", "local,path=/"], ["-smp", "4", "-chardev", "file,path=x"],
           ["-object", "memory-backend-file,mem-path=x"], ["-m"], ["-m", "5 12"],
           ["-m", "512'"], {"-m": "512"}, [["-m", "512"]], ["-display", "vnc=0.0.0.0:0"],
           ["-display", "none", "-display", "vnc=:0"])

    def extra(self, options):
        dev = yaml.safe_load(self.env.get_template("dev.jinja2").render(extra_options=options))
        return dev["actions"]["boot"]["methods"]["qemu"]["parameters"].get("extra"), dev

    def test_options_the_harness_uses(self):
        extra, _ = self.extra(self.GOOD)
        self.assertEqual(extra, self.GOOD)
        self.assertEqual(sfp_lava.lab_options_refused(self.GOOD), "")

    def test_other_options_fail_the_job(self):
        # Anything else becomes an option QEMU refuses, and no text of the
        # job's reaches the device's configuration.
        for bad in self.BAD:
            extra, dev = self.extra(bad)
            self.assertEqual(extra, ["-sfp-lab-refused-the-jobs-extra-options"], bad)
            self.assertEqual(dev["commands"]["connections"]["guest"]["connect"],
                             "tail -n +1 -F /var/lib/sfp-lab/d1/guest.log")
            if isinstance(bad, list) and all(isinstance(o, str) for o in bad):
                self.assertNotEqual(sfp_lava.lab_options_refused(bad), "", bad)

    def test_no_other_value_names_a_file(self):
        for bad in ("../../etc/x", "a; reboot", "ABCDEF0123456789" * 2, "ab", 7, None):
            logs, follow = self.files(sfp_run=bad)
            self.assertEqual(logs, ["/var/lib/sfp-lab/d1/console.log",
                                    "/var/lib/sfp-lab/d1/guest.log"], bad)
            self.assertEqual(follow, "tail -n +1 -F /var/lib/sfp-lab/d1/guest.log")
        self.assertEqual(self.files()[0][0], "/var/lib/sfp-lab/d1/console.log")


class PutBack(unittest.TestCase):
    """sfp lab down --purge puts back what the first lab up on the machine
    found: the lab's files under /etc/lava-server removed, the owners there
    as they were, its lavacli identity deleted, its devices' directory
    removed; what anybody else wrote since stays."""

    FAKE_LAVACLI = """#!/usr/bin/python3
import os, sys, yaml
path = os.path.join(os.environ["XDG_CONFIG_HOME"], "lavacli.yaml")
conf = yaml.safe_load(open(path)) or {}
conf.pop(sys.argv[3], None)
yaml.safe_dump(conf, open(path, "w"))
"""

    def setUp(self):
        from harness import sfp_lab
        self.lab = sfp_lab
        self.d = pathlib.Path(tempfile.mkdtemp())
        self.etc = self.d / "etc" / "lava-server"
        (self.etc / "settings.d").mkdir(parents=True)
        (self.etc / "settings.d" / "00-secret-key.yaml").write_text("SECRET_KEY: x\n")
        (self.etc / "settings.d" / "00-secret-key.yaml").chmod(0o640)
        for sub in ("devices", "device-types", "health-checks"):
            (self.etc / "dispatcher-config" / sub).mkdir(parents=True)
        (self.etc / "dispatcher-config" / "devices" / "theirs-01.jinja2").write_text(
            "{% extends 'qemu.jinja2' %}\n")
        self.config = self.d / "home" / "lavacli.yaml"
        self.config.parent.mkdir()
        self.config.write_text("remote:\n  uri: https://lab.example/RPC2\n")
        self.root = self.d / "var" / "sfp-lab"
        self.root.parent.mkdir()
        self.found = self.d / "var" / "sfp-lab.found"
        self.lavacli = self.d / "lavacli"
        self.lavacli.write_text(self.FAKE_LAVACLI)
        self.lavacli.chmod(0o755)

    def tearDown(self):
        shutil.rmtree(self.d)

    def state(self):
        return sorted((str(p.relative_to(self.d)), p.stat().st_mode, p.stat().st_uid,
                       p.stat().st_gid, p.read_bytes() if p.is_file() else b"")
                      for p in (self.d / "etc").rglob("*"))

    def up(self):
        """What sfp lab up writes and changes."""
        lab, d = self.lab, self.etc / "dispatcher-config"
        (self.etc / "settings.d" / "50-sfp.yaml").write_text(f"# {lab.MARK}: x\n")
        shutil.copy(lab.TEMPLATE, d / "device-types" / "sfp-qemu.jinja2")
        (d / "health-checks" / "sfp-qemu.yaml").write_text(f"# {lab.MARK}: the health check\n")
        for dev in ("sfp-qemu-01", "qemu-01"):
            (d / "devices" / f"{dev}.jinja2").write_text(lab._device_file("sfp-qemu", dev))
        for p in [d, *d.rglob("*")]:
            os.chown(p, 1234, 1234)
        with open(self.config, "a", encoding="utf-8") as f:
            f.write("sfp-lab:\n  uri: http://127.0.0.1:8000/RPC2\n")
        (self.root / "sfp-qemu-01").mkdir(parents=True)

    def keep(self):
        said = []
        self.lab.keep_found(self.found, said.append, self.etc, self.root, self.config)
        return said

    def test_purge_puts_back_what_up_found(self):
        if os.geteuid() != 0:
            self.skipTest("precondition: owners are put back by root only")
        os.chown(self.etc / "dispatcher-config" / "devices" / "theirs-01.jinja2", 4321, 4321)
        before = self.state()
        self.assertEqual(len(self.keep()), 1)
        self.up()
        self.assertEqual(self.keep(), [])  # a second up keeps the first one's record
        # written by somebody else after the record: stays
        (self.etc / "settings.d" / "60-admin.yaml").write_text("x: 1\n")
        left = self.lab.restore_found(self.found, etc=self.etc, root=self.root,
                                      lavacli=str(self.lavacli))
        self.assertEqual(left, [])
        after = self.state()
        self.assertEqual([r for r in after if "60-admin" not in r[0]], before)
        self.assertEqual(len(after), len(before) + 1)
        self.assertEqual(list(yaml.safe_load(self.config.read_text())), ["remote"])
        self.assertFalse(self.root.exists())
        self.assertFalse(self.found.exists())

    def test_a_lavacli_configuration_up_made_is_removed(self):
        self.config.unlink()
        self.keep()
        self.up()
        self.lab.restore_found(self.found, etc=self.etc, root=self.root,
                               lavacli=str(self.lavacli))
        self.assertFalse(self.config.exists())

    def test_a_lab_set_up_before_the_record(self):
        self.up()
        said = self.keep()
        self.assertIn("the lab was set up here before", said[0])
        left = self.lab.restore_found(self.found, etc=self.etc, root=self.root,
                                      lavacli=str(self.lavacli))
        self.assertEqual(left, ["the owners under dispatcher-config (changed before the record)"])
        self.assertEqual(sorted(p.name for p in self.etc.rglob("*.jinja2")), ["theirs-01.jinja2"])
        self.assertFalse((self.etc / "settings.d" / "50-sfp.yaml").exists())
        self.assertFalse(self.root.exists())

    def purge_calls(self, services=""):
        calls, said = [], []

        def run(*cmd, check=True):
            calls.append(" ".join(cmd))
            return "15 main 5432 down postgres /var/lib/x /var/log/x\n" \
                if cmd[0] == "pg_lsclusters" else ""
        with mock.patch.object(self.lab, "down") as down, \
                mock.patch.object(self.lab, "_run", run), \
                mock.patch.object(self.lab, "_cmdlines",
                                  lambda: {9: services} if services else {}), \
                mock.patch.object(self.lab, "restore_found", return_value=[]):
            self.lab.purge(self.d / "lab", said.append, self.found)
        return calls, said, down

    def test_purge_drops_the_database_up_made(self):
        # lab down stopped PostgreSQL already: the purge starts it to drop
        # the database, and stops it again
        self.keep()
        (self.found / "database-made").write_text("lavaserver lavaserver\n")
        calls, said, down = self.purge_calls()
        self.assertEqual(calls, ["pg_lsclusters --no-header", "pg_ctlcluster 15 main start",
                                 "runuser -u postgres -- dropdb --if-exists lavaserver",
                                 "runuser -u postgres -- dropuser --if-exists lavaserver",
                                 "pg_ctlcluster 15 main stop"])
        self.assertEqual(down.call_count, 2)

    def test_purge_leaves_a_database_that_was_there(self):
        self.keep()
        calls, said, _ = self.purge_calls()
        self.assertEqual(calls, [])
        self.assertIn("left: lava-server's database, there before the lab", said[-1])

    def test_purge_refused_while_a_lava_service_runs(self):
        self.keep()
        with self.assertRaisesRegex(self.lab.LabRefused, "a LAVA service still runs"):
            self.purge_calls("/usr/bin/lava-worker --level INFO --url x")

    def test_purge_without_a_record_is_refused(self):
        with mock.patch.object(self.lab, "down") as down, \
                self.assertRaisesRegex(self.lab.LabRefused, "no record"):
            self.lab.purge(self.d / "lab", say=lambda s: None, found=self.found)
        down.assert_not_called()


class SafeLab(unittest.TestCase):
    """sfp lab up leaves a LAVA instance it did not make alone: it
    refuses, naming what it found, before it changes anything."""

    def setUp(self):
        from harness import sfp_lab
        self.lab = sfp_lab
        self.d = pathlib.Path(tempfile.mkdtemp())
        self.etc = self.d / "etc"
        (self.etc / "settings.d").mkdir(parents=True)
        (self.etc / "dispatcher-config" / "devices").mkdir(parents=True)
        self.saved = (sfp_lab._cmdlines, sfp_lab._server_up)
        sfp_lab._cmdlines = lambda: {1: "/sbin/init", 4242: "lava-worker --name w1 --url x"}
        sfp_lab._server_up = lambda timeout=0.0: False

    def tearDown(self):
        self.lab._cmdlines, self.lab._server_up = self.saved
        shutil.rmtree(self.d)

    def test_foreign_instance_found(self):
        dev = self.etc / "dispatcher-config" / "devices" / "qemu-01.jinja2"
        dev.write_text("{% extends 'qemu.jinja2' %}\n{% set netdevice = 'tap' %}\n")
        found = self.lab.foreign(self.d / "lab", 2, self.etc)
        self.assertEqual(found[0], "a LAVA service this lab did not start runs (pid 4242: "
                                   "lava-worker --name w1 --url x)")
        self.assertEqual(found[1], f"the device qemu-01 ({dev}) is not the lab's")
        self.assertEqual(len(found), 2)

    def test_up_refuses_before_any_change(self):
        # what sfp lab up says, and its exit status: refused (2), the
        # lab's directory not even made
        lab = self.d / "lab"
        with mock.patch.object(self.lab.os, "geteuid", lambda: 0), \
                mock.patch.object(self.lab.shutil, "which", lambda t: f"/usr/bin/{t}"), \
                mock.patch.object(self.lab, "_run", lambda *a, **k: "15 main 5432 down"), \
                mock.patch.object(self.lab, "foreign", lambda lab, n: ["the device qemu-01 "
                                                                      "is not the lab's"]), \
                self.assertRaises(self.lab.LabRefused) as cm:
            self.lab.up(lab, 2, 2, say=lambda m: None)
        self.assertEqual(str(cm.exception), "the device qemu-01 is not the lab's; sfp lab up "
                         "runs only a lab of its own and changed nothing (1 such thing(s) found)")
        self.assertEqual(cm.exception.status, 2)
        self.assertFalse(lab.exists())

    def test_foreign_health_check_found(self):
        hc = self.etc / "dispatcher-config" / "health-checks" / "sfp-qemu.yaml"
        hc.parent.mkdir(parents=True)
        hc.write_text("job_name: a lab's own health check\n")
        self.lab._cmdlines = lambda: {}
        self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc),
                         [f"{hc} is not the lab's"])

    def test_configured_server_with_devices_found(self):
        (self.etc / "settings.d" / "00-database.yaml").write_text("NAME: lavaserver\n")
        self.lab._cmdlines = lambda: {}
        saved = self.lab._server_devices
        try:
            self.lab._server_devices = lambda: ["rpi4-01"]
            self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc),
                             ["a lava-server this lab never set up has devices (rpi4-01)"])
            self.lab._server_devices = lambda: []  # as installed: the lab may use it
            self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc), [])
        finally:
            self.lab._server_devices = saved

    def test_device_type_of_an_earlier_lab_is_its_own(self):
        # A template an earlier version of the lab installed (before it
        # carried the mark) is renewed; somebody else's is not touched.
        dt = self.etc / "dispatcher-config" / "device-types" / "sfp-qemu.jinja2"
        dt.parent.mkdir(parents=True)
        self.lab._cmdlines = lambda: {}
        dt.write_text("{# SPDX-License-Identifier: GPL-2.0 #}\n{# sched-fastpath's LAVA device "
                      "type: a QEMU guest on the worker's own\n   host. #}\n")
        self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc), [])
        dt.write_text("{% extends 'base.jinja2' %}\n")
        self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc),
                         [f"{dt} is not the lab's"])

    def test_own_lab_is_not_foreign(self):
        (self.d / "lab").mkdir()
        (self.d / "lab" / "worker.pid").write_text("4242")
        for dtype in ("sfp-qemu", "qemu"):
            for dev in self.lab.devices(2, dtype):
                (self.etc / "dispatcher-config" / "devices" / f"{dev}.jinja2").write_text(
                    self.lab._device_file(dtype, dev))
        (self.etc / "settings.d" / "50-sfp.yaml").write_text(
            "# sched-fastpath lab: the job context variable of its device type\n")
        self.assertEqual(self.lab.foreign(self.d / "lab", 2, self.etc), [])


class WorkersOnline(unittest.TestCase):
    """sfp lab up ends only when the server has every worker Online, pinged
    since it started, and still running a moment later: a worker that
    exits as it starts, or never connects, is an error naming its log,
    not a lab whose jobs wait for ever."""

    SINCE = 1796644800.0  # 20261207T12:00:00 UTC

    def online(self, alive, states, ping="20261207T12:00:05"):
        from harness import sfp_lab
        seq, now = iter(states), [0.0]
        alive = iter(alive) if isinstance(alive, list) else None if alive else iter([False] * 99)
        with mock.patch.object(sfp_lab, "_alive", lambda p: next(alive) if alive else True), \
                mock.patch.object(sfp_lab, "_lavacli", lambda *a, check=True:
                                  f"hostname : w\nstate : {next(seq)}\nlast ping : {ping}\n"):
            sfp_lab._online(pathlib.Path("/lab"), ["w1", "w2"], self.SINCE, 10,
                            clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
        return now[0]

    def test_online(self):
        self.assertEqual(self.online(True, ["Offline", "Offline", "Online", "Online"]), 7.0)

    def test_exited(self):
        from harness import sfp_lab
        with self.assertRaisesRegex(sfp_lab.LabError, r"w1 exited as it started \(see /lab/w1.log"):
            self.online(False, ["Online"])

    def test_exited_once_online(self):
        from harness import sfp_lab
        with self.assertRaisesRegex(sfp_lab.LabError, "w1 exited once the server had it Online"):
            self.online([True, True, False, True], ["Online", "Online"])

    def test_never_online(self):
        from harness import sfp_lab
        with self.assertRaisesRegex(sfp_lab.LabError, "w1 is not Online at the server 10 s"):
            self.online(True, ["Offline"] * 20)

    def test_online_from_an_earlier_lab(self):
        # still Online at the server, but its last ping is older than the start
        from harness import sfp_lab
        with self.assertRaisesRegex(sfp_lab.LabError, "w1 is not Online at the server"):
            self.online(True, ["Online"] * 20, ping="20261207T11:59:00")


class Waiting(unittest.TestCase):
    """A job's wait is counted from its start: a queued job is never
    cancelled by the client; from its start lavacli's own wait runs, with
    the timeout, and a job still running after it is cancelled."""

    def run_states(self, states, timeout_s, finishes_in_time=True):
        from harness import sfp_lab
        calls, waits, now = [], [], [0.0]
        seq = iter(states)

        def fake_run(*cmd, check=True):
            calls.append(cmd[4])
            if cmd[4] == "submit":
                return "7\n"
            if cmd[4] == "show":
                return json.dumps({"state": next(seq), "health": "Complete"})
            return ""

        def fake_wait(job_id, identity, timeout_s=0, poll=5.0):
            waits.append((now[0], timeout_s))
            calls.append("wait")
            if finishes_in_time or "cancel" in calls:
                return "finished"
            return "timeout"
        saved = sfp_lab._run, sfp_lab._wait
        sfp_lab._run, sfp_lab._wait = fake_run, fake_wait
        try:
            said = []
            sub = sfp_lab.submit(pathlib.Path("job.yaml"), timeout_s, poll=30.0,
                                 say=said.append, clock=lambda: now[0],
                                 sleep=lambda s: now.__setitem__(0, now[0] + s))
        finally:
            sfp_lab._run, sfp_lab._wait = saved
        return sub, calls, said, waits

    def test_queued_long_then_run(self):
        # Queued for 10 minutes against a 100 s timeout, then running.
        sub, calls, said, waits = self.run_states(["Submitted"] * 20 + ["Running", "Finished"],
                                                  100)
        self.assertNotIn("cancel", calls)
        self.assertEqual(sub.job_id, "7")
        self.assertEqual(said[0], "LAVA job 7: submitted for 60 s")
        # lavacli's wait, with the timeout, starts when the job does.
        self.assertEqual(waits, [(600.0, 100)])
        self.assertEqual(sub.queued, 600.0)

    def test_running_past_the_timeout_is_cancelled(self):
        sub, calls, said, waits = self.run_states(["Running", "Finished", "Finished"], 100,
                                                  finishes_in_time=False)
        self.assertEqual(calls.count("cancel"), 1)
        self.assertEqual([t for _, t in waits], [100, 300])
        self.assertIn("cancelled", said[-1])

    def test_server_stamps_give_the_queue_time(self):
        from harness import sfp_lab
        saved = sfp_lab._run, sfp_lab._wait
        sfp_lab._run = lambda *cmd, check=True: "9\n" if cmd[4] == "submit" else json.dumps(
            {"state": "Finished", "health": "Complete", "submit_time": "20261206T16:11:10",
             "start_time": "20261206T16:13:23"})
        try:
            sub = sfp_lab.submit(pathlib.Path("job.yaml"), 100, sleep=lambda s: None)
        finally:
            sfp_lab._run, sfp_lab._wait = saved
        self.assertEqual(sub.queued, 133.0)

    def test_no_usable_device_left(self):
        from harness import sfp_lab
        now = [0.0]

        def fake_run(*cmd, check=True):
            if cmd[3:5] == ("jobs", "submit"):
                return "7\n"
            if cmd[3:5] == ("devices", "list"):
                return json.dumps([{"hostname": "sfp-qemu-01", "type": "sfp-qemu",
                                    "health": "Bad"}])
            if cmd[3:5] == ("jobs", "cancel"):
                calls.append("cancel")
                return ""
            return json.dumps({"state": "Submitted"})
        calls = []
        saved = sfp_lab._run
        sfp_lab._run = fake_run
        try:
            with self.assertRaisesRegex(sfp_lab.LabError, "no sfp-qemu device left"):
                sfp_lab.submit(pathlib.Path("job.yaml"), 100, say=lambda m: None,
                               clock=lambda: now[0],
                               sleep=lambda s: now.__setitem__(0, now[0] + s))
        finally:
            sfp_lab._run = saved
        self.assertEqual(calls, ["cancel"])


class Resubmission(unittest.TestCase):
    """A job that ends on an infrastructure fault the kernel did not cause
    is resubmitted; a kernel that died, or a guest that finished, is not."""

    def setUp(self):
        from harness import sfp_lab
        self.lab = sfp_lab
        self.d = pathlib.Path(tempfile.mkdtemp())
        self.console, self.guest = self.d / "console.log", self.d / "guest.log"

    def tearDown(self):
        shutil.rmtree(self.d)

    def fault(self, console, guest, health="Incomplete", error_type="Infrastructure"):
        self.console.write_text(console)
        self.guest.write_text(guest)
        sub = self.lab.Submitted("7", "Finished", health, "sfp-qemu-01", "", 60.0, 1.0,
                                 error_type)
        return self.lab.infrastructure_fault(sub, self.console, self.guest)

    def test_killed_qemu_is_a_fault(self):
        self.assertTrue(self.fault("[    0.000000] Linux version 7.1.5\n", "TAP version 13\n"))

    def test_kernel_panic_is_not(self):
        self.assertFalse(self.fault("[    1.2] Kernel panic - not syncing: Fatal exception\n",
                                    ""))

    def test_finished_guest_is_not(self):
        self.assertFalse(self.fault("Linux version\n", "sfp-done\n"))

    def test_lost_twice_is_no_result(self):
        # QEMU lost in the job and in its resubmission: the boot has no
        # result (sfp_boot makes it BootNoResult), never a failed kernel.
        out = self.d / "lava"
        out.mkdir()
        name = "ab" * 16
        (self.d / "job.yaml").write_text(yaml.safe_dump({"context": {"sfp_run": name}}))
        asked = []

        def fake_submit(job, timeout_s, identity, say=print, resubmit="", device_type=""):
            # Each attempt's QEMU writes its logs in its device's directory.
            asked.append(resubmit)
            dev = self.d / "devices" / f"sfp-qemu-0{len(asked)}"
            dev.mkdir(parents=True)
            (dev / f"{name}.console.log").write_text(f"[    0.0] Linux version 6.1 #{len(asked)}\n")
            (dev / f"{name}.guest.log").write_text("TAP version 13\n")
            return self.lab.Submitted(str(7 + len(asked)), "Finished", "Incomplete",
                                      dev.name, "Connection closed", 60.0, 1.0)

        def fake_record(job_id, identity=""):
            rec = self.lab.LavaRecord()
            rec.error_type = "Infrastructure"
            return rec
        saved = self.lab.submit, self.lab.record, self.lab.DEVICE_ROOT
        self.lab.submit, self.lab.record = fake_submit, fake_record
        self.lab.DEVICE_ROOT = self.d / "devices"
        try:
            with self.assertRaisesRegex(self.lab.InfrastructureFault,
                                        "jobs 8 on sfp-qemu-01, 9 on sfp-qemu-02 .*no result"):
                self.lab.run_job(self.d / "job.yaml", 60, out, say=lambda m: None)
        finally:
            self.lab.submit, self.lab.record, self.lab.DEVICE_ROOT = saved
        self.assertEqual(asked, ["", "8"])
        self.assertEqual([r["job_id"] for r in json.loads((out / "jobs.json").read_text())],
                         ["8", "9"])
        # Each attempt's logs were moved out of its device's directory.
        self.assertIn("#1", (self.d / "console.job-8.log").read_text())
        self.assertIn("#2", self.console.read_text())
        self.assertEqual(list((self.d / "devices").rglob("*.log")), [])

    def test_logs_taken_from_the_device_only(self):
        name = "cd" * 16
        dev = self.d / "devices" / "sfp-qemu-01"
        dev.mkdir(parents=True)
        (dev / f"{name}.console.log").write_text("this job's console\n")
        self.guest.write_text("an earlier attempt's guest\n")
        self.lab.take_logs("sfp-qemu-01", name, self.d, self.d / "devices")
        self.assertEqual(self.console.read_text(), "this job's console\n")
        # The job wrote no guest log: the earlier attempt's is not kept as its.
        self.assertFalse(self.guest.exists())
        # Without a run name nothing is taken (a health check's files stay).
        (dev / "console.log").write_text("a health check's console\n")
        self.lab.take_logs("sfp-qemu-01", "", self.d, self.d / "devices")
        self.assertFalse(self.console.exists())
        self.assertTrue((dev / "console.log").exists())
        self.console.write_text("x")
        # A device name from the server that is not a plain name takes nothing.
        (self.d / "devices" / f"{name}.console.log").write_text("x")
        self.lab.take_logs("../devices", name, self.d, self.d / "devices")
        self.assertFalse(self.console.exists())

    def test_lab_job_without_run_name_refused(self):
        job = self.d / "job.yaml"
        job.write_text(yaml.safe_dump({"context": {"sfp_run": "../x"}}))
        with self.assertRaisesRegex(self.lab.LabError, "wants a run name"):
            self.lab.run_job(job, 60, self.d / "lava", say=lambda m: None)

    def test_lab_down_clears_what_no_client_took(self):
        dev = self.d / "devices" / "sfp-qemu-02"
        dev.mkdir(parents=True)
        for f in ("ef" * 16 + ".console.log", "ef" * 16 + ".guest.log", "console.log",
                  "notes.log"):
            (dev / f).write_text("x")
        said = []
        self.lab.clear_run_logs(self.d / "devices", say=said.append)
        self.assertEqual(sorted(f.name for f in dev.iterdir()), ["console.log", "notes.log"])
        self.assertEqual(said, [f"removed 2 job logs no client took from {self.d / 'devices'}"])

    def test_lab_down_stops_what_a_worker_started(self):
        # a worker's lava-run and QEMU run in sessions of their own: killing
        # the worker's process group leaves them, so lab down stops them too
        lab = self.d / "lab"
        lab.mkdir()
        worker = subprocess.Popen(["sh", "-c", "setsid sleep 60 & exec sleep 60"],
                                  start_new_session=True)
        (lab / "sfp-worker-1.pid").write_text(str(worker.pid))
        for _ in range(100):
            below = self.lab.descendants(worker.pid)
            if below:
                break
            time.sleep(0.05)
        self.assertEqual(len(below), 1)
        said = []
        reaper = threading.Thread(target=worker.wait)  # not a zombie once stopped
        reaper.start()
        with mock.patch.object(self.lab, "_run", lambda *a, **k: None), \
                mock.patch.object(self.lab, "clear_run_logs", lambda **k: None):
            self.lab.down(lab, say=said.append)
        reaper.join(timeout=10)
        self.assertFalse(pathlib.Path(f"/proc/{below[0]}").exists())
        self.assertEqual(said, ["stopped sfp-worker-1 and 1 processes it started"])

    def test_restart_keeps_the_database(self):
        # lab up restarts the server after making its database: the
        # PostgreSQL it started stays up then, and only lab down stops it.
        lab = self.d / "lab"
        lab.mkdir()
        (lab / "postgresql-started").write_text("15 main\n")
        calls = []
        with mock.patch.object(self.lab, "_run", lambda *a, **k: calls.append(a)), \
                mock.patch.object(self.lab, "clear_run_logs", lambda **k: None):
            self.lab.down(lab, say=lambda m: None, keep_database=True)
            self.assertEqual(calls, [])
            self.assertTrue((lab / "postgresql-started").is_file())
            self.lab.down(lab, say=lambda m: None)
        self.assertEqual(calls, [("pg_ctlcluster", "15", "main", "stop")])
        self.assertFalse((lab / "postgresql-started").exists())

    def test_run_name(self):
        job = self.d / "job.yaml"
        for context, want in (({"sfp_run": "ef" * 16}, "ef" * 16), ({"sfp_run": "../x"}, ""),
                              ({}, "")):
            job.write_text(yaml.safe_dump({"context": context}))
            self.assertEqual(self.lab.run_name(job), want)

    def test_other_errors_are_not(self):
        self.assertFalse(self.fault("Linux version\n", "", error_type="LAVATimeout"))
        self.assertFalse(self.fault("Linux version\n", "", health="Complete", error_type=""))


class Targets(unittest.TestCase):
    """LAVA_IDENTITY, LAVA_DEVICE_TYPE, LAVA_IMAGE_DIR, LAVA_IMAGE_URL."""

    def setUp(self):
        from harness import sfp_lab
        self.lab = sfp_lab
        self.d = pathlib.Path(tempfile.mkdtemp())

    def tearDown(self):
        shutil.rmtree(self.d)

    def target(self, **env):
        return self.lab.Target.from_env(env)

    def test_local_lab_by_default(self):
        t = self.target()
        self.assertFalse(t.portable)
        t.check()
        self.assertEqual((t.identity, t.device_type), ("sfp-lab", "sfp-qemu"))

    def test_refusals(self):
        d = str(self.d)
        for env, words in (
                ({"LAVA_IDENTITY": "a b"}, "LAVA_IDENTITY=a b"),
                ({"LAVA_DEVICE_TYPE": "../x"}, "LAVA_DEVICE_TYPE=../x"),
                ({"LAVA_IMAGE_URL": "http://h/"}, "are for a portable job"),
                ({"LAVA_DEVICE_TYPE": "qemu"}, "set both"),
                ({"LAVA_DEVICE_TYPE": "qemu", "LAVA_IMAGE_DIR": d}, "set both"),
                ({"LAVA_DEVICE_TYPE": "qemu", "LAVA_IMAGE_DIR": d,
                  "LAVA_IMAGE_URL": "file:///srv"}, "http:// or https://"),
                ({"LAVA_DEVICE_TYPE": "qemu", "LAVA_IMAGE_DIR": d + "/none",
                  "LAVA_IMAGE_URL": "http://h:8001"}, "not a directory")):
            with self.assertRaises(self.lab.LabError, msg=env) as cm:
                self.target(**env).check()
            self.assertIn(words, str(cm.exception))
            self.assertNotIn("\n", str(cm.exception))

    def test_publish(self):
        t = self.target(LAVA_DEVICE_TYPE="qemu", LAVA_IMAGE_DIR=str(self.d / "www"),
                        LAVA_IMAGE_URL="http://lab:8001/sfp/")
        (self.d / "www").mkdir()
        t.check()
        self.assertTrue(t.portable)
        img = self.d / "bzImage"
        img.write_bytes(b"kernel one")
        url = t.publish(img)
        self.assertRegex(url, r"^http://lab:8001/sfp/[0-9a-f]{16}/bzImage$")
        rel = url.split("/sfp/", 1)[1]
        self.assertEqual((self.d / "www" / rel).read_bytes(), b"kernel one")
        self.assertEqual(t.publish(img), url)  # the same image, the same place
        img.write_bytes(b"kernel two")  # another build of the same name
        other = t.publish(img)
        self.assertNotEqual(other, url)
        self.assertEqual((self.d / "www" / rel).read_bytes(), b"kernel one")
        self.assertEqual(sorted(p.name for p in (self.d / "www").rglob("*") if p.is_file()),
                         ["bzImage", "bzImage"])


if __name__ == "__main__":
    unittest.main()
