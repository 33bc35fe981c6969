# SPDX-License-Identifier: GPL-2.0
"""sfp.toml: the committed file loads, and each kind of bad record is refused."""
import pathlib
import shutil
import tempfile
import unittest

from harness import sfp_data

ROOT = sfp_data.ROOT


class CommittedData(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()

    def test_lines_and_default(self):
        self.assertEqual(self.d.line_names(), ["6.1", "6.12", "6.19", "7.1"])
        self.assertIn(self.d.default_line, self.d.lines)

    def test_every_series_has_a_record(self):
        on_disk = sorted(p.parent.name for p in ROOT.glob("patches/*/series"))
        self.assertEqual(sorted(self.d.lines), on_disk)

    def test_topology_qemu_args(self):
        args = self.d.topology("sock4x2").qemu_args(512)
        self.assertEqual(args[:2], ["-smp", "8,sockets=4,cores=2,threads=1"])
        self.assertEqual(args.count("-numa"), 4)
        self.assertIn("memory-backend-ram,id=m3,size=128M", args)
        self.assertEqual(self.d.topology("smp4").qemu_args(512), ["-smp", "4"])
        with self.assertRaisesRegex(sfp_data.DataError, "do not split into 4 nodes"):
            self.d.topology("sock4x2").qemu_args(510)

    def test_numa_topology_needs_a_numa_kind(self):
        self.d.check_run("numa", "sock4x2")
        self.d.check_run("main", "smp8")
        with self.assertRaisesRegex(sfp_data.DataError, "built without kernel-config/numa.config"):
            self.d.check_run("main", "smt2x2x2")

    def test_no_catcher_reasons_merge(self):
        r612 = self.d.no_catcher_reasons("6.12")
        r619 = self.d.no_catcher_reasons("6.19")
        self.assertIn("guest_preconditions.kernel_is_the_build", r612)
        self.assertNotIn("sched_fair_overload_recompute.child_keeps_clear", r612)
        self.assertIn("sched_fair_overload_recompute.child_keeps_clear", r619)

    def test_unknown_names_are_refused_naming_the_known(self):
        with self.assertRaisesRegex(sfp_data.DataError, "unknown topology 'mesh'.*smp2"):
            self.d.topology("mesh")
        with self.assertRaisesRegex(sfp_data.DataError, "unknown kernel kind 'fast'.*main"):
            self.d.kind("fast")
        with self.assertRaisesRegex(sfp_data.DataError, "no kernel line '5.10'"):
            self.d.line("5.10")


class BadRecords(unittest.TestCase):
    """Each edit makes one record bad; load() must name it."""

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        for sub in ("patches", "kunit", "selftests", "kernel-config", "tests", "docs"):
            shutil.copytree(ROOT / sub, self.tmp / sub)
        shutil.copy(ROOT / "README.md", self.tmp)
        self.text = (ROOT / "sfp.toml").read_text()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def load(self, text):
        (self.tmp / "sfp.toml").write_text(text)
        return sfp_data.load(self.tmp / "sfp.toml")

    def refused(self, old, new, pattern):
        self.assertIn(old, self.text)
        with self.assertRaisesRegex(sfp_data.DataError, pattern):
            self.load(self.text.replace(old, new, 1))

    def test_copy_loads(self):
        self.assertEqual(len(self.load(self.text).lines), 4)

    def test_scratch_line_is_one_record(self):
        # A new line: its series, mutants directory and table, and one record.
        (self.tmp / "patches/6.6").mkdir()
        (self.tmp / "patches/6.6/series").write_text("")
        (self.tmp / "tests/mutants/6.6").mkdir()
        (self.tmp / "docs/mutation-table-6.6.md").write_text("")
        d = self.load(self.text + '\n[lines."6.6"]\nknown_good = "Linux 6.6.1"\n'
                      'config_absent = []\nkunit_header = "6.1"\n'
                      'mutation_table = "docs/mutation-table-6.6.md"\n')
        self.assertEqual(d.line_names(), ["6.1", "6.6", "6.12", "6.19", "7.1"])

    def test_scratch_topology_is_one_record(self):
        d = self.load(self.text + '\n[topologies.numa2]\nsmp = "4,sockets=2,cores=2,threads=1"\n'
                      'nodes = ["0-1", "2-3"]\nlevels = "MC, NUMA"\n')
        self.assertEqual(d.topology("numa2").vcpus, 4)

    def test_syntax_error(self):
        with self.assertRaisesRegex(sfp_data.DataError, "sfp.toml"):
            self.load(self.text + "\n[lines\n")

    def test_unknown_key(self):
        self.refused('kunit_header = "6.1"', 'kunit_header = "6.1"\nkunit_heder = "6.1"',
                     r"lines.6.1: unknown key 'kunit_heder'")

    def test_missing_key(self):
        self.refused('known_good = "Linux 6.1.192 (Debian linux-source-6.1 6.1.192-3)"\n', "",
                     r"lines.6.1: 'known_good' is missing")

    def test_wrong_type(self):
        self.refused('config_absent = ["KUNIT_AUTORUN_ENABLED", "NUMA_MIGRATION"]',
                     'config_absent = "X"', r"config_absent: list wanted")

    def test_bad_distro_records(self):
        self.refused('distro_config = "linux-config-6.1:config.amd64_none_amd64.xz"',
                     'distro_config = "/usr/src/x.xz"', r"is not PACKAGE:FILE")
        self.refused('PREEMPT_VOLUNTARY = "7.1 offers',
                     'CONFIG_PREEMPT_VOLUNTARY = "7.1 offers', r"must be OPTION = \"reason\"")

    def test_bad_option_name(self):
        self.refused('config_absent = ["KUNIT_AUTORUN_ENABLED", "NUMA_MIGRATION"]',
                     'config_absent = ["CONFIG_KUNIT"]', "not an option name")
        self.refused('config_absent = ["KUNIT_AUTORUN_ENABLED", "NUMA_MIGRATION"]',
                     'config_absent = ["kunit"]', "not an option name")

    def test_line_without_series(self):
        self.refused('[lines."6.1"]', '[lines."6.2"]', r"patches/6.2/series does not exist")

    def test_missing_header(self):
        self.refused('kunit_header = "6.1"', 'kunit_header = "5.15"',
                     r"kunit/fair_kunit-5.15.h does not exist")

    def test_default_line_unknown(self):
        self.refused('default_line = "6.12"', 'default_line = "6.13"', "not one of the lines")

    def test_kind_fragment_missing(self):
        self.refused('fragments = ["debug.config"]', 'fragments = ["debgu.config"]',
                     r"kinds.debug.fragments: kernel-config/debgu.config does not exist")

    def test_kind_patch_missing(self):
        self.refused('patches = ["tests/debug/avg_vruntime-assert-rq-lock.patch"]',
                     'patches = ["tests/debug/nope.patch"]', "does not exist")

    def test_topology_too_many_cpus(self):
        self.refused('smp = "8"', 'smp = "16"', r"16 vCPUs, outside 1..8")

    def test_topology_shape_does_not_add_up(self):
        self.refused('smp = "8,sockets=4,cores=2,threads=1"',
                     'smp = "8,sockets=4,cores=2,threads=2"', "sockets x cores x threads")

    def test_topology_nodes_must_partition(self):
        self.refused('nodes = ["0-1", "2-3", "4-5", "6-7"]', 'nodes = ["0-1", "2-3", "4-6", "6-7"]',
                     "each of CPUs 0-7 once")
        self.refused('nodes = ["0-3", "4-7"]', 'nodes = ["0-3", "4-x"]', "not a CPU or a range")

    def test_no_catcher_twice(self):
        self.refused('[lines."6.19".no_catcher]\n',
                     '[lines."6.19".no_catcher]\n"guest_state.no_cgroups_left" = "again"\n',
                     "already has a reason")

    def test_prose_file_missing(self):
        self.refused('file = "selftests/COMMIT_MSG-6.1"', 'file = "selftests/MSG"',
                     r"prose\[2\].file: selftests/MSG does not exist")

    def test_baseline_case_name(self):
        self.refused('"sched_fastpath_root_tg.root_tg.cpu_offline_online",',
                     '"cpu offline",', "not suite.case")


if __name__ == "__main__":
    unittest.main()
