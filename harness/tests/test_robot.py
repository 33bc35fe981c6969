# SPDX-License-Identifier: GPL-2.0
"""sfp robot: the findings of a W=1/sparse log (paths above the tree and
line numbers left out, so that a moved line is not new), the first error
of a failed build, and the refusals before any build."""
import pathlib
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_robot

D = sfp_data.load()
LOG = """  CC      kernel/sched/fair.o
/b/6.12/wt/robot/tree/kernel/sched/fair.c:123:5: warning: no previous prototype for 'f' [-Wmissing-prototypes]
../kernel/sched/tests/fair_kunit.c:515:32: warning: incorrect type in assignment (different address spaces)
kernel/sched/core.c:77: error: bad constant expression
  note: this is not a finding
make[2]: *** [scripts/Makefile.build:243: kernel/sched/fair.o] Error 1
"""


class Parse(unittest.TestCase):
    def test_findings(self):
        self.assertEqual(sfp_robot.findings(LOG), [
            "kernel/sched/core.c: error: bad constant expression",
            "kernel/sched/fair.c: warning: no previous prototype for 'f' [-Wmissing-prototypes]",
            "kernel/sched/tests/fair_kunit.c: warning: incorrect type in assignment "
            "(different address spaces)"])

    def test_same_finding_elsewhere_is_not_new(self):
        moved = LOG.replace(":123:5:", ":140:9:")
        self.assertEqual(sfp_robot.findings(LOG), sfp_robot.findings(moved))

    def test_first_error(self):
        self.assertEqual(sfp_robot.first_error(LOG),
                         "kernel/sched/core.c:77: error: bad constant expression")
        self.assertEqual(sfp_robot.first_error("all good\n"), "")


class Refusals(unittest.TestCase):
    def test_no_tree(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(sfp_robot.RobotError, "no prepared work tree at"):
                sfp_robot.run(D, "6.12", pathlib.Path(d), True, None, {}, lambda m: None)
            self.assertEqual(list(pathlib.Path(d).iterdir()), [])


if __name__ == "__main__":
    unittest.main()
