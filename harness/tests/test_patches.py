# SPDX-License-Identifier: GPL-2.0
"""sfp gen-patches: where the generator puts its lines in MAINTAINERS and
lib/Kconfig.debug (and its refusal when the anchor is missing), the
commit message a line gets, and the refusals before any work."""
import pathlib
import shutil
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_patches

D = sfp_data.load()
MAINTAINERS = ("SCHED_EXT\nF:\tkernel/sched/ext.c\n\nSCHEDULER\nM:\tA\nF:\tinclude/x\n"
               "F:\tkernel/sched/\nF:\ttools/y\n\nSCSI\nF:\tkernel/sched/\n")
KCONFIG = ("menu \"Scheduler Debugging\"\n\nconfig SCHEDSTATS\n\tbool \"x\"\n\nendmenu\n\n"
           "menu \"Other\"\nendmenu\n")


class Edits(unittest.TestCase):
    def test_maintainers(self):
        # In the order of the entry's F: lines.
        got = sfp_patches.maintainers_add(MAINTAINERS, "F:\tkernel/sched/tests/")
        self.assertEqual(got, MAINTAINERS.replace("F:\tkernel/sched/\nF:\ttools/y",
                                                  "F:\tkernel/sched/\nF:\tkernel/sched/tests/\n"
                                                  "F:\ttools/y"))
        # After the last F: line when it sorts last.
        got = sfp_patches.maintainers_add(MAINTAINERS, "F:\tzz/")
        self.assertIn("F:\ttools/y\nF:\tzz/\n", got)
        with self.assertRaisesRegex(sfp_patches.PatchesError, "no F: line in the "
                                    "SCHEDULER entry"):
            sfp_patches.maintainers_add("OTHER\nF:\tx/\n", "x")

    def test_kconfig(self):
        got = sfp_patches.kconfig_add(KCONFIG, "config SCHED_FAIR_KUNIT_TEST\n\ttristate \"t\"")
        self.assertEqual(got, KCONFIG.replace(
            "\nendmenu\n\nmenu", "\nconfig SCHED_FAIR_KUNIT_TEST\n\ttristate \"t\"\n\n"
            "endmenu\n\nmenu", 1))
        with self.assertRaisesRegex(sfp_patches.PatchesError, "could not find SCHEDSTATS"):
            sfp_patches.kconfig_add("menu \"x\"\nendmenu\n", "y")

    @unittest.skipUnless(shutil.which("unifdef"), "needs unifdef (make setup)")
    def test_upstream_tier_forms(self):
        # A mainline-form line gets the upstream tier with no backport
        # conditional, no header and no CONFIG_SMP guard; an older line
        # keeps them, and includes its header.
        src = sfp_data.ROOT / "kunit" / "fair_kunit.c"
        with tempfile.TemporaryDirectory() as d:
            out = pathlib.Path(d) / "f.c"
            for line, backport in (("7.1", False), ("6.19", False), ("6.12", True), ("6.1", True)):
                values = sfp_patches.header_values(
                    sfp_data.ROOT / "kunit" / f"fair_kunit-{D.lines[line].kunit_header}.h")
                self.assertEqual(bool(values["SFT_BACKPORT"]), backport, line)
                sfp_patches.resolve_line(src, {"SFT_BACKPORT": 1} if backport else values, out)
                text = out.read_text()
                self.assertEqual('#include "fair_kunit.h"' in text, backport, line)
                self.assertEqual("SFT_NEEDS_SMP" in text, backport, line)
                self.assertEqual("SFT_HAVE_" in text, backport, line)
                self.assertNotIn("SFT_BACKPORT", text, line)
                self.assertNotIn("\n\n\n", text, line)
                self.assertIn("kunit_test_suites(", text, line)

    def test_commit_msg(self):
        self.assertEqual(sfp_patches.commit_msg("kunit", "6.1").name, "COMMIT_MSG-6.1")
        self.assertEqual(sfp_patches.commit_msg("kunit", "7.1").name, "COMMIT_MSG")
        self.assertEqual(sfp_patches.commit_msg("kunit/cert", "6.1").parent.name, "cert")


class Refusals(unittest.TestCase):
    def test_no_tree_no_mark(self):
        with tempfile.TemporaryDirectory() as d:
            b = pathlib.Path(d)
            with self.assertRaisesRegex(sfp_patches.PatchesError, "no work tree at .*make prepare"):
                sfp_patches.generate(D, "6.12", b, sfp_data.ROOT / "patches" / "6.12", b / "o")
            (b / "tree" / ".git").mkdir(parents=True)
            (b / "p").mkdir()
            (b / "p" / "series").write_text("# features\n")
            with self.assertRaisesRegex(sfp_patches.PatchesError, "lacks the line '# generated"):
                sfp_patches.generate(D, "6.12", b, b / "p", b / "o")

    def test_every_series_has_the_mark(self):
        for line in D.line_names():
            text = (sfp_data.ROOT / "patches" / line / "series").read_text().splitlines()
            self.assertIn(sfp_patches.MARK, text, line)


class Notes(unittest.TestCase):
    def test_changelog_above_the_line_notes_below(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            t = pathlib.Path(d) / "t"
            subprocess.run(["git", "init", "-q", str(t)], check=True)
            (t / "f").write_text("x\n")
            subprocess.run(["git", "-C", str(t), "add", "f"], check=True)
            msg = pathlib.Path(d) / "msg"
            msg.write_text("sched: subject\n\nWhy.\n\nSigned-off-by: A <a@b.c>\n---\n"
                           "Figures.\n")
            note = sfp_patches._commit(t, msg)
            self.assertEqual(note, "Figures.\n")
            log = subprocess.run(["git", "-C", str(t), "log", "-1", "--format=%B"],
                                 capture_output=True, text=True, check=True).stdout
            self.assertEqual(log.strip(), "sched: subject\n\nWhy.\n\nSigned-off-by: A <a@b.c>")
            (t / "f").write_text("y\n")
            subprocess.run(["git", "-C", str(t), "add", "f"], check=True)
            msg.write_text("sched: subject\n\nWhy.\n")
            self.assertEqual(sfp_patches._commit(t, msg), "")


if __name__ == "__main__":
    unittest.main()
