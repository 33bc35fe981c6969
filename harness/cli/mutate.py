# SPDX-License-Identifier: GPL-2.0
"""sfp mutate, sfp mutants."""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time
from collections import Counter

from harness import (sfp_env, sfp_mutate, sfp_mutgen, sfp_repeat, sfp_results, sfp_run,
                     sfp_series)
from harness.cli.common import Fail, PROG, Refuse, ROOT, add, data, say


def _note(msg: str) -> None:
    """A progress line (==> and <==) on stderr, without the 'sfp:' of say()."""
    print(msg, file=sys.stderr, flush=True)


def cmd_mutate(args: argparse.Namespace) -> int:
    d, env = data(), args.env
    choice = sfp_env.validate(d, env)
    line, build = choice.line, choice.build
    for bad, what in ((args.boots < 1, "-k needs a number of boots, 1 or more"),
                      (args.debug_boots < 0, "-d needs a number of boots, 0 or more"),
                      (args.jobs < 0, "-j needs a number of boots at once, 1 or more")):
        if bad:
            raise Refuse(f"{what} (see --help)")
    if args.icount:
        qopts, append = env.get("QEMU_OPTS", ""), env.get("APPEND", "")
        why = ("--icount says how guests boot, and --from-logs boots none" if args.from_logs
               else sfp_env.icount_refused(d, line, env, qopts))
        if why:
            raise Refuse(why)
        env = dict(env, QEMU_OPTS=sfp_env.icount_qemu_opts(qopts, 1),
                   APPEND=f"{append} {sfp_env.ICOUNT_APPEND}".strip())
    wt, mdir, out = build / "tree", ROOT / "tests" / "mutants" / line, build / "mutate"
    if args.generated:
        if args.into:
            raise Refuse("--into takes the hand-written set's rows, not --generated's")
        mdir, out = build / "mutants-gen", build / "mutate-gen"
        if not args.from_logs:
            if not (wt / ".git").exists():
                raise Refuse(f"no work tree at {wt}: run 'make prepare' first")
            muts = sfp_mutgen.write_set(wt, sfp_mutgen.changed_lines(wt), mdir)
            say(f"{len(muts)} generated mutants in {mdir} (index.tsv)")
        names = args.variants or ["patched"] + sorted(p.stem for p in mdir.glob("*.patch"))
    else:
        names = args.variants or (["patched"] + [m.stem for m in d.mutants(line)] + ["baseline"])
    if args.into and not (ROOT / args.into).is_file():
        raise Refuse(f"--into {args.into}: no such table in the repository (see --help)")
    for n in names:
        p = mdir / f"{n}.patch"
        if n in ("patched", "baseline"):
            continue
        if not p.is_file():
            raise Refuse(f"unknown variant '{n}': no {p} (see --help)")
        if not sfp_mutate.variant(d, line, n, mdir).expect:
            raise Refuse(f"{p} has no 'expect:' line")
    if args.from_logs:
        if not out.is_dir():
            raise Refuse(f"--from-logs: no saved boots under {out} (see --help)")
    elif not (wt / ".git").exists():
        raise Refuse(f"no work tree at {wt}: run 'make prepare' first")
    else:
        out.mkdir(parents=True, exist_ok=True)
        # baseline's kselftests: what the series adds under tools/testing/selftests.
        (out / "selftests.patch").write_bytes(sfp_series.selftests_diff(wt))

    def run_of(n: str) -> sfp_run.RunRequest:
        patch = {"patched": (), "baseline": (str(out / "selftests.patch"),)}.get(
            n, (str(mdir / f"{n}.patch"),))
        return sfp_run.RunRequest(ref="baseline" if n == "baseline" else "patched",
                                  patches=patch, choice=choice, reproducible=args.icount)

    here = not args.from_logs and not args.jobs  # each variant built and booted in turn
    build_rc: dict[str, int] = {}
    if args.jobs and not args.from_logs:
        build_rc = _mutate_job_set(names, run_of, args.boots, args.debug_boots, args.jobs, out,
                                   env)
    verdicts, debugs = [], []
    for n in names:
        v = sfp_mutate.variant(d, line, n, mdir)
        t0 = time.monotonic()
        _note(f"==> variant {n}: {v.what} ({args.boots} boots)")
        run_rc = build_rc.get(n, 0)
        if here:
            run_rc = _repeat_into(out / f"{n}.repeat",
                                  dataclasses.replace(run_of(n), name="mutant"), args.boots,
                                  out / n, env)
        verdict = sfp_mutate.judge_from_logs(d, line, n, args.boots, out, run_rc, mdir)
        debug = None
        if args.debug_boots:
            if here:
                _note(f"==> variant {n}: on the debug kernel ({args.debug_boots} boots)")
                _repeat_into(out / f"{n}.debug.repeat",
                             dataclasses.replace(run_of(n), kind="lockdep", name="mutant-debug"),
                             args.debug_boots, out / f"{n}.debug", env)
            debug = sfp_mutate.judge_debug(v, [sfp_results.read(out / f"{n}.debug" / str(b))
                                               for b in range(1, args.debug_boots + 1)])
            debugs.append(debug)
        verdict = sfp_mutate.with_debug(verdict, debug)
        for m in verdict.messages:
            say(m)
        if debug:
            say(f"{n}: debug kernel: {debug.verdict}: {debug.seen}")
        verdicts.append(verdict)
        _note(f"<== variant {n}: {v.what} ({args.boots} boots): {int(time.monotonic() - t0)}s")
    made_by = f"sfp mutate -k {args.boots}" + \
        (f" --debug-boots {args.debug_boots}" if args.debug_boots else "") + \
        (f" -j {args.jobs}" if args.jobs and not args.from_logs else "") + \
        (" --from-logs" if args.from_logs else "") + (" --generated" if args.generated else "") + \
        (" --icount" if args.icount else "") + \
        "".join(" " + n for n in args.variants)
    text, ok, none_left = sfp_mutate.table(d, line, verdicts, made_by, debugs)
    if args.generated:
        tri = sfp_mutgen.load_triage(ROOT / "tests" / "mutgen" / f"{line}.toml")
        more, untriaged = sfp_mutgen.survivors(
            [(v.variant.name, v.verdict) for v in verdicts if v.variant.name != "patched"], tri)
        text += more
        # A survivor argued equivalent, or kept open with its gap named,
        # is in order; one with neither is not, as a missed mutant is in
        # the hand-written set.
        ok = all(v.ok for v in verdicts if v.variant.name == "patched") and not untriaged
    (out / "table.md").write_text(text, encoding="utf-8")
    print()
    print(text, end="")
    if args.into and ok:
        page = ROOT / args.into
        page.write_text(sfp_mutate.merge(page.read_text(encoding="utf-8"), text, names,
                                         made_by + f" --into {args.into}"), encoding="utf-8")
        say(f"merged {len(names)} rows into {args.into}")
    elif args.into:
        say(f"not merged into {args.into}: a verdict is not in order")
    return 0 if ok and not (none_left and not args.variants and not args.generated) else 1


