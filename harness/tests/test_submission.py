# SPDX-License-Identifier: GPL-2.0
"""sfp submission: what is posted (the upstream tier, the certification
tier only when asked), as whom (the placeholder and a missing identity
refused), the cover letter and its results, and the stock worktree the
posting is made in; the refusal of a non-empty output directory before
any work."""
import json
import os
import pathlib
import subprocess
import tempfile
import unittest
from unittest import mock

from harness import sfp_data
from harness import sfp_series
from harness import sfp_submission

D = sfp_data.load()
NO_CONFIG = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
             "GIT_CONFIG_COUNT": "0"}


def git(tree: pathlib.Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(tree), *sfp_series.GIT_ID, *args], check=True,
                   capture_output=True)


class Identity(unittest.TestCase):
    def ident(self, name: str | None, email: str | None,
              trial: bool = False) -> tuple[tuple[str, str], list[str]]:
        said: list[str] = []
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ, NO_CONFIG):
            t = pathlib.Path(d)
            subprocess.run(["git", "init", "-q", str(t)], check=True)
            if name:
                git(t, "config", "user.name", name)
            if email:
                git(t, "config", "user.email", email)
            return sfp_submission.identity(t, said.append, trial), said

    def test_refused(self):
        for name, email, why in ((None, None, "not set"),
                                 ("sched-fastpath", "me@kernel.org", "placeholder"),
                                 ("Me", "sched-fastpath@example.org", "placeholder")):
            with self.assertRaisesRegex(sfp_submission.SubmissionError, why):
                self.ident(name, email)

    def test_taken(self):
        self.assertEqual(self.ident("A Developer", "dev@kernel.org"),
                         (("A Developer", "dev@kernel.org"), []))
        for email in ("dev@lab.example", "dev@example.org", "dev@kernel.test"):
            with self.assertRaisesRegex(sfp_submission.SubmissionError, "reserved domain"):
                self.ident("A Developer", email)
        _, said = self.ident("A Developer", "dev@lab.example", trial=True)
        self.assertIn("--trial", said[0])


class Cover(unittest.TestCase):
    def test_upstream_only(self):
        text = sfp_submission.cover_text(False, [])
        self.assertTrue(text.startswith("sched/fair: "))
        self.assertIn("This patch checks", text)
        self.assertNotIn("not for merging", text)
        self.assertNotIn("{", text)

    def test_with_cert_and_results(self):
        text = sfp_submission.cover_text(True, ["kunit.py run ...", "  um: 17 passed"])
        self.assertIn("Patch 1 checks", text)
        self.assertIn("not for merging", text)
        self.assertTrue(text.endswith("  um: 17 passed\n"))

    def test_results_of_this_tree_only(self):
        with tempfile.TemporaryDirectory() as d:
            b = pathlib.Path(d)
            (b / "kunit").mkdir()
            for arch, tree, same in (("um", "t1", True), ("x86_64", "t1", False),
                                     ("arm64", "t0", True)):
                (b / "kunit" / f"stock-{arch}.record.json").write_text(json.dumps(
                    {"tree": tree, "version": "7.1.5", "arch": arch, "vcpus": 4, "runs": 10,
                     "result": "17 passed, 0 failed, 0 skipped (17 cases)", "identical": same,
                     "all_exit_0": True, "seconds": [3, 8]}))
            got = sfp_submission.results(b, "t1", "7.1.5")
            self.assertEqual(len(got), 4)
            self.assertIn("on 7.1.5 with this patch,", got[0])
            self.assertEqual(got[1], "10 runs per architecture:")
            self.assertEqual(got[2], "  UML (kunit.py's default): 17 passed, 0 failed, "
                             "0 skipped (17 cases), the same in every run")
            self.assertIn("-smp 4", got[3])
            self.assertIn("NOT the same", got[3])
            self.assertEqual(sfp_submission.results(b, "t9", "7.1.5"), [])


class Mutants(unittest.TestCase):
    def test_quoted_for_this_patch_and_version_only(self):
        with tempfile.TemporaryDirectory() as d:
            b = pathlib.Path(d)
            (b / "kunit").mkdir()
            (b / "kunit" / "mutants-um.record.json").write_text(json.dumps(
                {"version": "7.1.5", "arch": "um", "patch": "p1", "total": 53, "caught": 30,
                 "no_build": 1, "rows": []}))
            got = " ".join(" ".join(sfp_submission.mutant_results(b, "p1", "7.1.5")).split())
            self.assertIn("Each of 53 one-line changes", got)
            self.assertIn("30 make a case fail under kunit.py (um), 1 do not build, 22 pass",
                          got)
            self.assertEqual(sfp_submission.mutant_results(b, "p2", "7.1.5"), [])
            self.assertEqual(sfp_submission.mutant_results(b, "p1", "6.19.0"), [])


