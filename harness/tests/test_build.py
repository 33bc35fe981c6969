# SPDX-License-Identifier: GPL-2.0
"""sfp build-kernel: the options a .config lacks of what the fragments
asked (the later fragment's request counts; an option asked off and
absent is met unless strict), the make variables of a reproducible
build, and a build refused before it starts."""
import os
import pathlib
import subprocess
import tempfile
import unittest
from unittest import mock

from harness import sfp_build

CONFIG = """CONFIG_A=y
CONFIG_B=m
# CONFIG_C is not set
CONFIG_N=16
"""


class Unmet(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)
        (self.t / ".config").write_text(CONFIG)

    def tearDown(self):
        self.tmp.cleanup()

    def frag(self, name, text):
        (self.t / name).write_text(text)
        return self.t / name

    def unmet(self, *frags, strict=False):
        return sfp_build.config_unmet(self.t / ".config", list(frags), strict)

    def test_met(self):
        f = self.frag("a", "CONFIG_A=y\n# CONFIG_C is not set\n# CONFIG_GONE is not set\n# x\n")
        self.assertEqual(self.unmet(f), [])

    def test_unmet(self):
        f = self.frag("a", "CONFIG_B=y\nCONFIG_D=y\n# CONFIG_A is not set\nCONFIG_C=y\n"
                           "CONFIG_N=32\n")
        self.assertEqual(self.unmet(f), [
            "CONFIG_B=y (Kconfig gives CONFIG_B=m)", "CONFIG_D=y (no such option)",
            "CONFIG_A=n (Kconfig gives CONFIG_A=y)", "CONFIG_C=y (Kconfig leaves it off)",
            "CONFIG_N=32 (Kconfig gives CONFIG_N=16)"])

    def test_later_fragment_counts(self):
        first = self.frag("a", "CONFIG_D=y\nCONFIG_A=m\n")
        later = self.frag("b", "# CONFIG_D is not set\nCONFIG_A=y\n")
        self.assertEqual(self.unmet(first, later), [])
        self.assertEqual(self.unmet(later, first), ["CONFIG_D=y (no such option)",
                                                    "CONFIG_A=m (Kconfig gives CONFIG_A=y)"])

    def test_strict(self):
        f = self.frag("a", "# CONFIG_GONE is not set\n")
        self.assertEqual(self.unmet(f, strict=True), ["CONFIG_GONE=n (no such option)"])


class Reproducible(unittest.TestCase):
    def test_stamp_from_the_last_commit(self):
        with tempfile.TemporaryDirectory() as t:
            env = dict(os.environ, GIT_COMMITTER_DATE="2025-03-04T05:06:07+02:00",
                       GIT_AUTHOR_DATE="2025-03-04T05:06:07+02:00", GIT_AUTHOR_NAME="a",
                       GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")
            subprocess.run(["git", "init", "-q", t], check=True)
            subprocess.run(["git", "-C", t, "commit", "-q", "--allow-empty", "-m", "x"],
                           env=env, check=True)
            self.assertEqual(sfp_build.fixed_identity(pathlib.Path(t)),
                             ["KBUILD_BUILD_USER=sched-fastpath", "KBUILD_BUILD_HOST=qemu",
                              "KBUILD_BUILD_VERSION=1",
                              "KBUILD_BUILD_TIMESTAMP=Tue Mar 04 03:06:07 UTC 2025"])
            # not a git tree: a constant
            plain = pathlib.Path(t) / "plain"
            plain.mkdir()
            with mock.patch.dict(os.environ, {"GIT_CEILING_DIRECTORIES": t}):
                self.assertEqual(sfp_build.fixed_identity(plain)[-1],
                                 "KBUILD_BUILD_TIMESTAMP=Thu Jan  1 00:00:00 UTC 1970")


class Refused(unittest.TestCase):
    def test_before_any_work(self):
        with tempfile.TemporaryDirectory() as d:
            tree, obj = pathlib.Path(d) / "tree", pathlib.Path(d) / "obj"
            tree.mkdir()
            (tree / ".config").write_text("")
            for frags, msg in (([tree / "nope"], "config fragment '.*nope' not found"),
                               ([], "has an in-tree .config")):
                with self.assertRaisesRegex(sfp_build.BuildError, msg):
                    sfp_build.build(tree, obj, frags, "6.12", (), pathlib.Path(d), print, {})
            self.assertFalse(obj.exists())


if __name__ == "__main__":
    unittest.main()
