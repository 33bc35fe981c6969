# SPDX-License-Identifier: GPL-2.0
"""sfp prepare: every bad source refused in one line before anything is
written; a work tree made from a git checkout and a directory (branches
base, series-base, baseline, patched; its records); reused when up to
date, its series applied again when patches/ changed, refused over a
user's edits; a patch that does not go in leaves nothing behind."""
import os
import pathlib
import subprocess
import unittest
from unittest import mock

from harness import sfp_data
from harness import sfp_prepare
from harness.tests.test_series import ENV, Tree, edit, git

D = sfp_data.load()
P = pathlib.Path


class Meta(unittest.TestCase):
    def test_source_from_meta(self):
        f = sfp_prepare._source_from_meta
        self.assertEqual(f("dir:/a/b@c"), "/a/b@c")
        self.assertEqual(f("git:/src/linux@0123abcd"), "/src/linux")
        self.assertEqual(f("tar:/usr/src/x.tar.xz@1-2"), "/usr/src/x.tar.xz")

    def test_hint(self):
        self.assertIn("install linux-source-6.12 (make setup)", sfp_prepare.source_hint(D, "6.12"))
        self.assertIn("no Debian package carries 7.1", sfp_prepare.source_hint(D, "7.1"))

    def test_space(self):
        with mock.patch.object(sfp_prepare.shutil, "disk_usage",
                               return_value=mock.Mock(free=1 << 30)):
            with self.assertRaisesRegex(sfp_prepare.PrepareError,
                                        "a new work tree needs about 3 GiB free where / is; "
                                        "there are 1 GiB"):
                sfp_prepare.need_space(P("/no/such/dir"), 3, "a new work tree", {})
            sfp_prepare.need_space(P("/"), 3, "x", {"SFP_NO_SPACE_CHECK": "1"})


class Prepare(Tree):
    def setUp(self):
        super().setUp()
        self.t = P(self.tmp.name)
        self.env = dict(ENV, PATCHES=str(self.pd), BUILD=str(self.t / "build"),
                        SFP_CACHE=str(self.t / "cache"), SFP_NO_SPACE_CHECK="1")
        self.env.pop("KSRC", None)
        self.env.pop("LINE", None)  # the default line, 6.12
        self.msgs = []
        patch = mock.patch.object(sfp_prepare, "is_kernel_tree", return_value=True)
        patch.start()
        self.addCleanup(patch.stop)
        committer = mock.patch.dict(os.environ, {})
        committer.start()
        self.addCleanup(committer.stop)

    def prepare(self, src, wt="wt", **env):
        return sfp_prepare.prepare(D, dict(self.env, **env), str(src), str(self.t / wt),
                                   self.msgs.append)

    def refused(self, pattern, src, wt="wt", **env):
        with self.assertRaisesRegex(sfp_prepare.PrepareError, pattern):
            self.prepare(src, wt, **env)
        self.assertFalse((self.t / wt).exists())
        self.assertFalse((self.t / f"{wt}.new").exists())

    def test_refusals(self):
        self.refused("kernel source '.*/nope' does not exist", self.t / "nope")
        self.refused("no source for the 7.1 line: no Debian package carries 7.1", "",
                     LINE="7.1")
        edit(self.src, "Makefile", "PATCHLEVEL = 12", "PATCHLEVEL = 1")
        git(self.src, "commit", "-q", "-am", "6.1")
        self.refused("is Linux 6.1.118, not on the 6.12 line: give it as KSRC=", self.src)
        edit(self.src, "Makefile", "PATCHLEVEL = 1", "PATCHLEVEL = 12")
        self.refused("has uncommitted changes; commit or stash them", self.src)
        git(self.src, "commit", "-q", "-am", "6.12")
        with self.assertRaisesRegex(sfp_prepare.PrepareError, "is inside the work tree"):
            self.prepare(self.src, wt="src/..")
        (self.t / "f.zip").write_text("x")
        self.refused("is neither a directory nor a .tar", self.t / "f.zip")
        (self.t / "busy").mkdir()
        (self.t / "busy" / "x").write_text("mine\n")
        with self.assertRaisesRegex(sfp_prepare.PrepareError,
                                    "'.*busy' exists and is not a work tree; move it away"):
            self.prepare(self.src, wt="busy")
        self.assertEqual((self.t / "busy" / "x").read_text(), "mine\n")

    def test_make_reuse_and_again(self):
        wt = self.prepare(self.src)
        self.assertEqual(git(wt, "rev-parse", "--abbrev-ref", "HEAD").strip(), "patched")
        self.assertEqual(git(wt, "rev-list", "--count", "base..series-base").strip(), "2")
        self.assertEqual(git(wt, "rev-list", "--count", "series-base..baseline").strip(), "1")
        self.assertEqual(git(wt, "rev-list", "--count", "baseline..patched").strip(), "3")
        self.assertEqual(git(wt, "diff", "base", "patched~1", "--", "kernel/sched/fair.c"), "")
        src_id = f"git:{self.src.resolve()}@{git(self.src, 'rev-parse', 'HEAD').strip()}"
        self.assertEqual(sfp_prepare.wt_meta(wt, "source"), src_id)
        self.assertEqual(sfp_prepare.wt_meta(wt, "version"), "6.12.118")
        self.assertEqual(git(wt, "log", "-1", "--format=%cn", "series-base").strip(),
                         "sched-fastpath")
        self.assertTrue(self.msgs[-1].startswith(f"work tree ready: {wt} (6.12.118; 2 feature"))
        self.prepare(self.src)
        self.assertIn("is up to date", self.msgs[-1])
        # patches/ changed: applied again, unless the user has edits
        (self.pd / "series").write_text((self.pd / "series").read_text().replace(
            "0004-test.patch\n", ""))
        edit(wt, "kernel/sched/fair.c", "line 1\n", "line 1 mine\n")
        before = git(wt, "rev-parse", "patched", "baseline")
        with self.assertRaisesRegex(sfp_prepare.PrepareError, "has uncommitted edits"):
            self.prepare(self.src)
        git(wt, "checkout", "-q", "--", ".")
        self.prepare(self.src)
        self.assertIn("rebuilding 'baseline' and 'patched'", self.msgs[-1])
        self.assertEqual(git(wt, "rev-list", "--count", "baseline..patched").strip(), "2")
        self.assertNotEqual(git(wt, "rev-parse", "patched", "baseline"), before)
        with self.assertRaisesRegex(sfp_prepare.PrepareError, "was prepared from git:.*, not dir:"):
            plain = self.t / "plain"
            subprocess.run(["cp", "-a", str(self.src), str(plain)], check=True)
            subprocess.run(["rm", "-rf", str(plain / ".git")], check=True)
            self.prepare(plain)

    def test_patch_that_does_not_fit_leaves_nothing(self):
        edit(self.src, "kernel/sched/fair.c", "line 8\n", "line 8 drifted\n")
        edit(self.src, "kernel/sched/fair.c", "line 10 a\n", "line 10 changed\n")
        git(self.src, "commit", "-q", "-am", "drift")
        with self.assertRaisesRegex(sfp_prepare.PrepareError,
                                    "0002-feat-a.patch neither applies to nor is contained in "
                                    ".* first failing hunk in kernel/sched/fair.c at line 7 .*"
                                    "known to work: .*THREEWAY_FROM="):
            self.prepare(self.src)
        self.assertFalse((self.t / "wt").exists())
        self.assertFalse((self.t / "wt.new").exists())


if __name__ == "__main__":
    unittest.main()
