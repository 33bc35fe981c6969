# SPDX-License-Identifier: GPL-2.0
"""sfp build-kernel, sfp build-guest, sfp config-unmet, sfp fragments, sfp distro-config."""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

from harness import sfp_build
from harness import sfp_distro
from harness import sfp_env
from harness import sfp_guest
from harness import sfp_prepare
from harness import sfp_run
from harness.cli.common import Fail, Refuse, add, data, say


def cmd_build_kernel(args: argparse.Namespace) -> int:
    d = data()
    choice = sfp_env.select_line(d, args.env)
    tree = pathlib.Path(args.tree)
    if not tree.is_dir():
        raise Refuse(f"kernel tree '{tree}' does not exist")
    if not sfp_prepare.is_kernel_tree(tree):
        raise Refuse(f"'{tree}' is not a kernel source tree")
    frags = [pathlib.Path(f) for f in args.fragment] or sfp_run.default_fragments(tree)
    sfp_build.build(tree, pathlib.Path(args.obj), frags, choice.line,
                    d.lines[choice.line].config_absent, choice.build, say, args.env)
    return 0


def cmd_build_guest(args: argparse.Namespace) -> int:
    tree = pathlib.Path(args.tree) if args.tree else None
    if tree and not tree.is_dir():
        raise Refuse(f"kernel tree '{tree}' does not exist")
    g = sfp_guest.Guest(pathlib.Path(args.obj), pathlib.Path(args.out), tree,
                        tuple(map(pathlib.Path, args.extra)), tuple(map(pathlib.Path, args.bin)),
                        tuple(map(pathlib.Path, args.dynamic)), args.perf)
    sfp_guest.build(g, say)
    return 0


def cmd_config_unmet(args: argparse.Namespace) -> int:
    for path in [args.config, *args.fragments]:
        if not pathlib.Path(path).is_file():
            raise Refuse(f"'{path}' not found")
    for m in sfp_build.config_unmet(pathlib.Path(args.config),
                                    [pathlib.Path(f) for f in args.fragments], args.strict):
        print(m)
    return 0


def cmd_fragments(args: argparse.Namespace) -> int:
    tree = pathlib.Path(args.tree)
    d = data()
    if args.kind:
        choice = sfp_env.validate(d, args.env, kind=args.kind)
        frags = sfp_run.kind_fragments(d, args.kind, tree, choice.line, args.env,
                                       choice.build / "obj")
    else:
        frags = sfp_run.default_fragments(tree)
    print("\n".join(str(f) for f in frags))
    return 0


