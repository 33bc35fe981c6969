#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a fake line build directory with saved mutate boots (results.tsv
per boot) to DIR: the fixture of test_mutate.py. The cases and variants
are 6.12's; each variant's boots are chosen to reach one branch of the
verdict rules (see VARIANTS)."""
import pathlib
import random
import sys

CASES = [
    ("kunit", "sched_fair_tg_load_avg", "root_tg_update_skipped"),
    ("kunit", "sched_fair_overload_set", "set_on_second_task"),
    ("kunit", "sched_fair_overload_set", "set_not_on_first_task"),
    ("kunit", "sched_fair_certify", "set_only_on_transition"),
    ("kunit", "sched_fair_model", "model_set_side"),
    ("guest", "sched_fastpath_root_tg.root_tg", "root_group_load_avg_untouched"),
    ("guest", "sched_fastpath_root_tg.root_tg", "cpu_offline_online"),
    ("guest", "sched_fastpath_newidle.newidle", "light_load_skips_balance"),
    ("guest", "sched_fastpath_newidle.partition", "overload_elsewhere_keeps_skipping"),
    ("guest", "kselftest", "selftests: sched: sched_fastpath_newidle"),
    ("guest", "guest_preconditions", "kernel_is_the_build"),
    ("guest", "guest_state", "schedstats_restored"),
    ("guest", "sched_fair_certify", "child_tg_below_threshold_kept"),
]
BOOTS = 3
# variant: per boot, the cases (by index) that fail, and those that skip
# for an unmet precondition; None: no results in that boot.
VARIANTS: dict[str, list[tuple[tuple[int, ...], tuple[int, ...]] | None]] = {
    "patched": [((), ()), ((), ()), ((), ())],
    "add-and-to-or": [((2, 3, 4, 7, 9), ()), ((2, 3, 4, 7, 9), ()), ((2, 3, 4, 7), ())],
    "add-nr-bound-minus1": [((2, 7), ()), ((2,), (7,)), ((2, 7), ())],
    "add-nr-dropped": [((2, 7), ()), ((2,), ()), ((7,), ())],
    "add-nr-eq-2": [((3,), (7,)), ((3,), (7,)), ((3,), (7,))],
    "blind-newidle-gate-and": [((7, 8), ()), ((8,), ()), ((9,), ())],
    "blind-tg-parent-root": [((0,), ()), None, None],
    "baseline": [((5, 6, 7, 8, 9), ()), ((5, 6, 7, 8, 9), ()), ((5, 6, 7, 8), ())],
}


def main(out: pathlib.Path) -> None:
    mut = out / "mutate"
    for name, boots in VARIANTS.items():
        for b, spec in enumerate(boots, 1):
            d = mut / name / str(b)
            d.mkdir(parents=True, exist_ok=True)
            if spec is None:
                continue
            fail, skip = spec
            rows = []
            for i, (src, suite, test) in enumerate(CASES):
                if i in fail:
                    rows.append(f"{src}\t{suite}\t{test}\tFAIL\t")
                elif i in skip:
                    rows.append(f"{src}\t{suite}\t{test}\tSKIP\tprecondition not met in time: "
                                "not a result")
                else:
                    rows.append(f"{src}\t{suite}\t{test}\tPASS\t")
            (d / "results.tsv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    random.seed(0)
    main(pathlib.Path(sys.argv[1]))
