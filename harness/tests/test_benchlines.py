# SPDX-License-Identifier: GPL-2.0
"""The table across benchmark runs, and the power it states."""
import math
import pathlib
import tempfile
import unittest

from harness.sfp_benchlines import RunError, class_rows, class_table, cost_table, load, power, table


def write_run(d: pathlib.Path, mode: str | None, pulls: dict[str, list[float]]) -> None:
    meta = ["command\tscripts/bench.sh -t smp4", "topologies\tsmp4", "version\t6.19.0"]
    if mode:
        meta.append(f"newidle_features\t{mode}")
    (d / "meta.tsv").write_text("\n".join(meta) + "\n")
    out = ["kernel\ttopology\tvcpus\trep\tmetric\tvalue"]
    for k, vals in pulls.items():
        for i, v in enumerate(vals, 1):
            out.append(f"{k}\tsmp4\t4\t{i}\tmix.lb.gained\t{v}")
            out.append(f"{k}\tsmp4\t4\t{i}\trr.lb.attempts_per_idle\t{0.8 if k == 'baseline' else 0.02}")
            out.append(f"{k}\tsmp4\t4\t{i}\tpool.writes.root_tg_load_avg\t{900 if k == 'baseline' else 0}")
    out.append("patched\tsmp4\t4\t1\trr.lb.wasted_per_idle\tNone")
    (d / "results.tsv").write_text("\n".join(out) + "\n")


class Load(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_plot_data_per_line_and_mode(self):
        from harness import sfp_benchlines
        a, b = self.d / "a", self.d / "b"
        a.mkdir()
        b.mkdir()
        write_run(a, "measure", {"baseline": [10, 20, 40], "patched": [11, 18, 40]})
        write_run(b, "shipped", {"baseline": [5, 6], "patched": [7, 8]})
        got = sfp_benchlines.plot_data([load(a), load(b)])
        self.assertEqual(sorted(got), ["6.19"])
        self.assertEqual(got["6.19"]["measure"]["baseline"]["pulls"], [10, 20, 40])
        self.assertEqual(got["6.19"]["shipped"]["patched"]["attempts"], [0.02, 0.02])
        self.assertEqual(got["6.19"]["measure"]["patched"]["wasted"], [])
        with self.assertRaisesRegex(RunError, "a second measure run of 6.19.0"):
            sfp_benchlines.plot_data([load(a), load(a)])

    def test_mode_defaults_to_measure(self):
        # Runs made before -F existed turned NI_RANDOM off: measure.
        write_run(self.d, None, {"baseline": [10, 20], "patched": [10, 20]})
        self.assertEqual(load(self.d).mode, "measure")

    def test_rows(self):
        write_run(self.d, "shipped", {"baseline": [10, 20, 40], "patched": [11, 18, 40]})
        # one row per run and topology: attempts, wasted (a None value is
        # no value), pulls, pull ratios, writes (baseline's median,
        # patched's largest), the power and the repetitions it needs
        row = table([load(self.d)]).splitlines()[2]
        self.assertEqual(row, "| 6.19.0 | shipped | smp4 | 0.8 (0.8..0.8) -> 0.02 (0.02..0.02), "
                              "x0.025 | - -> - | 20 (10..40) -> 18 (11..40) | 1 (0.9..1.10) | "
                              "900 -> 0 | 13% (3) | 24 | - |")

    def test_classification_summed_over_repetitions(self):
        write_run(self.d, "measure", {"baseline": [10, 20, 40], "patched": [11, 18, 40]})
        self.assertEqual(class_table([load(self.d)]), "")  # no classify phase: no table
        per = {"balances": (5, 7), "pulled": (1, 2), "unexplained": (0, 1), "after_clear": (1, 0),
               "sets": (3, 4), "empty_sets": (2, 2)}
        with open(self.d / "results.tsv", "a") as f:
            for k, vals in per.items():
                for i, v in enumerate(vals, 1):
                    f.write(f"patched\tsmp4\t4\t{i}\trr.classify.{k}\t{v}\n")
        (r,) = class_rows(load(self.d))
        self.assertEqual((r.workload, r.reps, r.counts["balances"], r.wasted), ("rr", 2, 12, 9))
        self.assertAlmostEqual(r.per_empty_set, 9 / 4)
        with open(self.d / "results.tsv", "a") as f:
            for k, v in (("baseline", 0.8), ("patched", 0.02)):
                f.write(f"{k}\tsmp4\t4\t1\trr.lb.wasted_per_idle\t{v}\n")
        # 0.02 / 0.8 * 4 / 9 = 1.1%
        self.assertIn("| 9 | 2.25 | 1.1% |", class_table([load(self.d)]))

    def test_cost_spread(self):
        write_run(self.d, "measure", {"baseline": [10, 20, 40], "patched": [11, 18, 40]})
        with open(self.d / "results.tsv", "a") as f:
            for i, v in enumerate((100.0, 101.0, 99.0), 1):
                f.write(f"patched\tsmp4\t4\t{i}\trr.sched_balance_newidle.us_per_call\t{v}\n")
        t = cost_table([load(self.d)])
        # (101 - 99) / 100
        self.assertIn("100 (99..101; 2.00%)", t)
        self.assertIn("| baseline | - |", t)

    def test_not_a_run(self):
        with self.assertRaises(RunError):
            load(self.d)
        (self.d / "meta.tsv").write_text("topologies\tsmp2\n")
        (self.d / "results.tsv").write_text("a\tb\n")
        with self.assertRaises(RunError):
            load(self.d)


class Power(unittest.TestCase):
    def test_too_few(self):
        self.assertIsNone(power([1.0, 1.1]).detectable_loss)

    def test_no_spread_needs_nothing_more(self):
        p = power([1.0, 1.0, 1.0])
        self.assertEqual((p.detectable_loss, p.reps_for_loss), (0, 3))

    def test_against_the_formula(self):
        # sd of log ratios s; z = z(0.95) + z(0.80) = 1.6449 + 0.8416
        r = [math.exp(x) for x in (-0.1, 0.0, 0.1, 0.2)]
        p = power(r)
        s = 0.12909944487358055
        self.assertAlmostEqual(p.sd_log, s)
        self.assertAlmostEqual(p.detectable_loss, 1 - math.exp(-2.486475 * s / 2), places=5)
        self.assertEqual(p.reps_for_loss, math.ceil((2.486475 * s / -math.log(0.95)) ** 2))

    def test_ratio_and_its_bound_from_30_repetitions(self):
        self.assertIsNone(power([1.0, 0.9, 1.1] * 9).lower)   # 27
        r = [math.exp(x) for x in (-0.1, 0.0, 0.1, 0.2)] * 8   # 32: mean 0.05
        p = power(r)
        s = p.sd_log
        self.assertAlmostEqual(p.gmean, math.exp(0.05))
        self.assertAlmostEqual(p.lower, math.exp(0.05 - 1.6448536 * s / math.sqrt(32)), places=6)
        self.assertLess(p.lower, p.gmean)

    def test_more_spread_needs_more(self):
        a = power([0.9, 1.0, 1.1]).reps_for_loss
        b = power([0.6, 1.0, 1.6]).reps_for_loss
        self.assertLess(a, b)


if __name__ == "__main__":
    unittest.main()