def _mutate_job_set(names: list[str], run_of, boots: int, debug_boots: int, workers: int,
                    out: pathlib.Path, env: dict[str, str]) -> dict[str, int]:
    """sfp mutate -j: every variant built in turn (its images saved) and
    every boot a job; per variant 0, or 1 when its build failed.
    OUT/jobs.tsv: what each job took, and the set's wall time.

    Here (BOOT_BACKEND qemu or lava), the boots start when every build is
    done, WORKERS at a time: guests do not share this machine's cores with
    a build. With BOOT_BACKEND=lava-server the server schedules: a
    variant's boots are submitted as soon as it is built, all of them, and
    the server queues them for its devices while the next variant builds."""
    build_rc: dict[str, int] = {}
    backend = env.get("BOOT_BACKEND") or "qemu"
    server = backend == "lava-server"
    # A waiting client per job: the server, not this number, decides what runs.
    runner = sfp_repeat.JobRunner(max(workers, len(names) * (boots + debug_boots)) if server
                                  else workers, env, say)
    jobs: list[sfp_repeat.BootJob] = []
    sets = [("", "mutant", boots)] + ([(".debug", "mutant-debug", debug_boots)]
                                      if debug_boots else [])
    t_set = time.monotonic()
    try:
        for n in names:
            for suffix, name, k in sets:
                run = dataclasses.replace(run_of(n), kind="lockdep" if suffix else "", name=name)
                t0 = time.monotonic()
                _note(f"==> build {n}{suffix}")
                with open(out / f"{n}{suffix}.repeat", "w", encoding="utf-8") as f:
                    try:
                        images, _ = sfp_repeat.build_saved(run, out / f"{n}{suffix}", env)
                    except sfp_repeat.RepeatFailed as e:
                        print(f"{PROG}: error: {e}", file=f)
                        say(str(e))
                        build_rc[n] = 1
                        continue
                    print(f"{PROG}: built; images in {images}; {k} boots as jobs", file=f)
                mine = [sfp_repeat.BootJob(f"{n}{suffix}", b, run, images,
                                           out / f"{n}{suffix}" / str(b)) for b in range(1, k + 1)]
                if server:
                    runner.start(mine)
                jobs += mine
                _note(f"<== build {n}{suffix}: {int(time.monotonic() - t0)}s"
                      + (f"; {k} jobs submitted" if server else ""))
    except BaseException:
        # stopped while building: the jobs given so far end too
        runner.stop()
        raise
    if server:
        how = "builds and boots overlapping, the LAVA server scheduling every job"
        _note(f"==> every build done; waiting for {len(jobs)} LAVA jobs")
    else:
        how = f"{workers} at once"
        _note(f"==> {len(jobs)} boots as jobs, {workers} at once (backend {backend})")
        t_set = time.monotonic()
        runner.start(jobs)
    done = runner.results()
    wall = time.monotonic() - t_set
    table = sfp_repeat.jobs_table(done, workers, wall, how)
    (out / "jobs.tsv").write_text(table)
    _note(f"<== {len(jobs)} boots as jobs: {int(wall)}s")
    say(table.splitlines()[-1].lstrip("# ") + f"; per job: {out}/jobs.tsv")
    return build_rc


