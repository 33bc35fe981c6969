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
            self.assertEqual(sfp_lava.count_in_logs(d / "console.log", d / "guest.log"),
                             {"kunit": 3, "guest": 2})
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
        # --raw): LAVA's records of it and the logs made from it agree.
        import gzip
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            fixture = pathlib.Path(__file__).parent / "fixtures" / "lava-portable-job.log.gz"
            (d / "lava.log").write_bytes(gzip.decompress(fixture.read_bytes()))
            sfp_lava.logs_from_job(d / "lava.log", d / "console.log", d / "guest.log")
            rec = sfp_lava.parse_log(d / "lava.log")
            self.assertEqual(rec.job_result, "pass")
            self.assertEqual((rec.count("kunit"), rec.count("guest")), (33, 20))
            self.assertEqual(sfp_lava.lava_check(rec, d / "console.log", d / "guest.log"), [])
            guest = (d / "guest.log").read_text()
            self.assertTrue(guest.startswith("sfp-begin: guest_preconditions\n"))
            self.assertTrue(guest.endswith("sfp-done\n"))
            self.assertNotIn("sfp-begin", (d / "console.log").read_text().split(
                "sfp-begin: guest_preconditions")[0])
            self.assertIn("-no-reboot", sfp_lava.boot_command(d / "lava.log"))
        finally:
            shutil.rmtree(d)


class Targets(unittest.TestCase):
    """LAVA_IDENTITY, LAVA_DEVICE_TYPE, LAVA_IMAGE_DIR, LAVA_IMAGE_URL."""

    def setUp(self):
        import sfp_lab
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
