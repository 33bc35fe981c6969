# SPDX-License-Identifier: GPL-2.0
"""Every source file of the project carries its SPDX line (LICENSE says
which files are copied into a kernel tree verbatim and carry none)."""
import unittest

from harness import sfp_data

ROOT = sfp_data.ROOT
SOURCES = ["sfp", "sfp.toml", "Makefile", ".ci/run", "harness/**/*.py", "scripts/*.sh",
           "scripts/*.py", "scripts/guest/*",
           "kernel-config/*.config", "kernel-config/robot/*.config", "bench/*",
           "kunit/*.c", "kunit/*.h", "selftests/*.c", "selftests/*.h", "selftests/Makefile"]


class Spdx(unittest.TestCase):
    def test_every_source_file(self):
        files = sorted({p for g in SOURCES for p in ROOT.glob(g) if p.is_file()})
        self.assertGreater(len(files), 60)
        missing = [str(p.relative_to(ROOT)) for p in files
                   if "SPDX-License-Identifier: GPL-2.0" not in
                   "".join(p.read_text(errors="replace").splitlines(True)[:3])]
        self.assertEqual(missing, [])

    def test_license_text(self):
        self.assertIn("GPL-2.0", (ROOT / "LICENSE").read_text())
        self.assertIn("Version 2, June 1991", (ROOT / "LICENSES" / "GPL-2.0").read_text())


if __name__ == "__main__":
    unittest.main()
