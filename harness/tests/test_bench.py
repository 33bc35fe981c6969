# SPDX-License-Identifier: GPL-2.0
"""sfp bench without a kernel: its refusals (before anything is written),
a boot's status from its logs, the progress line's figures, and the
compile command the offsets are computed with."""
import os
import pathlib
import subprocess
import tempfile
import unittest

from harness import sfp_bench
from harness import sfp_env
from harness import sfp_errors
from harness import sfp_data

P = pathlib.Path


class Plan(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = P(self.tmp.name) / "build"
        self.data = sfp_data.load()
        self.env = {"BUILD": str(self.build), "LINE": "6.12", "PATH": os.environ["PATH"]}

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, **kw):
        args = dict(topologies=None, vcpus=None, duration="3", reps="3", mode="measure",
                    out="", qemu_opts=None, smoke=False, command="./sfp bench")
        args.update(kw)
        return sfp_bench.plan(self.data, self.env, **args)

    def refused(self, message, **kw):
        # The benchmark's own refusals, and the data's or the environment's.
        with self.assertRaises(sfp_errors.Refused) as e:
            self.plan(**kw)
        self.assertIn(message, str(e.exception))
        self.assertFalse(self.build.exists(), "a refusal wrote something")

    def test_refusals(self):
        self.refused("unknown topology 'mesh'", topologies="smp2 mesh")
        self.refused("unknown topology 'smp16'", vcpus="2 16")
        self.refused("-t wants at least one topology", topologies="")
        self.refused("-d wants a whole number of seconds > 0, not '0'", duration="0")
        self.refused("--reps wants a number of repetitions > 0, not 'x'", reps="x")
        self.refused("-F wants 'measure' or 'shipped', not 'all'", mode="all")
        self.env["MEM"] = "12x"
        self.refused("MEM=12x")
        del self.env["MEM"]
        self.refused(f"no work tree at {self.build}/6.12/tree: run 'make prepare' first")

    def test_icount_refusals(self):
        self.refused("--seed wants a number, 0 or more, not -1", seed=-1)
        self.refused("--icount sets -icount, -seed itself: leave them out of -Q/QEMU_OPTS",
                     seed=1, qemu_opts="-icount shift=2 -seed 4")
        self.refused("--icount sets -rtc itself: leave it out", seed=1, qemu_opts="-rtc base=utc")
        self.env["ACCEL"] = "kvm"
        self.refused("--icount needs QEMU's TCG, not ACCEL=kvm", seed=1)
        del self.env["ACCEL"]
        # without --icount, -Q may hold them
        self.refused("no work tree", qemu_opts="-icount shift=1")
        # a line that does not boot under -icount says why
        self.env["LINE"] = "6.1"
        self.refused("--icount: not on 6.1 (sfp.toml lines.\"6.1\".no_icount): 6.1.192's guests "
                     "hang", seed=1)

    def test_icount_boot_options(self):
        b = sfp_bench.Bench(sfp_env.LineChoice("6.12", "LINE", P("b"), P("s")), ("smp2",), {"smp2": 2}, 3, 3, "measure", P("o"),
                            "-d int", 1024, False, {}, "python3", "cmd", seed=5)
        # repetition R: seed 5 + R - 1, with the fixed machine around it
        self.assertEqual(b.boot_qemu_opts(1), "-d int -icount shift=1,sleep=off "
                                              "-rtc base=2026-01-01T00:00:00,clock=vm -seed 5")
        self.assertTrue(b.boot_qemu_opts(3).endswith(" -seed 7"))
        self.assertIn(" hpet=disable nokaslr", b.guest_append)
        plain = sfp_bench.Bench(sfp_env.LineChoice("6.12", "LINE", P("b"), P("s")), ("smp2",), {"smp2": 2}, 3, 3, "measure", P("o"),
                                "-d int", 1024, False, {}, "python3", "cmd")
        self.assertEqual(plain.boot_qemu_opts(2), "-d int")
        self.assertNotIn("hpet=disable", plain.guest_append)
        # the kernels built the same bytes from the same source under --icount only
        self.assertTrue(b.reproducible)
        self.assertFalse(plain.reproducible)

    def test_smoke_overrides_shape(self):
        # The smoke round is one repetition on smp2 for 3 s whatever else
        # is asked; past that, the missing work tree stops it.
        self.refused("no work tree", smoke=True, topologies="sock4x2", reps="9")

    def test_used_output_directory_refused(self):
        tree = self.build / "6.12" / "tree"
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@e")
        subprocess.run(["git", "-C", str(tree), "commit", "-q", "--allow-empty", "-m", "x"],
                       check=True, env=env)
        with self.assertRaisesRegex(sfp_bench.BenchError, "has no commit 'baseline'"):
            self.plan()
        for b in ("baseline", "patched"):
            subprocess.run(["git", "-C", str(tree), "branch", b], check=True)
        used = P(self.tmp.name) / "used"
        used.mkdir()
        (used / "earlier-run").write_text("")
        try:
            with self.assertRaisesRegex(sfp_bench.BenchError, "is not empty: name a new one"):
                self.plan(out=str(used))
        except sfp_bench.BenchError as e:  # a machine without matplotlib or perf
            self.skipTest(str(e))
        self.assertTrue((used / "earlier-run").exists())


