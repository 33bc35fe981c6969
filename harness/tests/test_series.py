# SPDX-License-Identifier: GPL-2.0
"""The series library on a small kernel-like git tree: the series read (roles,
refusals), the subject unfolded, the paths a mini tree needs, features
backed out (contained, absent, stuck), the series applied (a prerequisite
the tree has skipped, a patch that does not fit named with its hunk),
source_fixed and features_end."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

from harness import sfp_series

P = pathlib.Path
# The caller's line sources (SFP_SRC_6_19=... make check) are not the
# tests' business: a test that a line has no source must not find one.
ENV = dict({k: v for k, v in os.environ.items() if not k.startswith("SFP_SRC_")},
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
MAKEFILE = "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\nEXTRAVERSION =\n"
FAIR = "".join(f"line {i}\n" for i in range(1, 41))


def git(d: P, *args: str) -> str:
    return subprocess.run(["git", "-C", str(d), *args], capture_output=True, text=True,
                          check=True, env=ENV).stdout


def edit(d: P, rel: str, old: str, new: str) -> None:
    f = d / rel
    f.write_text(f.read_text().replace(old, new, 1))


def patch(src: P, out: P, rel: str, old: str, new: str, subject: str) -> None:
    """A commit of SRC that changes OLD to NEW in REL, as format-patch OUT."""
    edit(src, rel, old, new)
    git(src, "commit", "-q", "-am", subject)
    out.write_text(git(src, "format-patch", "-1", "--stdout"))


class Tree(unittest.TestCase):
    """A source with two features in it, a prerequisite it lacks, a test
    patch that adds a file, each as a format-patch in patches/L/."""

    _template: tempfile.TemporaryDirectory | None = None

    @classmethod
    def make_template(cls) -> P:
        """The source and its patches, made once and copied for each test."""
        if Tree._template is None:
            Tree._template = tempfile.TemporaryDirectory()
            t = P(Tree._template.name)
            s, pd = t / "src", t / "patches" / "6.12"
            pd.mkdir(parents=True)
            (s / "kernel" / "sched").mkdir(parents=True)
            (s / "Makefile").write_text(MAKEFILE)
            (s / "kernel" / "sched" / "fair.c").write_text(FAIR)
            (s / "kernel" / "sched" / "debug.c").write_text(FAIR)
            git(s, "init", "-q", "-b", "main")
            git(s, "add", "-A")
            git(s, "commit", "-q", "-m", "before")
            patch(s, pd / "0001-fix.patch", "kernel/sched/debug.c", "line 5\n",
                  "line 5 fixed\n", "sched/debug: Fix a thing")
            git(s, "reset", "-q", "--hard", "HEAD~1")
            patch(s, pd / "0002-feat-a.patch", "kernel/sched/fair.c", "line 10\n", "line 10 a\n",
                  "sched/fair: Feature A whose subject is long enough to be folded by git "
                  "format-patch onto a second line")
            patch(s, pd / "0003-feat-b.patch", "kernel/sched/fair.c", "line 30\n",
                  "line 30 b\n", "sched/fair: Feature B")
            (s / "kernel" / "sched" / "tests").mkdir()
            (s / "kernel" / "sched" / "tests" / "t.c").write_text("test\n")
            git(s, "add", "-A")
            git(s, "commit", "-q", "-m", "sched/fair: Add a test")
            (pd / "0004-test.patch").write_text(git(s, "format-patch", "-1", "--stdout"))
            git(s, "reset", "-q", "--hard", "HEAD~1")
            (pd / "series").write_text(
                "# prerequisites\n0001-fix.patch\n# features\n0002-feat-a.patch\n"
                "0003-feat-b.patch  # B\n# generated\n0004-test.patch\n")
        return P(Tree._template.name)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = P(self.tmp.name)
        for d in ("src", "patches"):
            shutil.copytree(self.make_template() / d, t / d, symlinks=True)
        self.src, self.pd = t / "src", t / "patches" / "6.12"
        self.series = sfp_series.load(self.pd)

    def tearDown(self):
        self.tmp.cleanup()

    def work(self) -> P:
        wt = P(self.tmp.name) / "wt"
        subprocess.run(["git", "clone", "-q", "-b", "main", str(self.src), str(wt)], check=True,
                       env=ENV)
        git(wt, "checkout", "-q", "-b", "base")
        return wt


class Read(Tree):
    def test_roles(self):
        self.assertEqual([(p.name, p.role) for p in self.series],
                         [("0001-fix.patch", "prereq"), ("0002-feat-a.patch", "feature"),
                          ("0003-feat-b.patch", "feature"), ("0004-test.patch", "test")])
        self.assertEqual(len(sfp_series.series_hash(self.series)), 16)

    def test_refusals(self):
        (self.pd / "series").write_text("# features\n0009-x.patch\n")
        with self.assertRaisesRegex(sfp_series.SeriesError, "names 0009-x.patch, which is not"):
            sfp_series.load(self.pd)
        (self.pd / "series").write_text("# features\n# nothing\n")
        with self.assertRaisesRegex(sfp_series.SeriesError, "names no patches"):
            sfp_series.load(self.pd)
        with self.assertRaisesRegex(sfp_series.SeriesError, "no series file"):
            sfp_series.load(self.pd / "nope")

    def test_subject_unfolded(self):
        text = (self.pd / "0002-feat-a.patch").read_text()
        self.assertIn("\n ", text.split("Subject: ", 1)[1].split("\n\n", 1)[0])
        self.assertEqual(sfp_series.subject(self.pd / "0002-feat-a.patch"),
                         "sched/fair: Feature A whose subject is long enough to be folded by "
                         "git format-patch onto a second line")

    def test_paths_leave_created_files_out(self):
        self.assertEqual(sfp_series.paths(self.pd),
                         ["Makefile", "kernel/sched/debug.c", "kernel/sched/fair.c"])

    def test_version(self):
        self.assertEqual(sfp_series.makefile_version(MAKEFILE), "6.12.118")
        self.assertEqual(sfp_series.makefile_version("x = 1\n"), "")


class BackOutApply(Tree):
    def test_prepare(self):
        wt = self.work()
        git(wt, "checkout", "-q", "-b", "series-base")
        b = sfp_series.back_out(wt, self.series)
        self.assertEqual((b.state, b.backed_out), ({2: "contained", 1: "contained"}, 2))
        log = git(wt, "log", "--format=%s", "-2")
        self.assertEqual(log.splitlines(), ['Back out "sched/fair: Feature A whose subject is '
                                            'long enough to be folded by git format-patch onto '
                                            'a second line"', 'Back out "sched/fair: Feature B"'])
        self.assertIn("The source (6.12.118) already contains this change; "
                      "patches/6.12/0003-feat-b.patch\n", git(wt, "log", "-1", "--format=%B",
                                                              "HEAD~1"))
        again = sfp_series.back_out(wt, self.series)
        self.assertEqual((again.state, again.backed_out), ({2: "absent", 1: "absent"}, 0))
        git(wt, "checkout", "-q", "-b", "patched")
        a = sfp_series.apply(wt, self.series)
        self.assertIsNone(a.failed)
        self.assertEqual(a.how, {0: "am", 1: "am", 2: "am", 3: "am"})
        self.assertEqual(a.prereq_end, git(wt, "rev-parse", "HEAD~3").strip())
        self.assertEqual(sfp_series.features_end(wt, self.series),
                         git(wt, "rev-parse", "patched~1").strip())
        self.assertEqual([s for _, s in sfp_series.states(wt, self.series)],
                         ["prerequisite, not in the source: applied",
                          "feature, in the source: backed out, re-applied",
                          "feature, in the source: backed out, re-applied", "test: applied"])
        fixed = sfp_series.source_fixed(wt, self.series)
        self.assertEqual(git(wt, "diff", fixed, sfp_series.features_end(wt, self.series)), "")

    def test_prereq_in_source_skipped(self):
        wt = self.work()
        git(wt, "am", "-q", str(self.pd / "0001-fix.patch"))
        head = git(wt, "rev-parse", "HEAD").strip()
        a = sfp_series.apply(wt, self.series, ("prereq",))
        self.assertEqual((a.how, a.prereq_end), ({0: "contained"}, head))

    def test_stuck_and_failed(self):
        wt = self.work()
        edit(wt, "kernel/sched/fair.c", "line 29\n", "line 29 drifted\n")
        edit(wt, "kernel/sched/fair.c", "line 30 b\n", "line 30 c\n")
        git(wt, "commit", "-q", "-am", "drift")
        head = git(wt, "rev-parse", "HEAD").strip()
        b = sfp_series.back_out(wt, self.series)
        self.assertEqual(b.state[2], "stuck")
        self.assertEqual(git(wt, "status", "--porcelain", "--untracked-files=no"), "")
        self.assertNotEqual(git(wt, "rev-parse", "HEAD").strip(), head)  # A backed out
        a = sfp_series.apply(wt, self.series, ("feature",))
        self.assertEqual((a.how, a.failed), ({1: "am"}, 2))
        self.assertRegex(a.fail_where, r"^kernel/sched/fair.c at line 27 \(@@ -27,7 \+27,7 @@")
        self.assertTrue(a.fail_err.startswith("error"), a.fail_err)
        self.assertTrue(git(wt, "log", "-1", "--format=%s").startswith("sched/fair: Feature A"))
        self.assertEqual(git(wt, "status", "--porcelain", "--untracked-files=no"), "")


class MiniTree(Tree):
    def test_from_git_and_dir(self):
        for src, extra in ((self.src, ()), (self.src, ("kernel/sched/missing.c",))):
            d = P(self.tmp.name) / f"mini{len(extra)}"
            sfp_series.mini_tree(src, d, self.pd, "HEAD", extra)
            self.assertEqual(git(d, "ls-files").split(),
                             ["Makefile", "kernel/sched/debug.c", "kernel/sched/fair.c"])
            self.assertEqual(git(d, "log", "--format=%s %D").strip(), "base: 6.12.118 HEAD -> base")
        plain = P(self.tmp.name) / "plain"
        subprocess.run(["cp", "-a", str(self.src), str(plain)], check=True)
        subprocess.run(["rm", "-rf", str(plain / ".git")], check=True)
        d = P(self.tmp.name) / "mini-dir"
        sfp_series.mini_tree(plain, d, self.pd)
        self.assertEqual(len(git(d, "ls-files").split()), 3)
        with self.assertRaises(sfp_series.GitFailed):
            sfp_series.mini_tree(plain, P(self.tmp.name) / "x", self.pd, "HEAD", ("a",))


if __name__ == "__main__":
    unittest.main()
