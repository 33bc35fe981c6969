# SPDX-License-Identifier: GPL-2.0
"""Scheduling measured jobs on N workers."""
import pathlib
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from sfp_fanout import Job, makespan, mutate_jobs, table  # noqa: E402


class Schedule(unittest.TestCase):
    jobs = [Job("a/build", 100), Job("a/boot1", 20, "a/build"), Job("a/boot2", 20, "a/build"),
            Job("b/build", 60), Job("b/boot1", 30, "b/build")]

    def test_one_worker_is_the_sum(self):
        self.assertEqual(makespan(self.jobs, 1), 230)

    def test_many_workers_is_the_longest_chain(self):
        self.assertEqual(makespan(self.jobs, 64), 120)

    def test_two_workers(self):
        # a/build 0-100 | b/build 0-60, b/boot1 60-90, a/boot? waits for 100:
        # worker 2 free at 90, boots of a at 100-120 on both workers.
        self.assertEqual(makespan(self.jobs, 2), 120)

    def test_missing_dependency(self):
        with self.assertRaises(ValueError):
            makespan([Job("x/boot1", 5, "x/build")], 2)

    def test_table(self):
        t = table(self.jobs, (1, 64))
        self.assertIn("2 builds (160 s) and 3 boots (70 s): 230 s of jobs", t)
        self.assertIn("| 64 | 120 s (2.0 min) | 1.9x |", t)


class FromLogs(unittest.TestCase):
    def test_saved_run(self):
        d = pathlib.Path(tempfile.mkdtemp())
        try:
            (d / "patched").mkdir()
            (d / "patched" / "build.out").write_text("==> tree\n<== tree: 3s\n<== build: 70s\n"
                                                     "<== guest: 4s\n")
            for b, secs in ((1, 21), (2, 25)):
                (d / "patched" / str(b)).mkdir()
                (d / "patched" / str(b) / "stage-times.tsv").write_text(f"boot\t{secs}\ntests\t5\n")
            jobs = mutate_jobs(d)
            self.assertEqual([(j.name, j.seconds) for j in jobs],
                             [("patched/build", 77), ("patched/boot1", 26), ("patched/boot2", 30)])
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main()
