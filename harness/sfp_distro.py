# SPDX-License-Identifier: GPL-2.0
"""The distro kind's scheduler configuration: every option kernel/sched/
reads (found by rule, not chosen: every CONFIG_ name a file under it
mentions), with the value the distribution's own kernel gives it (the
line's distro_config in sfp.toml, or DISTRO_CONFIG=/path); options it
does not mention are left to Kconfig. docs/harness.md, "The distro
kind", says how the fragment is merged and each option checked."""
from __future__ import annotations

import dataclasses
import lzma
import pathlib
import re

from harness.sfp_data import Data
from harness import sfp_errors

# 'CONFIG_NAME=value' or '# CONFIG_NAME is not set'
_CFG = re.compile(r"^(?:CONFIG_([A-Za-z0-9_]+)=(.*)|# CONFIG_([A-Za-z0-9_]+) is not set)$")
_NAME = re.compile(r"\bCONFIG_([A-Z0-9_]+)")

# The options the distro kind is about, first in its table (issue: the
# paths the main kind compiles out or fixes differently).
HEADLINE = ("CFS_BANDWIDTH", "SCHED_AUTOGROUP", "NUMA", "SCHED_SMT", "RT_GROUP_SCHED",
            "UCLAMP_TASK", "PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT", "PREEMPT_DYNAMIC",
            "SCHED_CLASS_EXT", "NO_HZ_FULL", "FAIR_GROUP_SCHED", "CGROUP_SCHED")


class DistroError(sfp_errors.Failed):
    """The distribution's configuration cannot be had; one line."""


def parse_config(text: str) -> dict[str, str]:
    """A .config's values: NAME -> value, 'n' for '# CONFIG_NAME is not set'."""
    found = filter(None, map(_CFG.match, text.splitlines()))
    return {m[1] or m[3]: "n" if m[3] else m[2] for m in found}


_CHOICE = re.compile(r"^choice\b(.*?)^endchoice\b", re.M | re.S)
_CONFIG_LINE = re.compile(r"^\s*config\s+([A-Z0-9_]+)\s*$", re.M)


def choices(tree: pathlib.Path) -> list[set[str]]:
    """The members of each Kconfig choice block in TREE (x86's and those
    outside arch/: the distribution's configs are amd64's)."""
    out = []
    for f in tree.rglob("Kconfig*"):
        parts = f.relative_to(tree).parts
        if not f.is_file() or parts[0] in ("Documentation", "tools") or \
                (parts[0] == "arch" and parts[1:2] != ("x86",)):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if "endchoice" in text:
            out += [set(_CONFIG_LINE.findall(m[1])) for m in _CHOICE.finditer(text)]
    return out


def sched_symbols(tree: pathlib.Path) -> list[str]:
    """Every CONFIG_ name a file under TREE/kernel/sched/ (not its tests/)
    mentions, and the other members of a Kconfig choice one of them
    belongs to (NO_HZ_FULL brings NO_HZ_IDLE and HZ_PERIODIC: one is on
    only if the others are off), sorted."""
    d = tree / "kernel" / "sched"
    if not d.is_dir():
        raise DistroError(f"'{tree}' has no kernel/sched/")
    names: set[str] = set()
    for f in sorted(d.rglob("*")):
        # kernel/sched/tests/ is the series' KUnit file, not the scheduler
        if f.is_file() and "tests" not in f.relative_to(d).parts[:-1]:
            names.update(_NAME.findall(f.read_text(encoding="utf-8", errors="replace")))
    for members in choices(tree):
        if members & names:
            names |= members
    return sorted(names)


@dataclasses.dataclass(frozen=True)
class Source:
    """Where the distribution's values come from."""
    label: str
    path: pathlib.Path
    package: str = ""   # the Debian package that has it, if any


def source(data: Data, line: str, env: dict[str, str]) -> Source:
    """DISTRO_CONFIG if set, else the line's distro_config (sfp.toml)."""
    if env.get("DISTRO_CONFIG"):
        p = pathlib.Path(env["DISTRO_CONFIG"])
        return Source(f"{p} (DISTRO_CONFIG)", p)
    rec = data.lines[line]
    if not rec.distro_config:
        raise DistroError(f"line {line} has no distro_config in sfp.toml: give a "
                          "distribution's .config as DISTRO_CONFIG=/path")
    pkg, _, name = rec.distro_config.partition(":")
    return Source(f"Debian's {pkg}, {name}", pathlib.Path("/usr/src") / pkg / name, pkg)