class MutantRows(unittest.TestCase):
    def test_caught_needs_a_build_and_a_failure(self):
        from harness import sfp_kunit
        self.assertTrue(sfp_kunit.MutantRow("m", "", True, ["s.c"]).caught)
        self.assertFalse(sfp_kunit.MutantRow("m", "", True, []).caught)
        self.assertFalse(sfp_kunit.MutantRow("m", "", False, []).caught)


class Tiers(unittest.TestCase):
    def test_every_line(self):
        for line in D.line_names():
            up, cert = sfp_series.tiers(sfp_series.load(D.root / "patches" / line))
            self.assertEqual([sfp_series.subject(p.path) for p in up],
                             ["sched/fair: Add KUnit tests for the root group and overload "
                              "fast paths"], line)
            self.assertTrue(cert and all("out-of-tree certification" in
                                         sfp_series.subject(p.path) for p in cert), line)


class Stock(unittest.TestCase):
    def test_made_again_from_base(self):
        with tempfile.TemporaryDirectory() as d:
            t, dest = pathlib.Path(d) / "tree", pathlib.Path(d) / "stock"
            subprocess.run(["git", "init", "-q", "-b", "base", str(t)], check=True)
            (t / "f").write_text("one\n")
            git(t, "add", "f")
            git(t, "commit", "-q", "-m", "base")
            git(t, "checkout", "-q", "-b", "work")
            (t / "f").write_text("two\n")
            git(t, "commit", "-q", "-am", "sched: two")
            git(t, "format-patch", "-q", "-1", "-o", d)
            patch = sfp_series.Patch(next(pathlib.Path(d).glob("0001-*.patch")), "test")
            sfp_series.stock_worktree(t, dest, [patch])
            self.assertEqual((dest / "f").read_text(), "two\n")
            (dest / "junk").write_text("x")
            sfp_series.stock_worktree(t, dest, [patch])  # again: from base, cleaned
            self.assertEqual((dest / "f").read_text(), "two\n")
            self.assertFalse((dest / "junk").exists())
            # A worktree whose repository metadata is gone is made again.
            (dest / ".git").write_text("gitdir: /nonexistent\n")
            sfp_series.stock_worktree(t, dest, [patch])
            self.assertEqual((dest / "f").read_text(), "two\n")
            git(t, "checkout", "-q", "base")
            (t / "f").write_text("three\n")
            git(t, "commit", "-q", "-am", "three")
            with self.assertRaisesRegex(sfp_series.SeriesError, "does not apply"):
                sfp_series.stock_worktree(t, dest, [patch])
            (pathlib.Path(d) / "plain").mkdir()
            with self.assertRaisesRegex(sfp_series.SeriesError, "not a worktree"):
                sfp_series.stock_worktree(t, pathlib.Path(d) / "plain", [patch])


class Refusals(unittest.TestCase):
    def test_refusals(self):
        with tempfile.TemporaryDirectory() as d:
            b = pathlib.Path(d)
            p = D.root / "patches" / "6.12"
            with self.assertRaisesRegex(sfp_submission.SubmissionError, "no work tree at"):
                sfp_submission.write("6.12", b, p, None, lambda m: None)
            (b / "tree" / ".git").mkdir(parents=True)
            (b / "tree" / "scripts").mkdir()
            (b / "tree" / "scripts" / "get_maintainer.pl").write_text("")
            subprocess.run(["git", "init", "-q", str(b / "tree")], check=True)
            git(b / "tree", "config", "user.name", "A Developer")
            git(b / "tree", "config", "user.email", "dev@kernel.org")
            (b / "out").mkdir()
            (b / "out" / "mine").write_text("x")
            with self.assertRaisesRegex(sfp_submission.SubmissionError, "is not empty"):
                sfp_submission.write("6.12", b, p, b / "out", lambda m: None)
            self.assertEqual((b / "out" / "mine").read_text(), "x")


if __name__ == "__main__":
    unittest.main()
