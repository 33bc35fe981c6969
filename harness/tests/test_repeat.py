# SPDX-License-Identifier: GPL-2.0
"""sfp repeat's reading of a guest log: the newly-idle kselftest's
figures per run (as the bash harness's awk read them before) and the
largest root tg_load_avg; and the job set of sfp mutate -j (a build
that fails, jobs run at once, their table)."""
import json
import os
import pathlib
import tempfile
import unittest

from harness import sfp_repeat
from harness.sfp_run import RunRequest

P = "# # sched_fastpath_newidle.c:402:"
LOG = f"""{P}light_load_skips_balance:light load: 2 newly-idle balance attempts / 354 idle entries = 0.005\r
{P}light_load_skips_balance:light load: 2 of 4 CPUs loaded, schedstat version 16\r
{P}overload_control_balances:overload control: 216 newly-idle balance attempts / 306 idle entries = 0.705\r
{P}overload_control_balances:overload control: 3 wakeups of a partner were late\r
# # sched_fastpath_root_tg.c:137:x:cfs_rq[0]:/ load_avg=2058 tg_load_avg_contrib=0 tg_load_avg=0\r
# # sched_fastpath_root_tg.c:137:x:cfs_rq[3]:/ load_avg=10 tg_load_avg_contrib=0 tg_load_avg=17\r
{P}light_load_skips_balance:light load: 1 newly-idle balance attempts / 100 idle entries = 0.010\r
{P}light_load_skips_balance:light load: 0 newly-idle balance attempts / 161 idle entries = 0.000\r
"""


class Figures(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = pathlib.Path(self.tmp.name) / "guest.log"
        self.log.write_text(LOG)

    def tearDown(self):
        self.tmp.cleanup()

    def test_runs(self):
        got = [(f.light, f.control, f.missed) for f in sfp_repeat.newidle_figures(self.log)]
        self.assertEqual(got, [("0.005 (2/354)", "0.705 (216/306)", "3"),
                               ("0.010 (1/100),0.000 (0/161)", "-", "-")])

    def test_missing_log(self):
        self.assertEqual(sfp_repeat.newidle_figures(self.log.with_name("none")), [])
        self.assertEqual(sfp_repeat.root_tg_max(self.log.with_name("none")), "")

    def test_root_tg(self):
        self.assertEqual(sfp_repeat.root_tg_max(self.log), "17")

    def test_default_out(self):
        b = pathlib.Path("/b/6.12")
        self.assertEqual(sfp_repeat.default_out(b, RunRequest(ref="patched", name="mutant")),
                         b / "logs" / "mutant-repeat")
        self.assertEqual(sfp_repeat.default_out(b, RunRequest()), b / "logs" / "patched-repeat")


class JobSet(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)
        self.env = dict(os.environ, BUILD=str(self.t / "build"), LINE="6.12")

    def tearDown(self):
        self.tmp.cleanup()

    def test_failed_build_named(self):
        # A patch that is not there: sfp run refuses before any work.
        run = RunRequest(ref="patched", patches=(str(self.t / "none.patch"),), name="x")
        with self.assertRaisesRegex(sfp_repeat.RepeatFailed, "--build-only failed"):
            sfp_repeat.build_saved(run, self.t / "v", self.env)
        self.assertIn("none.patch' not found", (self.t / "v" / "build.out").read_text())
        self.assertFalse((self.t / "build").exists())

    def test_jobs_at_once(self):
        # Images that are not there: each job's sfp run refuses at once, so
        # every job ends, with no result, and says so.
        jobs = [sfp_repeat.BootJob(f"v{i}", b, RunRequest(ref="patched", name="x"),
                                   self.t / "none",
                                   self.t / f"v{i}" / str(b)) for i in (1, 2) for b in (1, 2)]
        for j in jobs:
            j.logdir.parent.mkdir(parents=True, exist_ok=True)
        said = []
        done = sfp_repeat.run_jobs(jobs, 2, self.env, said.append)
        self.assertEqual([d.job for d in done], jobs)
        self.assertTrue(all(d.status == 2 and d.passed == d.failed == 0 for d in done))
        self.assertEqual(len(said), 4)
        self.assertTrue(all("no result" in s for s in said), said)
        self.assertIn("--images", pathlib.Path(f"{jobs[0].logdir}.out").read_text())
        table = sfp_repeat.jobs_table(done, 2, 10.0).splitlines()
        self.assertEqual(table[0], "variant\tboot\tseconds\texit\tpassed\tfailed")
        self.assertEqual(len(table), 6)
        self.assertRegex(table[-1], r"^# 4 boots, \d+ s of boots, 10 s wall with 2 at once")

    def test_lava_jobs_column(self):
        # A boot that took two LAVA jobs (a resubmission) and one that took none.
        (self.t / "jobs.json").write_text(json.dumps(
            [{"job_id": "12", "device": "sfp-qemu-01", "queued": 30.0, "ran": 5.0},
             {"job_id": "15", "device": "sfp-qemu-02", "queued": 100.0, "ran": 45.0}]))
        self.assertEqual(sfp_repeat.lava_jobs(self.t / "jobs.json"),
                         ("12@sfp-qemu-01 then 15@sfp-qemu-02", 130.0, 50.0))
        self.assertEqual(sfp_repeat.lava_jobs(self.t / "none.json"), ("", 0.0, 0.0))
        job = sfp_repeat.BootJob("v", 1, RunRequest(), self.t, self.t / "v" / "1")
        done = [sfp_repeat.Done(job, 200.0, 0, 65, 0, "12@sfp-qemu-01 then 15@sfp-qemu-02",
                                130.0, 50.0),
                sfp_repeat.Done(job, 61.0, 0, 65, 0, "16@sfp-qemu-01", 10.0, 50.0)]
        table = sfp_repeat.jobs_table(done, 2, 100.0, "the server scheduling").splitlines()
        self.assertEqual(table[0], "variant\tboot\tseconds\texit\tpassed\tfailed\tlava\tqueued\tran")
        self.assertEqual(table[1].split("\t")[-3:], ["12@sfp-qemu-01 then 15@sfp-qemu-02", "130",
                                                     "50"])
        self.assertEqual(table[-1], "# 2 boots, 100 s running on the devices, queued 70 s on "
                                    "average and 130 s at most, 100 s wall with the server "
                                    "scheduling (1.00 devices busy on average)")


if __name__ == "__main__":
    unittest.main()