def read_source(src: Source) -> dict[str, str]:
    if src.path.is_dir():
        raise DistroError(f"the distribution's config '{src.path}' is a directory, not a "
                          ".config file")
    if not src.path.is_file():
        hint = (f": install the Debian package '{src.package}' (or run 'make setup' as root)"
                if src.package else "")
        raise DistroError(f"the distribution's config '{src.path}' not found{hint}")
    raw = src.path.read_bytes()
    if src.path.suffix == ".xz":
        try:
            raw = lzma.decompress(raw)
        except lzma.LZMAError as e:
            raise DistroError(f"'{src.path}': not an xz file ({e})") from e
    vals = parse_config(raw.decode("utf-8", errors="replace"))
    if "SMP" not in vals and "64BIT" not in vals:
        raise DistroError(f"'{src.path}' is not a kernel .config (no CONFIG_SMP, CONFIG_64BIT)")
    return vals


@dataclasses.dataclass(frozen=True)
class Option:
    """An option kernel/sched/ reads."""
    name: str
    distro: str      # the distribution's value; '' if it does not mention the option
    differs: str     # why the kind cannot have the distribution's value, if it cannot

    @property
    def noted(self) -> bool:
        """A declared difference on an option the distribution sets."""
        return bool(self.differs and self.distro)

    @property
    def line(self) -> str:
        """The fragment's line for it ('' if none is asked)."""
        if not self.distro or self.differs:
            return ""
        return f"# CONFIG_{self.name} is not set" if self.distro == "n" \
            else f"CONFIG_{self.name}={self.distro}"


def options(data: Data, line: str, tree: pathlib.Path, env: dict[str, str]) -> \
        tuple[Source, list[Option]]:
    """The source of LINE's values, and every option TREE's kernel/sched/ reads."""
    src = source(data, line, env)
    vals = read_source(src)
    differs = data.lines[line].distro_differs
    return src, [Option(n, vals.get(n, ""), differs.get(n, "")) for n in sched_symbols(tree)]


def fragment(data: Data, line: str, tree: pathlib.Path, env: dict[str, str],
             out: pathlib.Path) -> pathlib.Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(fragment_text(data, line, tree, env), encoding="utf-8")
    return out


def fragment_text(data: Data, line: str, tree: pathlib.Path, env: dict[str, str]) -> str:
    src, opts = options(data, line, tree, env)
    text = [f"# The options kernel/sched/ reads, as {src.label} has them",
            f"# ({sum(1 for o in opts if o.line)} of {len(opts)}; generated by sfp_distro).",
            *(f"# CONFIG_{o.name}: not asked for; {o.differs}" for o in opts if o.noted),
            *(o.line for o in opts if o.line)]
    return "\n".join(text) + "\n"


def table(data: Data, line: str, tree: pathlib.Path, env: dict[str, str],
          configs: dict[str, pathlib.Path]) -> str:
    """A markdown table: each option kernel/sched/ reads, the
    distribution's value and each built kind's (CONFIGS: kind -> its
    .config), the headline options first."""
    src, opts = options(data, line, tree, env)
    built = {k: parse_config(p.read_text(encoding="utf-8", errors="replace"))
             for k, p in configs.items() if p.is_file()}
    order = {n: i for i, n in enumerate(HEADLINE)}
    opts.sort(key=lambda o: (order.get(o.name, len(order)), o.name))
    head = ["option", "distribution", *built]
    cells = [[f"`{o.name}`" + (" *" if o.noted else ""), o.distro or "-",
              *(cfg.get(o.name, "-") for cfg in built.values())] for o in opts]
    rows = [f"| {' | '.join(c)} |" for c in [head, *cells]]
    rows.insert(1, f"|{'---|' * len(head)}")
    marked = ", beside the options marked *," if any(o.noted for o in opts) else ""
    notes = [f"* `{o.name}`: {o.differs}" for o in opts if o.noted]
    for kind, cfg in built.items():
        if "distro" not in kind:
            continue
        diff = ", ".join(f"`{o.name}` ({o.distro} -> {cfg.get(o.name, '-')})" for o in opts
                         if o.distro and not o.differs and cfg.get(o.name, "-") != o.distro
                         and not (o.distro == "n" and o.name not in cfg))
        why = (": options the tests' own fragments (kernel/sched/tests/.kunitconfig, "
               "tools/testing/selftests/sched/config), merged last, ask for; the build "
               "refuses any other difference." if diff else
               " ('-' in the distribution's column: the distribution does not set it, and "
               "the kind's value comes from Kconfig or the tests' fragments; 'n' against "
               "'-': off either way).")
        notes += ["", f"Kind {kind} differs from the distribution{marked} in "
                      f"{diff or 'no option the distribution sets'}{why}"]
    return "\n".join([f"Line {line}: {len(opts)} options read under kernel/sched/; values from "
                      f"{src.label}. '-': not in that configuration (Kconfig leaves it out). "
                      "'n': not set.", "", *rows, "", *notes]) + "\n"
