# SPDX-License-Identifier: GPL-2.0
"""sfp matrix's checks of one version on the small tree of test_series: a
source with both features (contained, backs out, applies, reproduced),
one whose feature drifted (stuck without a three-way source: no
baseline), and the archive's versions in sort -V's order."""
import pathlib
import subprocess
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import sfp_matrix  # noqa: E402
from test_series import Tree, edit, git  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
