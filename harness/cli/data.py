# SPDX-License-Identifier: GPL-2.0
"""sfp data, sfp get, sfp validate, sfp result, sfp summarize, sfp compare."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_env, sfp_errors, sfp_results, sfp_summary
from harness.cli.common import Fail, Refuse, add, data, say


def cmd_get(args: argparse.Namespace) -> int:
    d = data()
    what, rest = args.what, args.args
    # what get prints: a string as one line, a list a line per item
    values: dict[str, str | list[str]]
    if what == "line":
        ln = d.line(_arg(rest, 0, "LINE"))
        values = {f: getattr(ln, f) for f in ("known_good", "debian_package", "kunit_header",
                                              "mutation_table", "env_var")}
        values |= {"config_absent": " ".join(ln.config_absent),
                   "no_catcher": [f"{c}: {w}" for c, w in d.no_catcher_reasons(ln.name).items()],
                   "distro_package": ln.distro_config.partition(":")[0],
                   "source": ln.default_source(args.env)}
    elif what == "kind":
        k = d.kind(_arg(rest, 0, "KIND"))
        values = {"default_fragments": "yes" if k.default_fragments else "no",
                  "fragments": list(k.fragments), "patches": list(k.patches), "append": k.append}
    elif what == "topology":
        t = d.topology(_arg(rest, 0, "TOPOLOGY"))
        values = {"vcpus": str(t.vcpus), "smp": t.smp, "nodes": ",".join(t.nodes) or "-",
                  "levels": t.levels}
        if _arg(rest, 1, "FIELD") == "qemu":
            mem = _arg(rest, 2, "MEM")
            if not mem.isdigit():
                raise Refuse(f"memory must be a number of MiB, not '{mem}'")
            values["qemu"] = t.qemu_args(int(mem))
    else:
        values = {"lines": " ".join(d.line_names()), "default-line": d.default_line,
                  "kinds": ", ".join(d.kinds), "topologies": ", ".join(d.topologies),
                  "baseline-fails": "\n".join(d.baseline_fails),
                  "splat-re": sfp_results.SPLAT_RE.pattern}
        if what not in values:
            raise Refuse(f"sfp get: nothing called '{what}' (see sfp get --help)")
        print(values[what])
        return 0
    field = _arg(rest, 1, "FIELD")
    field = field if what == "topology" else field.replace("-", "_")
    if field not in values:
        raise Refuse(f"a {what} has no field '{field}'")
    value = values[field]
    for item in [value] if isinstance(value, str) else value:
        print(item)
    return 0


def _arg(rest: list[str], i: int, name: str) -> str:
    if len(rest) <= i:
        raise Refuse(f"sfp get: {name} is missing (see sfp get --help)")
    return rest[i]


def _tally(res: sfp_results.Result) -> str:
    n = res.counts()
    return f"{n['PASS']} passed, {n['FAIL']} failed, {n['SKIP']} skipped"


def cmd_data(args: argparse.Namespace) -> int:
    d = data()
    if args.quiet:
        return 0
    print(f"sfp.toml: {len(d.lines)} lines ({' '.join(d.line_names())}; default {d.default_line}), "
          f"{len(d.kinds)} kinds, {len(d.topologies)} topologies, {len(d.archs)} architectures")
    for name in d.line_names():
        ln = d.lines[name]
        print(f"  line {name}: {ln.known_good}; source {ln.debian_package or ln.env_var}; "
              f"{len(d.mutants(name))} mutants; table {ln.mutation_table}")
    for k in d.kinds.values():
        frags = (["default"] if k.default_fragments else []) + list(k.fragments)
        print(f"  kind {k.name}: {'+'.join(frags)}"
              f"{'; patches ' + ' '.join(k.patches) if k.patches else ''}"
              f"{'; append ' + k.append if k.append else ''}")
    for t in d.topologies.values():
        print(f"  topology {t.name}: -smp {t.smp}, {len(t.nodes) or 'no'} NUMA nodes; {t.levels}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    choice = sfp_env.validate(data(), args.env, kind=args.kind, topology=args.topology)
    if args.verbose:
        say(f"line {choice.line} ({choice.source_from}), build directory {choice.build}: "
            "every input is usable")
    return 0


def cmd_result(args: argparse.Namespace) -> int:
    logdir = pathlib.Path(args.logdir)
    if not logdir.is_dir():
        raise Refuse(f"no log directory {logdir}")
    res = sfp_results.read(logdir)
    if args.json:
        print(res.to_json())
    else:
        print(f"{logdir}: {_tally(res)}; splats: {len(res.splats)}; stages: "
              + ", ".join(f"{k} {v}s" for k, v in res.stage_times.items()))
        for f in res.failed:
            print(f"  FAILED {f}")
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    with sfp_errors.raised_as(Fail, OSError):
        return sfp_summary.summarize(args.title, args.json or [], args.tsv or [], args.out,
                                     args.no_skips, args.precondition_skips)


def cmd_compare(args: argparse.Namespace) -> int:
    a, b = (sfp_results.read(pathlib.Path(p)) for p in (args.a, args.b))
    diff = sfp_results.compare(a, b)
    for d in diff:
        print(f"  {d}")
    print(f"{args.a}: {_tally(a)}; {args.b}: {_tally(b)}; {len(diff)} differences")
    return 1 if diff else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add(sub, "data", cmd_data, "load and check sfp.toml, and list its records",
            description="Load sfp.toml, refuse a bad record (exit 2, one line), and list the "
            "lines, kinds and topologies.")
    p.add_argument("-q", "--quiet", action="store_true", help="check only, print nothing")
    p = add(sub, "get", cmd_get, "one value of sfp.toml, for the shell scripts",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            description="Print one value of sfp.toml:\n"
            "  lines | default-line | kinds | topologies | baseline-fails\n"
            "  splat-re (what counts as a splat on a console, as an ERE)\n"
            "  line LINE known_good|debian_package|config_absent|kunit_header|"
            "mutation_table|no_catcher|env_var|source\n"
            "  kind KIND default_fragments|fragments|patches|append\n"
            "  topology NAME vcpus|smp|nodes|levels|qemu MEM")
    p.add_argument("what")
    p.add_argument("args", nargs="*")
    p = add(sub, "validate", cmd_validate, "refuse bad input before any work",
            description="Check the environment a script runs with (KSRC, LINE, TOPOLOGY, SMP, "
            "MEM, ACCEL, BOOT_TIMEOUT, JOBS) and a kind and topology; exit 2 with one line "
            "naming the first bad one.")
    p.add_argument("-K", "--kind", help="a kind of kernel (sfp get kinds)")
    p.add_argument("-t", "--topology", help="a topology (default: $TOPOLOGY)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="say which line and build directory the inputs give")
    p = add(sub, "result", cmd_result, "a boot's Result from its log directory",
            description="Read a boot's log directory (results.tsv, stage times, console splats, "
            "QEMU command line) into a Result.")
    p.add_argument("logdir")
    p.add_argument("--json", action="store_true", help="print the Result as JSON")
    p = add(sub, "summarize", cmd_summarize, "merge results; end with 'N passed, N failed'",
            "sfp_summary")
    p.add_argument("--json", nargs=3, action="append", metavar=("SOURCE", "SUITE", "FILE"),
                   help="kunit.py parse --json output; SUITE names top-level cases")
    p.add_argument("--tsv", action="append", metavar="FILE",
                   help="rows: source, suite, test, PASS|FAIL|SKIP|ERROR, note")
    p.add_argument("--out", metavar="FILE", help="write all rows here as TSV")
    p.add_argument("--title", default="results")
    p.add_argument("--no-skips", action="store_true", help="count a skipped test as failed (a "
                   "guest that should meet every prerequisite)")
    p.add_argument("--precondition-skips", metavar="FILE",
                   help="with --no-skips: tests (one name per line) that skipped because a "
                        "precondition could not be set up in time; they stay skipped")
    p = add(sub, "compare", cmd_compare, "two boots' Results: the same cases, the same verdicts",
            description="Compare the Results of two boots of the same kernel (say a direct boot "
            "and a LAVA job): the same cases, and the same verdict for each, where a skip for an "
            "unmet precondition matches a pass (it is not a verdict). Exit 1 on any difference, "
            "or if either has no cases.")
    p.add_argument("a", help="a boot's log directory")
    p.add_argument("b", help="another boot's log directory")