class Lock(unittest.TestCase):
    def test_second_run_refused_until_the_first_ends(self):
        # Two runs of one line and BUILD would rebuild the same kernels
        # under each other's boots: the second is refused, naming the first.
        with tempfile.TemporaryDirectory() as t:
            bdir = P(t) / "6.12" / "bench"
            with sfp_bench.lock(bdir, P(t) / "out1"):
                with self.assertRaisesRegex(sfp_bench.BenchError,
                                            r"another sfp bench is running there "
                                            r"\(pid \d+, output .*out1\)"):
                    sfp_bench.lock(bdir, P(t) / "out2")
            with sfp_bench.lock(bdir, P(t) / "out2"):   # released: taken again
                self.assertIn("out2", (bdir / "lock").read_text())


class Logs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = P(self.tmp.name) / "patched-smp2-r1"
        self.log.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, tsv: str, guest: str, boot: str = "") -> str:
        (self.log / "results.tsv").write_text(tsv)
        (self.log / "guest.log").write_text(guest)
        P(f"{self.log}.boot").write_text(boot)
        return sfp_bench.boot_status(self.log)

    def test_status(self):
        ok_guest = "ok 1 guest_preconditions\nsfp-end: sfp_bench rc=0\n"
        self.assertEqual(self.write("x\tPASS\n", ok_guest), "ok")
        self.assertEqual(self.write("", ok_guest, "building\nsfp: error: guest hung\n"),
                         "boot failed (sfp: error: guest hung)")
        self.assertEqual(self.write("boot\tFAIL\n", ok_guest, "a\nlast line\n"),
                         "boot failed (last line)")
        self.assertEqual(self.write("x\tPASS\n", "sfp-bench error: no perf\n"),
                         "workload failed: sfp-bench error: no perf")
        self.assertEqual(self.write("x\tPASS\n", "sfp-end: sfp_bench rc=1\n"),
                         "workload failed: see guest.log")
        self.assertEqual(self.write("x\tPASS\n", "sfp-end: sfp_bench rc=0\n"),
                         "guest preconditions failed (wrong kernel?)")

    def test_progress_figures(self):
        (self.log / "guest.log").write_text(
            "sfp-bench rr count vcpus=2 tps=1234.5 x=1 newidle_per_idle=0.031 y=2\n"
            "sfp-bench mix lb level=all a=1 lb_gained=17 b=2\n"
            "sfp-bench pool count a=1 tg_load_avg_changes=0 b=1\n")
        self.assertEqual(sfp_bench.progress_figures(self.log / "guest.log"),
                         ("0.031 newly-idle attempts per idle entry, 1234.5 tps",
                          "17 tasks gained", "0 root tg_load_avg changes"))
        self.assertEqual(sfp_bench.progress_figures(self.log / "none.log"), ("", "", ""))


class CompileCommand(unittest.TestCase):
    def test_saved_and_old_forms(self):
        with tempfile.TemporaryDirectory() as t:
            d = P(t) / "kernel" / "sched"
            d.mkdir(parents=True)
            for key in ("savedcmd_", "cmd_"):
                (d / ".fair.o.cmd").write_text(
                    f"{key}kernel/sched/fair.o := gcc -Wp,-MMD,kernel/sched/.fair.o.d -O2 "
                    "-I ./include -c -o kernel/sched/fair.o ../tree/kernel/sched/fair.c ; "
                    "./tools/objtool/objtool --x\n\nsource_kernel/sched/fair.o := x\n")
                self.assertEqual(sfp_bench._compile_command(P(t)), "gcc  -O2 -I ./include")
            (d / ".fair.o.cmd").write_text("savedcmd_kernel/sched/fair.o := ld -r x\n")
            with self.assertRaisesRegex(sfp_bench.BenchError, "unexpected compile command"):
                sfp_bench._compile_command(P(t))
        with self.assertRaisesRegex(sfp_bench.BenchError, "build the kernel in"):
            sfp_bench._compile_command(P("/nonexistent"))


if __name__ == "__main__":
    unittest.main()