def _repeat_into(log: pathlib.Path, req: sfp_run.RunRequest, boots: int, out: pathlib.Path,
                 env: dict[str, str]) -> int:
    """sfp repeat of REQ, its table and messages into LOG: 0, or 1 when the
    build failed."""
    with open(log, "w", encoding="utf-8") as f:
        def note(msg: str) -> None:
            print(f"{PROG}: {msg}", file=f, flush=True)
        try:
            sfp_repeat.repeat(req, boots, out, 0, env, note, f)
        except sfp_repeat.RepeatFailed as e:
            print(f"{PROG}: error: {e}", file=f)
            return 1
    return 0


def cmd_mutants(args: argparse.Namespace) -> int:
    d, env = data(), args.env
    choice = sfp_env.validate(d, env)
    tree = pathlib.Path(args.tree) if args.tree else choice.build / "tree"
    if not (tree / ".git").exists():
        raise Refuse(f"'{tree}' is not a work tree (a git checkout with commits baseline and "
                     "patched)" if args.tree else
                     f"no work tree at {tree}: run 'make prepare' first (or give one with -t)")
    out = pathlib.Path(args.out) if args.out else choice.build / "mutants-gen"
    muts = sfp_mutgen.write_set(tree, sfp_mutgen.changed_lines(tree), out)
    bad = sfp_mutgen.check_applies(tree, out)
    print(f"{tree}: {len(muts)} mutants in {out}")
    for what, counts in (("rule", Counter(m.rule for m in muts)),
                         ("function", Counter(m.func for m in muts))):
        print(f"by {what}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if bad:
        raise Fail(f"{len(bad)} generated mutants do not apply to {tree}: {', '.join(bad[:5])}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp mutate, sfp mutants to SUB."""
    p = add(sub, "mutate", cmd_mutate, "build and boot the line's mutants; their table",
            "sfp_mutate", """
Variants: patched (the control), baseline (both features backed out, with
the series' kselftests) and the NAME of each tests/mutants/LINE/NAME.patch
(first line 'mutant: what it changes', second 'expect: the cases that must
fail' or 'any'). Default: all of them. The line is LINE=, else KSRC's,
else sfp.toml's default_line.

Each variant is built once and booted BOOTS times by sfp repeat
-o $BUILD/LINE/mutate/NAME BOOTS -- -r REF [-p PATCH] -n mutant. Writes
$BUILD/LINE/mutate/table.md. Exit status 1 if a mutant is missed or not judged
(a mutant only the debug kernel sees, without --debug-boots), the control fails, or
(for the whole set) a case has neither a catcher nor a reason.
Needs a prepared work tree (make prepare), but for --from-logs.""")
    p.add_argument("-k", "--boots", type=int, default=5, help="boots per variant (default 5)")
    p.add_argument("--from-logs", action="store_true",
                   help="build and boot nothing: the verdicts and table from the boots an "
                        "earlier run saved under $BUILD/LINE/mutate/NAME/N/")
    p.add_argument("--debug-boots", type=int, default=0, metavar="N",
                   help="also boot each variant N times on the debug kernel (kind 'lockdep': "
                        "debug.config's lockdep and KASAN, panic_on_warn); its own table; a "
                        "mutant whose third line is 'kernel: debug' is judged there (default 0; "
                        "make mutate: MUTATE_DEBUG_BOOTS=1)")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="J",
                   help="a job set: build every variant in turn, then boot them J at once "
                        "here; with BOOT_BACKEND=lava-server each variant's boots are "
                        "submitted as soon as it is built, and the server queues and "
                        "schedules every job on its devices (J is not a limit there); "
                        "OUT/jobs.tsv has each job's time, LAVA job and device "
                        "(default 0: each variant built and booted in turn)")
    p.add_argument("--into", metavar="TABLE",
                   help="when every verdict is in order, merge this run's rows into "
                        "the committed table TABLE (a line's mutation_table in sfp.toml): its "
                        "variants' rows replaced or added, each case's catchers "
                        "updated, a 'Rows merged by:' line under 'Made by:'")
    p.add_argument("--generated", action="store_true",
                   help="the mutants made by rule (sfp mutants) instead of tests/mutants/LINE/: "
                        "made anew from the work tree into $BUILD/LINE/mutants-gen, each 'expect: "
                        "any'; logs and table under $BUILD/LINE/mutate-gen (the control is "
                        "booted too)")
    p.add_argument("--icount", action="store_true",
                   help="deterministic guests, as sfp bench --icount: guest time counted in "
                        "instructions, the RTC, the random numbers (-seed 1) and the kernel's "
                        "placement fixed, each kernel built with a fixed number and time. "
                        "Every boot of a variant is then the same boot, whatever else the host "
                        "runs, so -k 1 is the whole verdict, and a job set's table is the run "
                        "in turn's. Not on a line with sfp.toml no_icount (6.1)")
    p.add_argument("variants", nargs="*", metavar="VARIANT")
    p = add(sub, "mutants", cmd_mutants, "make every one-line mutant of the mechanisms by rule",
            "sfp_mutgen", """
Writes DIR/NAME.patch for each mutant and DIR/index.tsv (default DIR:
BUILD/LINE/mutants-gen, its old set removed first) from the line's work
tree (commits baseline and patched), checks that each applies to
patched, and prints the counts by rule and by function. sfp mutate
--generated builds and boots them: about a minute each here (a build of
kernel/sched/ and one boot), so 6.12's whole set takes one and a half
to two hours.""")
    p.add_argument("--tree", help="the work tree (default: the line's, BUILD/LINE/tree)")
    p.add_argument("-o", "--out", help="the directory of the mutants (default "
                   "BUILD/LINE/mutants-gen; a directory of other patches is refused)")