def cmd_distro_config(args: argparse.Namespace) -> int:
    env = args.env
    d = data()
    choice = sfp_env.validate(d, env)
    tree = pathlib.Path(args.tree) if args.tree else choice.build / "tree"
    if not (tree / "kernel" / "sched").is_dir():
        raise Refuse(f"'{tree}' is not a kernel tree (no kernel/sched/): " +
                     ("give a kernel tree" if args.tree else
                      "run 'make prepare' for the line's work tree, or give one with -t"))
    if not args.table:
        print(sfp_distro.fragment_text(d, choice.line, tree, env), end="")
        return 0
    # Each kind configured (merge_config.sh, no build) in a scratch
    # directory that is removed afterwards.
    with tempfile.TemporaryDirectory(prefix="sfp-distro-") as tmp:
        scratch = pathlib.Path(tmp)
        configs = {}
        for kind in ("main", "distro"):
            say(f"configuring kind {kind} (merge_config.sh)")
            frags = sfp_run.kind_fragments(d, kind, tree, choice.line, env, scratch)
            configs[kind] = sfp_build.configure(tree.resolve(), scratch / kind,
                                                [f.resolve() for f in frags], env)
            unmet = [m for m in sfp_build.config_unmet(configs[kind], frags)
                     if m.split("=")[0].removeprefix("CONFIG_")
                     not in d.lines[choice.line].config_absent]
            for m in unmet:
                print(f"  not in final .config: {m}", file=sys.stderr)
            if unmet:
                raise Fail(f"kind {kind} would not build: requested options missing "
                           "(a distro_differs reason in sfp.toml, or an enabler in "
                           "kernel-config/distro.config?)")
        print(sfp_distro.table(d, choice.line, tree, env, configs), end="")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp build-kernel, build-guest, config-unmet, fragments and distro-config to SUB."""
    p = add(sub, "build-kernel", cmd_build_kernel, "configure and build a kernel (bzImage, ccache)",
            "sfp_build")
    p.add_argument("--tree", required=True, help="the kernel tree (only read)")
    p.add_argument("--obj", required=True, help="the build directory (O=)")
    p.add_argument("-f", "--fragment", action="append", default=[],
                   help="a config fragment (repeatable; default: sfp fragments TREE)")
    p = add(sub, "build-guest", cmd_build_guest, "the guest's initramfs: busybox, init, the tests",
            "sfp_guest")
    p.add_argument("--obj", required=True, metavar="OBJDIR",
                   help="the kernel's build directory (O=)")
    p.add_argument("-o", "--out", required=True, metavar="INITRAMFS", help="the file to write")
    p.add_argument("--tree", help="the kernel tree whose sched kselftests go in")
    p.add_argument("-x", "--extra", action="append", default=[], metavar="PROGRAM",
                   help="one more program for the guest to run after the tests")
    p.add_argument("--bin", action="append", default=[], metavar="FILE",
                   help="one more file for the guest's /bin")
    p.add_argument("--dynamic", action="append", default=[], metavar="BINARY",
                   help="a host program for the guest, with the libraries it links")
    p.add_argument("--perf", action="store_true",
                   help="put perf (Debian linux-perf) and its libraries in the guest")
    p = add(sub, "config-unmet", cmd_config_unmet, "the options config fragments ask for that a "
            ".config lacks", description="One line per option FRAGMENTS ask for that CONFIG does "
            "not have as asked: 'CONFIG_X=V (what Kconfig gave)'. An option asked off is met when "
            "CONFIG lists it off or (without --strict) lacks it.")
    p.add_argument("--strict", action="store_true", help="an option asked off must be listed off")
    p.add_argument("config", metavar="CONFIG")
    p.add_argument("fragments", nargs="+", metavar="FRAGMENT")
    p = add(sub, "fragments", cmd_fragments, "the config fragments a kernel of TREE gets",
            description="The config fragments, one path a line in merge order, that a kernel of "
            "TREE gets: kernel-config/base.config, then TREE's kernel/sched/tests/.kunitconfig "
            "(with kernel-config/kunit.config) and tools/testing/selftests/sched/config where "
            "TREE has them; with -K, the kind's (those defaults if its record says so, then its "
            "own).")
    p.add_argument("-K", "--kind", help="a kind of kernel, a record of sfp.toml [kinds]")
    p.add_argument("tree", metavar="TREE")
    p = add(sub, "distro-config", cmd_distro_config, "the scheduler's options as the line's "
            "distribution configures them (the distro kind)", description="Every option that a "
            "file under kernel/sched/ of the line's tree mentions, with the value of the line's "
            "distribution config (sfp.toml distro_config, a Debian linux-config-X file; "
            "DISTRO_CONFIG=/path to take another): the fragment the distro kind (./sfp run -K "
            "distro) merges, or with --table a markdown table of each option's value in the "
            "distribution and in the main and distro kinds' .config (configured in "
            "BUILD/LINE/distro-config with merge_config.sh, not built; '-': not in that "
            "configuration).")
    p.add_argument("--table", action="store_true",
                   help="the table of values instead of the fragment")
    p.add_argument("--tree", help="the kernel tree (default: the line's work tree, "
                   "BUILD/LINE/tree)")
