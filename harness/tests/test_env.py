# SPDX-License-Identifier: GPL-2.0
"""The kernel line the environment selects (what every subcommand
takes)."""
import pathlib
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_env

ROOT = sfp_data.ROOT


def tree(d: pathlib.Path, version: str) -> pathlib.Path:
    v, p, s = version.split(".")
    (d / "Makefile").write_text(f"VERSION = {v}\nPATCHLEVEL = {p}\nSUBLEVEL = {s}\nEXTRAVERSION =\n")
    return d


class SelectLine(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def pick(self, **env):
        return sfp_env.select_line(self.d, env)

    def test_default(self):
        c = self.pick()
        self.assertEqual((c.line, c.source_from, c.build),
                         (self.d.default_line, "default", ROOT / "build" / self.d.default_line))

    def test_line_wins_over_ksrc(self):
        c = self.pick(LINE="6.1", KSRC=str(tree(self.t, "7.1.5")))
        self.assertEqual((c.line, c.source_from), ("6.1", "LINE"))

    def test_ksrc_version_picks_the_line(self):
        c = self.pick(KSRC=str(tree(self.t, "7.1.5")), BUILD="b")
        self.assertEqual((c.line, c.source_from, str(c.build)), ("7.1", "KSRC", "b/7.1"))

    def test_missing_ksrc_is_left_to_the_caller(self):
        self.assertEqual(self.pick(KSRC=str(self.t / "nothing")).source_from, "default")

    def test_series_directory(self):
        self.assertEqual(self.pick(LINE="6.1").patches, ROOT / "patches" / "6.1")
        self.assertEqual(str(self.pick(LINE="6.1", PATCHES="p").patches), "p")

    def test_version_without_series_names_the_nearest(self):
        with self.assertRaisesRegex(sfp_env.InputError, "6.20 line, which has no series.*nearest is 6.19"):
            self.pick(KSRC=str(tree(self.t, "6.20.1")))
        with self.assertRaisesRegex(sfp_env.InputError, "LINE=4.19: no series"):
            self.pick(LINE="4.19")

    def test_default_source(self):
        self.assertEqual(self.d.lines["6.1"].default_source({}), "/usr/src/linux-source-6.1.tar.xz")
        self.assertEqual(self.d.lines["6.19"].default_source({}), "")
        self.assertEqual(self.d.lines["6.19"].default_source({"SFP_SRC_6_19": "/t"}), "/t")


class Numbers(unittest.TestCase):
    def test_lava_target_checked_before_any_work(self):
        sfp_env.check_numbers({"BOOT_BACKEND": "lava-server"})
        # the variables of a portable job mean nothing to the other backends
        sfp_env.check_numbers({"LAVA_DEVICE_TYPE": "qemu"})
        with self.assertRaisesRegex(sfp_env.InputError, "LAVA_DEVICE_TYPE=qemu is a lab "
                                    "elsewhere.*set both"):
            sfp_env.check_numbers({"BOOT_BACKEND": "lava-server", "LAVA_DEVICE_TYPE": "qemu"})
        with self.assertRaisesRegex(sfp_env.InputError, "LAVA_IMAGE_URL=ftp://h"):
            sfp_env.check_numbers({"BOOT_BACKEND": "lava-server", "LAVA_DEVICE_TYPE": "qemu",
                                   "LAVA_IMAGE_DIR": "/tmp", "LAVA_IMAGE_URL": "ftp://h"})


if __name__ == "__main__":
    unittest.main()
