# SPDX-License-Identifier: GPL-2.0
"""sfp bench, sfp offsets, sfp bench-lines."""
from __future__ import annotations

import argparse
import pathlib
import shlex
import sys

from harness import sfp_bench
from harness import sfp_benchlines
from harness import sfp_cost
from harness.cli.common import Fail, Refuse, add, data, say


def cmd_bench(args: argparse.Namespace) -> int:
    if args.seed is not None and not args.icount:
        raise Refuse("--seed chooses --icount's seeds: give --icount too")
    d = data()
    b = sfp_bench.plan(d, args.env, topologies=args.topologies, vcpus=args.vcpus,
                       duration=args.duration, reps=args.reps, mode=args.newidle_features,
                       out=args.out or "", qemu_opts=args.qemu_opts, smoke=args.smoke,
                       jobs=args.jobs, cost=args.cost, busy=args.busy,
                       seed=(1 if args.seed is None else args.seed) if args.icount else None,
                       command=" ".join(["./sfp bench", *map(shlex.quote, sys.argv[2:])]))
    return sfp_bench.run(b, d, args.env, say)


def cmd_offsets(args: argparse.Namespace) -> int:
    for name, off in sfp_bench.offsets(pathlib.Path(args.obj)):
        print(name, off)
    return 0


def cmd_bench_lines(args: argparse.Namespace) -> int:
    if args.insns and (args.cost or args.plot):
        raise Refuse("--insns reads cost-mode runs: it takes neither --cost nor --plot")
    if args.same and not args.insns:
        raise Refuse("--same compares cost-mode runs: give --insns too")
    if args.same and len(args.runs) < 2:
        raise Refuse("--same compares runs with the first: give two RUNs or more")
    runs = []
    for r in [] if args.insns else args.runs:
        try:
            runs.append(sfp_benchlines.load(pathlib.Path(r)))
        except sfp_benchlines.RunError as e:
            raise Fail(f"{e} (an sfp bench output directory with its report made)") from e
    if args.insns:
        paths = [pathlib.Path(r) for r in args.runs]
        text = sfp_cost.same(paths) if args.same else sfp_cost.across(paths)
    elif args.cost:
        text = sfp_benchlines.cost_table(runs)
    else:
        text = sfp_benchlines.table(runs)
        classes = sfp_benchlines.class_table(runs)
        if classes:
            text += "\nWhat set the indicator before patched's newly-idle balances:\n\n" + classes
    if args.out:
        pathlib.Path(args.out).write_text(text)
    else:
        print(text, end="")
    if args.plot:
        for f in sfp_benchlines.plot(runs, pathlib.Path(args.plot)):
            say(f"plot: {f}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp bench, sfp offsets, sfp bench-lines to SUB."""
    p = add(sub, "bench", cmd_bench, "the A/B benchmark: baseline against patched, in guests",
            "sfp_bench", """
Environment: MEM (guest MiB, default 1024), JOBS, BUILD, BENCH_APPEND
(more guest kernel command line, e.g. sfp.features=NO_DELAY_DEQUEUE or
sfp.rrwork=LOOPS; see scripts/guest/sfp_bench.sh), BENCH_BASELINE and
BENCH_PATCHED (commits of the work tree to build as the two sides;
default the branches 'baseline' and 'patched': BENCH_PATCHED=baseline
shows what the smoke checks say of a kernel without the mechanisms),
QEMU_OPTS (the default of -Q). docs/benchmark.md has the wall time of the
committed full run.

One run at a time per line and BUILD: a run holds BUILD/LINE/bench/lock,
and a second is refused, naming the first (both would rebuild the same
two kernels under each other's boots).""")
    p.add_argument("-t", "--topology", "--topologies", dest="topologies", metavar="LIST",
                   help="guest topologies of sfp.toml [topologies], space-separated "
                        "(default 'smp2 smp8 smt2x2x2 sock4x2')")
    p.add_argument("-s", "--vcpus", metavar="LIST",
                   help="vCPU counts, space-separated: the flat topologies smpN")
    p.add_argument("-d", "--duration", default="3", metavar="SEC",
                   help="guest seconds per workload and phase (default 3)")
    p.add_argument("--reps", default="3", metavar="N",
                   help="repetitions per kernel and topology (default 3)")
    p.add_argument("-F", "--newidle-features", default="measure", metavar="MODE",
                   help="the sched features that skip newly-idle balances by a rule of their own "
                        "(NI_RANDOM; NI_RATE on 7.1): 'measure' turns them off in both kernels, "
                        "so that the counters show the overload gate alone; 'shipped' leaves "
                        "them as the line ships them (default measure)")
    p.add_argument("-o", "--out", metavar="DIR",
                   help="output directory, which must not hold an earlier run (default "
                        "$BUILD/LINE/bench/run-DATE-TIME; $BUILD/LINE/bench/latest links it)")
    p.add_argument("-Q", "--qemu-opts", metavar="OPTS",
                   help="extra QEMU options for every boot (sfp boot -Q), e.g. '-icount "
                        "shift=1,sleep=off'; docs/bench/README.md says what that changes")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="J",
                   help="boot J guests at once (with BOOT_BACKEND=lava-server, J jobs on the LAVA "
                        "server's devices); here they share the host's cores, which the figures "
                        "feel (default 1: one boot after another)")
    p.add_argument("--smoke", action="store_true",
                   help="one repetition on smp2 for 3 s, then check that every metric was "
                        "collected and moved the expected way (make certify)")
    p.add_argument("--cost", action="store_true",
                   help="the cost mode: the count phases only, under a QEMU plugin "
                        "(bench/sfp_cost_plugin.c) that counts the guest instructions spent in the "
                        "newly-idle balance; OUTDIR/report.md has them per call that skipped, per "
                        "call that balanced (mean and median call), per idle entry and (rr, mix) "
                        "per request. Both kernels are built with the balance marked noinline "
                        "(OUTDIR/cost-noinline-KERNEL.patch: 6.19 and 7.1 inline it into its only "
                        "caller). The plugin is built against qemu-plugin.h: QEMU_PLUGIN_H, else "
                        "taken from Debian's QEMU source by apt-get source (a deb-src line) and "
                        "kept in the cache")
    p.add_argument("--busy", type=int, default=0, metavar="N",
                   help="N busy loops on the host while the guests run (as sfp stress -b): a busy "
                        "host, to see what it changes (default 0)")
    p.add_argument("--icount", action="store_true",
                   help="deterministic guests: guest time counted in instructions (-icount "
                        "shift=1,sleep=off: 2 ns an instruction, every vCPU on one host thread, "
                        "idle time skipped), random numbers from QEMU's -seed, the RTC on the "
                        "virtual clock, and hpet=disable nokaslr on the guest's command line. A "
                        "boot with the same kernel, topology and seed runs the same instructions, "
                        "on a quiet host or a busy one; repetitions differ by their seed (see "
                        "--seed)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="with --icount: repetition R boots with seed N+R-1 (default 1); two runs "
                        "with the same N boot the same guests")
    p = add(sub, "offsets", cmd_offsets, "the offsets of the fields the benchmark watches",
            description=sfp_bench.OFFSETS_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("obj", metavar="OBJ", help="a kernel build directory (O=)")
    p = add(sub, "bench-lines", cmd_bench_lines,
            "one table across benchmark runs (lines, -F modes)", "sfp_benchlines")
    p.add_argument("runs", nargs="+", metavar="RUN", help="sfp bench output directories")
    p.add_argument("-o", "--out", help="write the table here instead of standard output")
    p.add_argument("--plot", metavar="DIR",
                   help="also draw one figure per kernel line across its runs' modes "
                        "(DIR/bench-lines-LINE.png: attempts, wasted balances and pulls, per "
                        "repetition; Debian's python3-matplotlib)")
    p.add_argument("--cost", action="store_true",
                   help="the times instead: newly-idle balancing and request latency per kernel, "
                        "with their spread over the repetitions (for -icount runs)")
    p.add_argument("--insns", action="store_true",
                   help="the RUNs are sfp bench --cost output directories (cost.tsv, meta.tsv): "
                        "per run, topology and workload (rr, mix), the newly-idle instructions "
                        "and balances per idle entry and the median call that skipped and that "
                        "balanced, baseline and patched, with their spread over the repetitions")
    p.add_argument("--same", action="store_true",
                   help="with --insns: compare every later RUN with the first, workload window by "
                        "window (same kernel, topology and repetition): how many windows are "
                        "identical in every counter, and the largest difference of each figure; "
                        "for --icount runs booted with the same seeds, on a quiet host and on a "
                        "busy one")
