# SPDX-License-Identifier: GPL-2.0
"""sfp run: a Run planned from flags and environment and refused before
anything is touched; the build layout; the fragments a tree gets; the
series' roles; the logs of the last run kept, a given log directory
emptied; the stage times."""
import contextlib
import io
import pathlib
import signal
import tempfile
import threading
import unittest
from unittest import mock

from harness import sfp_data
from harness import sfp_run

ROOT = sfp_data.ROOT


def kernel_tree(d: pathlib.Path, kunit: bool = True, selftests: bool = True) -> pathlib.Path:
    (d / "kernel" / "sched").mkdir(parents=True)
    (d / "kernel" / "sched" / "fair.c").write_text("")
    (d / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 3\nEXTRAVERSION =\n")
    if kunit:
        (d / "lib").mkdir()
        (d / "lib" / "Kconfig.debug").write_text("config SCHED_FAIR_KUNIT_TEST\n")
        (d / "kernel" / "sched" / "tests").mkdir()
        (d / "kernel" / "sched" / "tests" / ".kunitconfig").write_text("CONFIG_KUNIT=y\n")
    if selftests:
        st = d / "tools" / "testing" / "selftests" / "sched"
        st.mkdir(parents=True)
        (st / "sched_fastpath_newidle.c").write_text("")
        (st / "config").write_text("")
    return d


class Plan(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)
        self.env = {"BUILD": str(self.t / "build"), "LINE": "6.12"}

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, env=None, **kw):
        return sfp_run.plan(self.d, dict(self.env, **(env or {})), **kw)

    def refused(self, msg, env=None, **kw):
        with self.assertRaisesRegex(sfp_run.RunRefused, msg):
            self.plan(env, **kw)
        self.assertFalse((self.t / "build").exists(), "a refused run wrote its build directory")

    def test_refusals(self):
        self.refused("unknown kernel kind 'fast'", kind="fast")
        self.refused("SMP=abc: a number of vCPUs", env={"SMP": "abc"})
        self.refused("--tree and -r exclude each other", tree=str(self.t), ref="patched")
        self.refused("--boot-only and --build-only exclude each other", boot_only=True,
                     build_only=True)
        self.refused(r"-p needs -r", patches=[str(ROOT / "sfp")])
        self.refused(r"-p needs -r", kind="debug")  # its hook is a patch
        self.refused("'.*nope.patch' not found", ref="patched", patches=[str(self.t / "nope.patch")])
        self.refused("'nope.config' not found", extra_fragments=["nope.config"])
        self.refused("kernel tree '.*nope' does not exist", tree=str(self.t / "nope"))
        self.refused("is not a kernel source tree", tree=str(self.t))
        self.refused("name 'a b' may only use", name="a b")
        self.refused("--boot-only: nothing built for 'patched'", boot_only=True)

    def test_names_and_layout(self):
        b = self.t / "build" / "6.12"
        r = self.plan(ref="origin/base")
        self.assertEqual((r.name, r.obj, r.worktree, r.logdir),
                         ("origin-base", b / "wt/origin-base/obj/origin-base",
                          b / "wt/origin-base/tree", b / "logs/origin-base"))
        r = self.plan()
        self.assertEqual((r.name, r.obj, r.built_tree()), ("patched", b / "obj/patched", b / "tree"))
        tree = kernel_tree(self.t / "linux-x")
        r = self.plan(tree=str(tree), logdir="rel/logs")
        self.assertEqual((r.name, r.tree, r.logdir_given), ("linux-x", tree, True))
        self.assertTrue(r.logdir.is_absolute())

    def test_kind(self):
        r = self.plan(kind="debug", ref="patched", patches=[str(ROOT / "sfp")],
                      env={"APPEND": "sfp.x=1"})
        kind = self.d.kind("debug")
        self.assertEqual(r.patches, (ROOT / "sfp",) + tuple(ROOT / p for p in kind.patches))
        self.assertEqual(r.append, f"{kind.append} sfp.x=1")
        tree = kernel_tree(self.t / "tree")
        self.assertEqual(sfp_run.kind_fragments(self.d, "debug", tree)[-1],
                         ROOT / "kernel-config" / "debug.config")
        self.assertEqual(sfp_run.kind_fragments(self.d, "bench", tree)[0],
                         ROOT / "kernel-config" / "base.config")

    def test_default_fragments(self):
        full = kernel_tree(self.t / "full")
        self.assertEqual(sfp_run.default_fragments(full), [
            ROOT / "kernel-config/base.config", full / "kernel/sched/tests/.kunitconfig",
            ROOT / "kernel-config/kunit.config", full / "tools/testing/selftests/sched/config"])
        bare = kernel_tree(self.t / "bare", kunit=False, selftests=False)
        self.assertEqual(sfp_run.default_fragments(bare), [ROOT / "kernel-config/base.config"])


