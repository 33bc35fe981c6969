# SPDX-License-Identifier: GPL-2.0
"""sfp stress: bad input refused before work, the boot's environment, and
each kernel's verdict from a stand-in sfp run (patched clean or failed, a
splat, baseline's exact expected failures) and the -N tally."""
import io
import pathlib
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

from harness import sfp_data
from harness import sfp_env
from harness import sfp_results
from harness import sfp_stress

D = sfp_data.load()
CHOICE = sfp_env.LineChoice("6.12", "LINE", pathlib.Path("b"), pathlib.Path("p"))
HAVE_TOOLS = all(pathlib.Path(f"/usr/bin/{c}").exists() for c, _ in sfp_stress.TOOLS)


def plan(**kw):
    args = dict(secs=20, vcpus=4, kind="debug", topology="", runs=1, busy=0, kernels=[])
    args.update(kw)
    return sfp_stress.plan(D, **args)


class Refusals(unittest.TestCase):
    def refused(self, pattern, **kw):
        with self.assertRaisesRegex((sfp_stress.StressRefused, sfp_data.DataError), pattern):
            plan(**kw)

    def test_numbers(self):
        self.refused("stress time must be a whole number > 0", secs=0)
        self.refused("-s wants 2 to 8 vCPUs, not '1'", vcpus=1)
        self.refused("-s wants 2 to 8 vCPUs, not '9'", vcpus=9)
        self.refused("-N wants a number of runs > 0", runs=0)
        self.refused("-b wants a number of busy loops", busy=-1)

    def test_kind_and_kernel(self):
        self.refused("kind 'main' has no debug hook", kind="main")
        self.refused("unknown kernel kind 'nosuch'", kind="nosuch")
        self.refused("unknown kernel 'mutant': patched or baseline", kernels=["mutant"])

    @unittest.skipUnless(HAVE_TOOLS, "stress-ng and hackbench")
    def test_defaults(self):
        s = plan(topology="smt2x2x2")
        self.assertEqual((s.kernels, s.vcpus, s.tag()), (("patched",), 8, "debug-smt2x2x2"))
        self.assertEqual(s.out(pathlib.Path("b")), pathlib.Path("b/stress/debug-smt2x2x2"))
        self.assertEqual(plan().out(pathlib.Path("b")), pathlib.Path("b/stress"))


class Env(unittest.TestCase):
    def test_run_env(self):
        s = sfp_stress.Stress(20, 4, "debug", "", 1, 0, ("patched",))
        e = sfp_stress.run_env(s, {"TOPOLOGY": "sock4x2", "APPEND": "quiet"})
        self.assertEqual((e["SMP"], e["MEM"], e["BOOT_TIMEOUT"], e["APPEND"]),
                         ("4", "1024", "960", "sfp.stress=20 quiet"))
        self.assertNotIn("TOPOLOGY", e)
        e = sfp_stress.run_env(sfp_stress.Stress(20, 8, "debug", "smp8", 1, 0, ("patched",)),
                               {"MEM": "2048"})
        self.assertEqual((e["TOPOLOGY"], e["MEM"], e["APPEND"]), ("smp8", "2048", "sfp.stress=20"))


def fake_run(results: str, rc: int = 0, out: str = "", console: str = ""):
    """A stand-in for sfp_run.run_logged: the logs a boot leaves, and its
    RunResult (OUT: the error line it printed, if any)."""
    def run(req, env, output):
        log = pathlib.Path(req.logdir)
        log.mkdir(parents=True)
        (log / "results.tsv").write_text(results)
        (log / "guest.log").write_text(
            "# sfp-stress cycles=3 hotplug=12\n"
            "# light load: 40 newly-idle balance attempts / 2000 idle entries = 0.020\n")
        (log / "console.log").write_text(console)
        output.write_text(out)
        return sfp_stress.sfp_run.RunResult(
            rc, out.removeprefix("sfp: error: ").strip(),
            cases=tuple(sfp_results.read_tsv(log / "results.tsv")))
    return mock.patch.object(sfp_stress.sfp_run, "run_logged", side_effect=run)


def row(case, status):
    suite, test = case.split(".", 1)
    return f"kunit\t{suite}\t{test}\t{status}\t\n"


class Verdicts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = pathlib.Path(self.tmp.name)
        self.msgs = []
        self.s = sfp_stress.Stress(20, 4, "debug", "", 1, 0, ("patched",))

    def tearDown(self):
        self.tmp.cleanup()

    def boot(self, kernel, **kw):
        err = io.StringIO()
        with fake_run(**kw), redirect_stderr(err):
            b = sfp_stress.boot(self.s, kernel, self.out / kernel, self.out, D, {},
                                self.msgs.append, CHOICE)
        return b, err.getvalue()

    def test_clean(self):
        b, _ = self.boot("patched", results=row("a.b", "PASS") + row("c.d", "SKIP"))
        self.assertTrue(b.ok)
        self.assertEqual(self.msgs, ["patched: cycles=3 hotplug=12",
                                     "patched: clean, 1 cases passed"])

    def test_failed(self):
        b, _ = self.boot("patched", results=row("a.b", "FAIL"), rc=1)
        self.assertFalse(b.ok)
        self.assertEqual(self.msgs[-1], "patched: failed: a.b ")

    def test_splat(self):
        b, err = self.boot("patched", results=row("a.b", "PASS"), rc=1,
                           out="sfp: error: the console shows a splat: BUG: KASAN\n",
                           console="ok\n[ 1.0] BUG: KASAN: use-after-free\nnext\n")
        self.assertFalse(b.ok)
        self.assertIn("BUG: KASAN", self.msgs[-1])
        self.assertEqual(err, "[ 1.0] BUG: KASAN: use-after-free\nnext\n")

    def expected(self):
        return sfp_stress.sfp_mutate.baseline_expect(D, sfp_stress.BASELINE_ALSO)

    def test_baseline_exact(self):
        rows = "".join(f"kselftest\t{c.rpartition('.')[0]}\t{c.rpartition('.')[2]}\tFAIL\t\n"
                       for c in self.expected()) + row("x.y", "PASS")
        b, _ = self.boot("baseline", results=rows, rc=1)
        self.assertTrue(b.ok, self.msgs)

    def test_baseline_missed_and_unexpected(self):
        rows = "".join(row(c, "PASS") for c in self.expected()) + row("x.y", "FAIL")
        b, _ = self.boot("baseline", results=rows, rc=1)
        self.assertFalse(b.ok)
        self.assertIn("unexpected failures: x.y;", self.msgs[-1])

    def test_baseline_no_results(self):
        b, _ = self.boot("baseline", results="", rc=1)
        self.assertFalse(b.ok)
        self.assertIn("no results", self.msgs[-1])

    def test_tally(self):
        s = sfp_stress.Stress(20, 4, "debug", "", 2, 0, ("patched",))
        stdout = io.StringIO()
        with fake_run(results=row("a.b", "PASS")), redirect_stdout(stdout):
            ok = sfp_stress._tally(s, "patched", self.out, D, {}, self.msgs.append, CHOICE)
        self.assertTrue(ok)
        text = (self.out / "patched-runs.txt").read_text()
        self.assertIn("patched: 2 of 2 runs clean", text)
        self.assertIn("0.020 (40/2000)", text)
        self.assertEqual(len(text.splitlines()), 5)


if __name__ == "__main__":
    unittest.main()
