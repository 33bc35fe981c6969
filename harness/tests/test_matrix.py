# SPDX-License-Identifier: GPL-2.0
"""sfp matrix's checks of one version on the small tree of test_series: a
source with both features (contained, backs out, applies, reproduced),
one whose feature drifted (stuck without a three-way source: no
baseline), and the archive's versions in sort -V's order."""
import pathlib
import subprocess
import unittest

from harness import sfp_matrix
from harness.sfp_results import Case
from harness.tests.test_series import Tree, edit, git

P = pathlib.Path


class CheckVersion(Tree):
    def test_source_with_both_features(self):
        row = sfp_matrix.check_version("6.12", "6.12.118", self.src, P(self.tmp.name) / "m",
                                       self.pd, None)
        self.assertEqual((row.have, row.drift, row.absent, row.base, row.applies, row.repro),
                         (" 0002 0003", "", "", "yes", "am", "identical"))
        self.assertTrue(row.ok)
        self.assertEqual(row.md(), "| 6.12 | 6.12.118 | 0002 0003 | none | none | yes | am | "
                                   "identical |")

    def test_drifted_feature_without_threeway(self):
        edit(self.src, "kernel/sched/fair.c", "line 29\n", "line 29 drifted\n")
        edit(self.src, "kernel/sched/fair.c", "line 30 b\n", "line 30 c\n")
        git(self.src, "commit", "-q", "-am", "drift")
        row = sfp_matrix.check_version("6.12", "6.12.107", self.src, P(self.tmp.name) / "m",
                                       self.pd, None)
        self.assertEqual((row.have, row.drift, row.base, row.applies, row.repro),
                         (" 0002", " 0003", "no: 0003 does not back out",
                          "n/a (no baseline)", "n/a"))
        self.assertFalse(row.ok)
        self.assertFalse(row.threeway)

    def test_source_without_features(self):
        git(self.src, "reset", "-q", "--hard", "HEAD~2")
        row = sfp_matrix.check_version("6.12", "6.12.1", self.src, P(self.tmp.name) / "m",
                                       self.pd, None)
        self.assertEqual((row.have, row.absent, row.base, row.applies), ("", " 0002 0003", "yes",
                                                                        "am"))
        self.assertFalse(row.ok)  # a source with no feature is not one the series is for

    def test_unreadable_source(self):
        row = sfp_matrix.check_version("6.12", "6.12.9", P(self.tmp.name) / "none.tar.xz",
                                       P(self.tmp.name) / "m", self.pd, None)
        self.assertTrue(row.note.startswith("not checked: "), row.note)
        self.assertFalse(row.ok)
        self.assertTrue(row.md().startswith("| 6.12 | 6.12.9 | not checked: "))


class Versions(unittest.TestCase):
    def test_order_is_sort_v(self):
        vs = ["6.12.107-1~deb12u1", "6.12.118-1~deb12u1", "6.12.11-1", "6.1.192-3",
              "6.1.192-2", "6.1.99-1", "6.1.192-3~bpo1", "1:6.1.5-1"]
        want = subprocess.run(["sort", "-V", "-r"], input="\n".join(vs) + "\n",
                              capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(sorted(vs, key=sfp_matrix._vkey, reverse=True), want)


class JobSet(unittest.TestCase):
    """sfp matrix -j: every version built first, then the boots as a job
    set; the boots table is the one a run in turn gives."""

    def setUp(self):
        import tempfile
        from harness import sfp_repeat
        from harness import sfp_run
        self.rp, self.run = sfp_repeat, sfp_run
        self.tmp = tempfile.TemporaryDirectory()
        self.m = P(self.tmp.name)
        self.saved = (sfp_repeat.build_saved, sfp_repeat.run_jobs)
        self.calls = []

        def build_saved(req, out, env):
            self.calls.append(("build", env["KSRC"]))
            if "bad" in env["KSRC"]:
                raise sfp_repeat.RepeatFailed("build failed")
            (out / "images").mkdir(parents=True)
            return out / "images", sfp_run.RunResult(
                0, obj=out / "images", stages=(("tree", 3), ("build", 300), ("guest", 4)))

        def run_jobs(jobs, workers, env, say):
            done = []
            for j in jobs:
                self.calls.append(("boot", j.env["KSRC"], workers))
                cases = tuple(Case("kunit", "s", f"c{i}", "PASS") for i in range(46))
                res = sfp_run.RunResult(0, cases=cases, stages=(("boot", 25), ("tests", 2)))
                done.append(sfp_repeat.Done(j, 27.0, 0, 46, 0, result=res))
            return done
        sfp_repeat.build_saved, sfp_repeat.run_jobs = build_saved, run_jobs

    def tearDown(self):
        self.rp.build_saved, self.rp.run_jobs = self.saved
        self.tmp.cleanup()

    def plan(self, v, src):
        row = sfp_matrix.Row("6.1", v, have=" 0002 0003", base="yes", applies="am",
                             repro="identical")
        return sfp_matrix.boot_plan(row, P(src), self.m, self.m, {"LINE": "6.12", "PATH": "/b"})

    def test_builds_first_then_boots(self):
        plans = [self.plan("6.1.192", "/s/new.tar.xz"), self.plan("6.1.90", "/s/bad.tar.xz"),
                 self.plan("6.1.5", "/s/old.tar.xz")]
        self.assertNotIn("LINE", plans[0].env)
        self.assertEqual(plans[0].env["BUILD"], str(self.m / "build-6.1.192"))
        stages = self.run.Stages(None)
        rows = sfp_matrix.boot_set(plans, self.m, 2, stages, lambda s: None)
        self.assertEqual([c[0] for c in self.calls], ["build"] * 3 + ["boot"] * 2)
        self.assertEqual(self.calls[3:], [("boot", "/s/new.tar.xz", 2),
                                          ("boot", "/s/old.tar.xz", 2)])
        self.assertEqual(rows[0], ("| 6.1 | 6.1.192 | 46 passed, 0 failed | tree 3s, build 300s, "
                                   "guest 4s, boot 25s, tests 2s |", True))
        self.assertFalse(rows[1][1])
        self.assertIn("the build failed", rows[1][0])
        self.assertTrue(rows[2][1])
        self.assertIn("# 2 boots", (self.m / "jobs.tsv").read_text())

    def test_not_booted_without_identical_checks(self):
        row = sfp_matrix.Row("6.1", "6.1.1", repro="differs: fair.c ")
        self.assertIsNone(sfp_matrix.boot_plan(row, P("/s"), self.m, self.m, {}))


if __name__ == "__main__":
    unittest.main()
