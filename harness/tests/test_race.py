# SPDX-License-Identifier: GPL-2.0
"""sfp race: bad input refused before work, the fix and hook found from
the data, and the lockdep check's verdict on saved console text (the
unfixed kernel must stop on avg_vruntime() called from print_cfs_rq())."""
import pathlib
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_race

D = sfp_data.load()
SPLAT = ("[    3.1] WARNING: CPU: 1 PID: 80 at kernel/sched/fair.c:642 avg_vruntime+0x9f/0xc0\n"
         "[    3.2] RIP: 0010:avg_vruntime+0x9f/0xc0\n"
         "[    3.3]  print_cfs_rq+0x2a1/0x9c0\n")


class Plan(unittest.TestCase):
    def test_refusals(self):
        for kw, pat in ((dict(boots=0), "whole numbers > 0, not '0'"),
                        (dict(vcpus=9), "-s 9: the config has NR_CPUS=8")):
            args = dict(boots=4, secs=60, vcpus=8, lockdep_only=False)
            args.update(kw)
            with self.assertRaisesRegex(sfp_race.RaceRefused, pat):
                sfp_race.plan(D, "6.12", **args)

    def test_fix_and_hook(self):
        r = sfp_race.plan(D, "6.12", boots=1, secs=1, vcpus=2, lockdep_only=True)
        self.assertTrue(r.fix.is_file())
        self.assertIn("prerequisites", (r.fix.parent / "series").read_text())
        self.assertEqual(r.hook.name, "avg_vruntime-assert-rq-lock.patch")


class Lockdep(unittest.TestCase):
    def verdict(self, kernel, rc, console, why="the guest failed"):
        with tempfile.TemporaryDirectory() as d:
            c = pathlib.Path(d) / "console.log"
            c.write_text(console)
            return sfp_race.lockdep_verdict(kernel, rc, c, why)

    def test_unfixed_fires(self):
        ok, splat, v = self.verdict("unfixed", 1, SPLAT)
        self.assertTrue(ok)
        self.assertTrue(splat.startswith("WARNING: CPU: 1 PID: 80"))
        self.assertEqual(v, "fires as expected (called from print_cfs_rq+0x2a1)")

    def test_unfixed_missed(self):
        for rc, console in ((0, SPLAT), (1, "clean\n"), (1, SPLAT.replace("print_cfs_rq", "x")),
                            (1, "[ 1.0] BUG: KASAN: slab-out-of-bounds in identify_cpu\n"
                                " print_cfs_rq+0x1/0x2\n")):
            ok, _, v = self.verdict("unfixed", rc, console)
            self.assertFalse(ok, console)
            self.assertTrue(v.startswith("MISSED"))

    def test_fixed(self):
        self.assertEqual(self.verdict("fixed", 0, "clean\n")[::2], (True, "clean as expected"))
        ok, splat, v = self.verdict("fixed", 1, SPLAT)
        self.assertFalse(ok)
        self.assertEqual(v, "FAILED: the guest failed")


if __name__ == "__main__":
    unittest.main()
