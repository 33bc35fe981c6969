# SPDX-License-Identifier: GPL-2.0
"""sfp kunit: kunit.py's arguments per architecture, bad input refused
before work, and kunit.py run in the work tree with its exit status and
log (a stand-in kunit.py that prints its arguments)."""
import io
import pathlib
import subprocess
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

from harness import sfp_data
from harness import sfp_kunit

D = sfp_data.load()

P = pathlib.Path


class Command(unittest.TestCase):
    def setUp(self):
        patch = mock.patch.object(sfp_kunit.sfp_env.shutil, "which", return_value="/usr/bin/x")
        patch.start()
        self.addCleanup(patch.stop)

    def test_arches(self):
        x86 = sfp_kunit.command(D, "x86_64", 2, P("/b/kunit/x86_64"), "3")
        self.assertEqual(x86[:5], ["run", "--kunitconfig=kernel/sched/tests",
                                   "--build_dir=/b/kunit/x86_64", "--jobs=3", "--timeout=1800"])
        self.assertEqual(x86[-2:], ["--qemu_args", "-smp 2"])
        arm = sfp_kunit.command(D, "arm64", 4, P("/b/kunit"), "3")
        self.assertIn("--cross_compile=aarch64-linux-gnu-", arm)
        self.assertIn("CC=ccache aarch64-linux-gnu-gcc", arm)
        self.assertNotIn("--qemu_args", sfp_kunit.command(D, "um", 4, P("/b"), "3"))

    def test_refusals(self):
        with self.assertRaisesRegex(sfp_kunit.KunitError, "--arch wants one of x86_64, arm64, um, "
                                    "not 'riscv'"):
            sfp_kunit.command(D, "riscv", 2, P("/b"), "3")
        with self.assertRaisesRegex(sfp_kunit.KunitError, "-s wants a number of vCPUs > 0"):
            sfp_kunit.command(D, "x86_64", 0, P("/b"), "3")
        with mock.patch.object(sfp_kunit.sfp_env.shutil, "which", side_effect=lambda c: None
                               if c == "aarch64-linux-gnu-gcc" else "/x"):
            with self.assertRaisesRegex(sfp_kunit.KunitError, "gcc-aarch64-linux-gnu"):
                sfp_kunit.command(D, "arm64", 2, P("/b"), "3")


class Run(unittest.TestCase):
    def test_stand_in(self):
        with tempfile.TemporaryDirectory() as d:
            b = P(d)
            with self.assertRaisesRegex(sfp_kunit.KunitError, "no work tree"):
                sfp_kunit.run(D, b, "um", 1, {}, lambda m: None)
            t = b / "tree"
            (t / "tools" / "testing" / "kunit").mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(t)], check=True)
            with self.assertRaisesRegex(sfp_kunit.KunitError, "no kernel/sched/tests/.kunitconfig"):
                sfp_kunit.run(D, b, "um", 1, {}, lambda m: None)
            (t / "kernel" / "sched" / "tests").mkdir(parents=True)
            (t / "kernel" / "sched" / "tests" / ".kunitconfig").write_text("")
            (t / "tools" / "testing" / "kunit" / "kunit.py").write_text(
                "import sys\nprint(' '.join(sys.argv[1:3]))\nsys.exit(2)\n")
            out = io.StringIO()
            with redirect_stdout(out):
                rc = sfp_kunit.run(D, b, "um", 1, {"PATH": "/usr/bin:/bin", "ACCEL": "kvm"},
                                   lambda m: None)
            self.assertEqual(rc, 2)
            self.assertEqual(out.getvalue(), "run --kunitconfig=kernel/sched/tests\n")
            self.assertEqual((b / "kunit" / "um.log").read_text(), out.getvalue())


class WithoutKvm(unittest.TestCase):
    CMD = ["python3", "kunit.py", "run"]

    def test_accel_kvm_or_no_device_leaves_it(self):
        self.assertEqual(sfp_kunit.without_kvm(self.CMD, {"ACCEL": "kvm"}, print), self.CMD)
        with mock.patch.object(sfp_kunit.pathlib.Path, "exists", return_value=False):
            self.assertEqual(sfp_kunit.without_kvm(self.CMD, {}, print), self.CMD)

    def test_hidden_as_root(self):
        with mock.patch.object(sfp_kunit.pathlib.Path, "exists", return_value=True), \
                mock.patch.object(sfp_kunit.os, "geteuid", return_value=0), \
                mock.patch.object(sfp_kunit.shutil, "which", return_value="/usr/bin/unshare"):
            got = sfp_kunit.without_kvm(self.CMD, {"ACCEL": "tcg"}, print)
        self.assertEqual(got[:2], ["unshare", "--mount"])
        self.assertIn("mount --bind /dev/null /dev/kvm", " ".join(got))
        self.assertEqual(got[-3:], self.CMD)

    def test_not_root_warns(self):
        said = []
        with mock.patch.object(sfp_kunit.pathlib.Path, "exists", return_value=True), \
                mock.patch.object(sfp_kunit.os, "geteuid", return_value=1000):
            self.assertEqual(sfp_kunit.without_kvm(self.CMD, {}, said.append), self.CMD)
        self.assertIn("cannot be hidden", said[0])


class Results(unittest.TestCase):
    DOC = {"name": "KUnit Test Group", "test_cases": [], "sub_groups": [
        {"name": "sched_fair_tg_load_avg", "sub_groups": [],
         "test_cases": [{"name": "root_update_skipped", "status": "PASS"},
                        {"name": "child_tg_propagated", "status": "SKIP"}]},
        {"name": "sched_fair_overload_set", "sub_groups": [],
         "test_cases": [{"name": "one_to_two_sets", "status": "FAIL"},
                        {"name": "zero_to_one_leaves", "status": "ERROR"}]}]}

    def test_cases_from_json(self):
        got = sfp_kunit.cases(self.DOC)
        self.assertEqual(got["sched_fair_tg_load_avg.root_update_skipped"], "PASS")
        self.assertEqual(got["sched_fair_overload_set.zero_to_one_leaves"], "ERROR")
        self.assertEqual(len(got), 4)
        o = sfp_kunit.Outcome(0, 10, got)
        self.assertEqual(o.counts(), "1 passed, 2 failed, 1 skipped (4 cases)")

    def test_differences(self):
        a = sfp_kunit.Outcome(0, 10, {"s.a": "PASS", "s.b": "PASS"})
        b = sfp_kunit.Outcome(0, 11, {"s.a": "PASS", "s.b": "FAIL"})
        c = sfp_kunit.Outcome(0, 12, {"s.a": "PASS"})
        self.assertEqual(sfp_kunit.differences([a, a, a]), [])
        self.assertEqual(sfp_kunit.differences([a, b]), ["s.b: PASS FAIL"])
        self.assertEqual(sfp_kunit.differences([a, c]), ["s.b: PASS absent"])

    def test_runs_refused(self):
        with self.assertRaisesRegex(sfp_kunit.KunitError, "--runs wants"):
            sfp_kunit.run(D, P("/nonexistent"), "um", 1, {}, print, runs=0)


if __name__ == "__main__":
    unittest.main()
