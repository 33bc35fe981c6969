# SPDX-License-Identifier: GPL-2.0
"""sfp_distro: the scheduler's options found by rule, the distribution's
values, the fragment and its table, and bad input refused."""
import dataclasses
import lzma
import pathlib
import tempfile
import unittest

from harness import sfp_data
from harness import sfp_distro
from harness import sfp_run

DISTRO = """\
CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_CFS_BANDWIDTH=y
# CONFIG_RT_GROUP_SCHED is not set
CONFIG_NO_HZ_FULL=y
# CONFIG_NO_HZ_IDLE is not set
# CONFIG_HZ_PERIODIC is not set
CONFIG_NR_CPUS=8192
CONFIG_PCI=y
"""


def mini_tree(d: pathlib.Path) -> pathlib.Path:
    (d / "kernel" / "sched").mkdir(parents=True)
    (d / "kernel" / "sched" / "fair.c").write_text(
        "#ifdef CONFIG_CFS_BANDWIDTH\n#endif\n"
        "#if defined(CONFIG_RT_GROUP_SCHED) && IS_ENABLED(CONFIG_NO_HZ_FULL)\n#endif\n"
        "/* CONFIG_UCLAMP_TASK */\n")
    (d / "kernel" / "time").mkdir(parents=True)
    (d / "kernel" / "time" / "Kconfig").write_text(
        "choice\n\tprompt \"Timer tick handling\"\n"
        "config HZ_PERIODIC\n\tbool \"Periodic\"\n"
        "config NO_HZ_IDLE\n\tbool \"Idle dynticks\"\n"
        "config NO_HZ_FULL\n\tbool \"Full dynticks\"\n"
        "endchoice\n\n"
        "choice\n\tprompt \"unrelated\"\nconfig FOO_A\n\tbool \"a\"\nconfig FOO_B\n"
        "\tbool \"b\"\nendchoice\n")
    return d


class Distro(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = pathlib.Path(self.tmp.name)
        self.tree = mini_tree(self.d / "tree")
        cfg = self.d / "config.xz"
        cfg.write_bytes(lzma.compress(DISTRO.encode()))
        self.env = {"DISTRO_CONFIG": str(cfg)}
        self.data = sfp_data.load()

    def tearDown(self):
        self.tmp.cleanup()

    def test_symbols_by_rule_with_choice_members(self):
        # The names kernel/sched/ mentions, and the other members of a
        # choice one of them is in (not the unrelated choice's).
        self.assertEqual(sfp_distro.sched_symbols(self.tree),
                         ["CFS_BANDWIDTH", "HZ_PERIODIC", "NO_HZ_FULL", "NO_HZ_IDLE",
                          "RT_GROUP_SCHED", "UCLAMP_TASK"])

    def test_fragment_has_the_distribution_values_only(self):
        out = sfp_distro.fragment(self.data, "6.12", self.tree, self.env,
                                  self.d / "obj" / "f.config")
        lines = [ln for ln in out.read_text().splitlines() if not ln.startswith("# The")
                 and not ln.startswith("# (")]
        self.assertEqual(lines, ["CONFIG_CFS_BANDWIDTH=y", "# CONFIG_HZ_PERIODIC is not set",
                                 "CONFIG_NO_HZ_FULL=y", "# CONFIG_NO_HZ_IDLE is not set",
                                 "# CONFIG_RT_GROUP_SCHED is not set"])
        # NR_CPUS and PCI are not read under kernel/sched/; UCLAMP_TASK is
        # not in the distribution's configuration: none is asked for.
        self.assertNotIn("PCI", out.read_text())
        self.assertNotIn("UCLAMP", "\n".join(lines))

    def test_declared_difference_is_not_asked_and_says_why(self):
        line = dataclasses.replace(self.data.lines["6.12"],
                                   distro_differs={"CFS_BANDWIDTH": "a reason"})
        data = dataclasses.replace(self.data, lines={**self.data.lines, "6.12": line})
        text = sfp_distro.fragment(data, "6.12", self.tree, self.env,
                                   self.d / "f.config").read_text()
        self.assertNotIn("CONFIG_CFS_BANDWIDTH=y", text)
        self.assertIn("# CONFIG_CFS_BANDWIDTH: not asked for; a reason", text)

    def test_table_headline_first_and_each_kind(self):
        main = self.d / "main.config"
        main.write_text("# CONFIG_NO_HZ_FULL is not set\nCONFIG_NO_HZ_IDLE=y\n")
        text = sfp_distro.table(self.data, "6.12", self.tree, self.env, {"main": main})
        rows = [r for r in text.splitlines() if r.startswith("| `")]
        self.assertEqual(rows[0], "| `CFS_BANDWIDTH` | y | - |")
        self.assertEqual(rows[1], "| `RT_GROUP_SCHED` | n | - |")
        self.assertIn("| `NO_HZ_IDLE` | n | y |", rows)
        self.assertIn("| `UCLAMP_TASK` | - | - |", text)

    def test_plain_config_and_line_record(self):
        plain = self.d / "config"
        plain.write_text(DISTRO)
        src = sfp_distro.source(self.data, "6.12", {"DISTRO_CONFIG": str(plain)})
        self.assertEqual(sfp_distro.read_source(src)["NR_CPUS"], "8192")
        deb = sfp_distro.source(self.data, "7.1", {})
        self.assertEqual(deb.path, pathlib.Path(
            "/usr/src/linux-config-6.12/config.amd64_none_amd64.xz"))
        self.assertEqual(deb.package, "linux-config-6.12")

    def test_bad_input(self):
        with self.assertRaisesRegex(sfp_distro.DistroError, "install the Debian package "
                                    "'linux-config-6.12'"):
            sfp_distro.read_source(sfp_distro.Source("x", self.d / "none.xz",
                                                     "linux-config-6.12"))
        junk = self.d / "junk.xz"
        junk.write_bytes(b"not xz")
        with self.assertRaisesRegex(sfp_distro.DistroError, "not an xz file"):
            sfp_distro.read_source(sfp_distro.Source("x", junk))
        text = self.d / "notes.txt"
        text.write_text("hello\n")
        with self.assertRaisesRegex(sfp_distro.DistroError, "is not a kernel .config"):
            sfp_distro.read_source(sfp_distro.Source("x", text))
        with self.assertRaisesRegex(sfp_distro.DistroError, "has no kernel/sched/"):
            sfp_distro.sched_symbols(self.d)

    def test_kind_fragments_put_the_distribution_before_the_tests(self):
        tests = self.tree / "tools" / "testing" / "selftests" / "sched"
        tests.mkdir(parents=True)
        (tests / "sched_fastpath_x.c").write_text("")
        (tests / "config").write_text("CONFIG_SCHED_DEBUG=y\n")
        frags = sfp_run.kind_fragments(self.data, "distro", self.tree, "6.12", self.env,
                                       self.d / "obj")
        self.assertEqual([f.name for f in frags], ["base.config", "distro-sched.config",
                                                   "distro.config", "config"])
        with self.assertRaisesRegex(sfp_distro.DistroError, "needs a line"):
            sfp_run.kind_fragments(self.data, "distro", self.tree)


if __name__ == "__main__":
    unittest.main()