class Layout(unittest.TestCase):
    def test_build_directory_layout(self):
        """A -r build's object directory is two levels below its worktree's
        source, as B/obj/NAME is below B/tree (ccache's base_dir at B)."""
        b = pathlib.Path("/b/6.12")
        self.assertEqual([sfp_run.kernel_logs(b, "n"), sfp_run.kernel_wt(b, "n"),
                          sfp_run.kernel_obj(b, "n"), sfp_run.kernel_obj(b, "n", ref=True)],
                         [b / "logs/n", b / "wt/n/tree", b / "obj/n", b / "wt/n/obj/n"])
        self.assertEqual(sfp_run.kernel_obj(b, "n", ref=True).parent.parent,
                         sfp_run.kernel_wt(b, "n").parent)


class Logs(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_(self, **kw):
        return sfp_run.plan(self.d, {"BUILD": str(self.t / "build"), "LINE": "6.12"}, **kw)

    def test_last_run_kept(self):
        r = self.run_()
        r.logdir.mkdir(parents=True)
        (r.logdir / "report.txt").write_text("last")
        sfp_run.prepare_logs(r)
        prev = r.logdir.with_name("patched.prev")
        self.assertEqual((prev / "report.txt").read_text(), "last")
        self.assertEqual(list(r.logdir.iterdir()), [])

    def test_given_logdir_emptied(self):
        log = self.t / "mine"
        log.mkdir()
        (log / "old").write_text("x")
        r = self.run_(logdir=str(log))
        sfp_run.prepare_logs(r)
        self.assertEqual(list(log.iterdir()), [])
        self.assertFalse(log.with_name("mine.prev").exists())

    def test_stage_times(self):
        st = sfp_run.Stages(self.t / "stage-times.tsv")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            with st.stage("build"):
                pass
            with self.assertRaises(RuntimeError):
                with st.stage("boot"):
                    raise RuntimeError
        self.assertEqual(err.getvalue(), "==> build\n<== build: 0s\n==> boot\n<== boot: 0s\n")
        self.assertEqual(st.line(), "stage times (wall): build 0s boot 0s")


class Interrupted(unittest.TestCase):
    """Ctrl-C while a caller waits for runs: the running ones are stopped
    (stop_runs), no queued one starts, and none starts afterwards."""

    def setUp(self):
        # Python's own Ctrl-C handler, whatever this process inherited (a
        # make run in the background starts it with SIGINT ignored).
        self.addCleanup(signal.signal, signal.SIGINT,
                        signal.signal(signal.SIGINT, signal.default_int_handler))

    def tearDown(self):
        sfp_run._STOPPED.clear()

    def test_no_queued_run_starts(self):
        started, release = [], threading.Event()
        both = threading.Barrier(3)

        def fn(i: int) -> int:
            started.append(i)
            if i < 2:
                both.wait(5)
            release.wait(5)
            return i

        main = threading.main_thread().ident

        def interrupt() -> None:
            both.wait(5)  # the two workers are busy with runs 0 and 1
            signal.pthread_kill(main, signal.SIGINT)  # the terminal's Ctrl-C

        stopped = []

        def stop() -> None:
            stopped.append(sorted(started))
            release.set()  # what SIGTERM does to a waited-for run: it ends

        threading.Thread(target=interrupt).start()
        with mock.patch.object(sfp_run, "stop_runs", stop), self.assertRaises(KeyboardInterrupt):
            sfp_run.map_runs(fn, list(range(6)), 2)
        self.assertEqual(stopped, [[0, 1]])
        self.assertEqual(sorted(started), [0, 1])

    def test_nothing_starts_once_stopping(self):
        sfp_run.stop_runs()
        with mock.patch("multiprocessing.context.SpawnProcess.start") as start:
            res = sfp_run.run_logged(sfp_run.RunRequest(), {}, pathlib.Path("/nonexistent"))
        start.assert_not_called()
        self.assertEqual((res.status, res.error), (1, "not started: sfp is stopping"))


if __name__ == "__main__":
    unittest.main()
