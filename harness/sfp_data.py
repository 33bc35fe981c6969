# SPDX-License-Identifier: GPL-2.0
"""The project's facts (sfp.toml) as typed records: kernel lines, kinds,
topologies, architectures and what each run must fail. load() refuses a
record naming a missing file, a topology that does not add up or a key
nobody reads, in one line naming the record."""
from __future__ import annotations

import dataclasses
import hashlib
import pathlib
import re
import tomllib
from typing import Any, Callable, Iterable

from harness import sfp_errors

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA_FILE = ROOT / "sfp.toml"
# CONFIG_NR_CPUS of kernel-config/base.config: no guest has more vCPUs.
MAX_VCPUS = 8


class DataError(sfp_errors.Refused):
    """sfp.toml is not what the harness can use; the message names where."""


@dataclasses.dataclass(frozen=True)
class Line:
    name: str
    known_good: str
    config_absent: tuple[str, ...]
    kunit_header: str
    mutation_table: str
    debian_package: str = ""
    no_catcher: tuple[tuple[str, str], ...] = ()
    no_icount: str = ""          # why sfp bench --icount cannot boot this line, if it cannot
    distro_config: str = ""      # PACKAGE:FILE, the distribution's .config (sfp_distro)
    # options the distro kind cannot give the distribution's value, and why
    distro_differs: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def env_var(self) -> str:
        """The variable that names this line's source: SFP_SRC_6_19."""
        return "SFP_SRC_" + self.name.replace(".", "_")

    @property
    def version_key(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.name.split("."))

    def default_source(self, env: dict[str, str]) -> str:
        """The source taken when KSRC is not given: $SFP_SRC_<LINE>, else
        the tarball of the line's Debian package, else nothing."""
        return env.get(self.env_var) or (
            f"/usr/src/{self.debian_package}.tar.xz" if self.debian_package else "")


@dataclasses.dataclass(frozen=True)
class Kind:
    name: str
    default_fragments: bool
    fragments: tuple[str, ...]
    patches: tuple[str, ...]
    append: str
    distro: bool = False  # plus the distribution's scheduler options (sfp_distro)

    @property
    def numa(self) -> bool:
        return "numa.config" in self.fragments


@dataclasses.dataclass(frozen=True)
class Topology:
    name: str
    smp: str
    nodes: tuple[str, ...]
    levels: str

    @property
    def vcpus(self) -> int:
        return int(self.smp.split(",")[0])

    def qemu_args(self, mem_mib: int) -> list[str]:
        """-smp, and per NUMA node a memory backend and a -numa node."""
        args = ["-smp", self.smp]
        if self.nodes and mem_mib % len(self.nodes):
            raise DataError(f"topology {self.name}: {mem_mib} MiB of memory do not "
                            f"split into {len(self.nodes)} nodes")
        for i, cpus in enumerate(self.nodes):
            args += ["-object", f"memory-backend-ram,id=m{i},size={mem_mib // len(self.nodes)}M",
                     "-numa", f"node,nodeid={i},cpus={cpus},memdev=m{i}"]
        return args


@dataclasses.dataclass(frozen=True)
class Arch:
    name: str
    qemu: str
    image: str
    cross: str
    boots: bool


@dataclasses.dataclass(frozen=True)
class Data:
    default_line: str
    lines: dict[str, Line]
    kinds: dict[str, Kind]
    topologies: dict[str, Topology]
    archs: dict[str, Arch]
    baseline_fails: tuple[str, ...]
    no_catcher: tuple[tuple[str, str], ...]
    root: pathlib.Path
    # why a line of a mechanism's function, or a call site, runs in no
    # coverage boot: "FUNCTION: code" -> reason (sfp coverage)
    coverage_unrun: dict[str, str] = dataclasses.field(default_factory=dict)
    prose: tuple[dict, ...] = ()  # [[prose]]: counts quoted in docs (sfp prose)
    prose_watch: tuple[str, ...] = ()  # the files where any count must be quoted

    def line(self, name: str) -> Line:
        if name not in self.lines:
            raise DataError(f"no kernel line '{name}': lines are {', '.join(self.line_names())}")
        return self.lines[name]

    def kind(self, name: str) -> Kind:
        if name not in self.kinds:
            raise DataError(f"unknown kernel kind '{name}': the kinds are {', '.join(self.kinds)}")
        return self.kinds[name]

    def topology(self, name: str) -> Topology:
        if name not in self.topologies:
            raise DataError(f"unknown topology '{name}': the topologies are "
                            f"{', '.join(self.topologies)}")
        return self.topologies[name]

    def line_names(self) -> list[str]:
        return sorted(self.lines, key=lambda n: self.lines[n].version_key)

    def no_catcher_reasons(self, line: str) -> dict[str, str]:
        """Why a case catches no mutant: the common reasons, then the line's."""
        return dict(self.no_catcher) | dict(self.line(line).no_catcher)

    def mutants(self, line: str) -> list[pathlib.Path]:
        return sorted((self.root / "tests" / "mutants" / line).glob("*.patch"))

    def check_run(self, kind: str, topology: str) -> None:
        """Refuse a combination of kind and topology that cannot work."""
        k, t = self.kind(kind), self.topology(topology)
        if t.nodes and not k.numa:
            numa = ", ".join(n for n, v in self.kinds.items() if v.numa)
            raise DataError(f"topology {t.name} has {len(t.nodes)} NUMA nodes, but kernel kind "
                            f"'{k.name}' is built without kernel-config/numa.config: "
                            f"choose a kind that has it ({numa})")


_CPUS = re.compile(r"^(\d+)(?:-(\d+))?$")
_SMP = re.compile(r"^(\d+)(?:,sockets=(\d+),cores=(\d+),threads=(\d+))?$")
_CASE = re.compile(r"^[A-Za-z0-9_]+\.[A-Za-z0-9_.]+$")
_OPTION = re.compile(r"^(?!CONFIG_)[A-Z0-9_]+$")  # an option's name, without CONFIG_
_CASE_REASON = 'suite.case = "reason"'


def _table(where: str, value: object, required: dict[str, type],
           optional: dict[str, type] | None = None) -> dict[str, Any]:
    """VALUE with the REQUIRED and some OPTIONAL keys, of their types (tuple:
    a list of strings, made a tuple)."""
    known = required | (optional or {})
    if not isinstance(value, dict):
        raise DataError(f"{where}: a table is wanted, not {value!r}")
    for key in value:
        if key not in known:
            raise DataError(f"{where}: unknown key '{key}' (known: {', '.join(known)})")
    for key in required:
        if key not in value:
            raise DataError(f"{where}: '{key}' is missing")
    for key, typ in known.items():
        want = list if typ is tuple else typ
        if key in value and not isinstance(value[key], want):
            raise DataError(f"{where}.{key}: {want.__name__} wanted, not {value[key]!r}")
    out = dict(value)
    for key, typ in known.items():
        if typ is tuple and key in value:
            if not all(isinstance(v, str) for v in value[key]):
                raise DataError(f"{where}.{key}: a list of strings is wanted")
            out[key] = tuple(value[key])
    return out


def _reasons(where: str, value: dict, key: re.Pattern, form: str) -> dict[str, str]:
    """VALUE, a table of KEY = "reason"; FORM says so in the refusal."""
    for k, why in value.items():
        if not key.match(k) or not isinstance(why, str) or not why:
            raise DataError(f"{where}: '{k}' must be {form}")
    return dict(value)


def _present(root: pathlib.Path, where: str, rels: Iterable[str],
             there: Callable[[pathlib.Path], bool] = pathlib.Path.is_file) -> None:
    for rel in rels:
        if not there(root / rel):
            raise DataError(f"{where}: {rel} does not exist")


def _topology(name: str, v: object) -> Topology:
    where = f"topologies.{name}"
    t = Topology(name=name, **_table(where, v, {"smp": str, "nodes": tuple, "levels": str}))
    if not (m := _SMP.match(t.smp)):
        raise DataError(f"{where}.smp: '{t.smp}' is not N or N,sockets=S,cores=C,threads=T")
    n = int(m.group(1))
    if not 1 <= n <= MAX_VCPUS:
        raise DataError(f"{where}: {n} vCPUs, outside 1..{MAX_VCPUS} (CONFIG_NR_CPUS)")
    if m.group(2) and int(m.group(2)) * int(m.group(3)) * int(m.group(4)) != n:
        raise DataError(f"{where}: sockets x cores x threads is not {n}")
    seen: list[int] = []
    for cpus in t.nodes:
        if not (r := _CPUS.match(cpus)):
            raise DataError(f"{where}.nodes: '{cpus}' is not a CPU or a range A-B")
        seen += range(int(r.group(1)), int(r.group(2) or r.group(1)) + 1)
    if t.nodes and sorted(seen) != list(range(n)):
        raise DataError(f"{where}.nodes: the nodes must hold each of CPUs 0-{n - 1} once")
    return t


def _line(root: pathlib.Path, name: str, v: object) -> Line:
    where = f"lines.{name}"
    if not re.match(r"^\d+\.\d+$", name):
        raise DataError(f"{where}: a line is named X.Y")
    v = _table(where, v, {"known_good": str, "config_absent": tuple, "kunit_header": str,
                          "mutation_table": str},
               {"debian_package": str, "no_catcher": dict, "no_icount": str,
                "distro_config": str, "distro_differs": dict})
    v["no_catcher"] = tuple(_reasons(f"{where}.no_catcher", v.get("no_catcher", {}), _CASE,
                                     _CASE_REASON).items())
    v["distro_differs"] = _reasons(f"{where}.distro_differs", v.get("distro_differs", {}),
                                   _OPTION, 'OPTION = "reason" (without CONFIG_)')
    line = Line(name=name, **v)
    if line.distro_config and not re.match(r"^[a-z0-9.+-]+:[^/]+$", line.distro_config):
        raise DataError(f"{where}.distro_config: '{line.distro_config}' is not "
                        "PACKAGE:FILE (a file of /usr/src/PACKAGE/)")
    for sym in line.config_absent:
        if not _OPTION.match(sym):
            raise DataError(f"{where}.config_absent: '{sym}' is not an option name "
                            "(without CONFIG_)")
    for what, rel in (("series", f"patches/{name}/series"),
                      ("kunit_header", f"kunit/fair_kunit-{line.kunit_header}.h"),
                      ("mutation_table", line.mutation_table),
                      ("mutants", f"tests/mutants/{name}")):
        _present(root, f"{where}.{what}", [rel], pathlib.Path.exists)
    return line


def _kind(root: pathlib.Path, name: str, v: object) -> Kind:
    where = f"kinds.{name}"
    kind = Kind(name=name, **_table(where, v, {"default_fragments": bool, "fragments": tuple,
                                               "patches": tuple, "append": str}, {"distro": bool}))
    if not kind.default_fragments and not kind.fragments:
        raise DataError(f"{where}: no config at all (default_fragments false, no fragments)")
    _present(root, f"{where}.fragments", (f"kernel-config/{f}" for f in kind.fragments))
    _present(root, f"{where}.patches", kind.patches)
    return kind


def load(path: pathlib.Path = DATA_FILE, root: pathlib.Path | None = None) -> Data:
    """Read and check sfp.toml; raise DataError naming the first bad record."""
    root = root or path.resolve().parent
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except OSError as e:
        raise DataError(f"{path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise DataError(f"{path}: {e}") from e
    _table("sfp.toml", raw, {"default_line": str, "lines": dict, "kinds": dict,
                             "topologies": dict, "archs": dict, "expect": dict},
           {"prose": list, "prose_watch": dict, "coverage_unrun": dict})
    for i, cl in enumerate(raw.get("prose", [])):
        _table(f"prose[{i}]", cl, {"file": str, "says": str}, {"equal": list})
        _present(root, f"prose[{i}].file", [cl["file"]])
    watch = _table("prose_watch", raw.get("prose_watch", {"files": []}), {"files": tuple})
    _present(root, "prose_watch.files", watch["files"])

    lines = {name: _line(root, name, v) for name, v in raw["lines"].items()}
    if raw["default_line"] not in lines:
        raise DataError(f"default_line: '{raw['default_line']}' is not one of the lines")
    kinds = {name: _kind(root, name, v) for name, v in raw["kinds"].items()}
    if "main" not in kinds:
        raise DataError("kinds: there must be a kind 'main' (the main job's kernel)")
    topologies = {name: _topology(name, v) for name, v in raw["topologies"].items()}
    archs = {name: Arch(name=name, **_table(f"archs.{name}", v, {"qemu": str, "image": str,
                                                                 "cross": str, "boots": bool}))
             for name, v in raw["archs"].items()}
    if not any(a.boots for a in archs.values()):
        raise DataError("archs: no architecture boots the main job")

    exp = _table("expect", raw["expect"], {"baseline_fails": tuple, "no_catcher": dict})
    for case in exp["baseline_fails"]:
        if not _CASE.match(case):
            raise DataError(f"expect.baseline_fails: '{case}' is not suite.case")
    common = _reasons("expect.no_catcher", exp["no_catcher"], _CASE, _CASE_REASON)
    for line in lines.values():
        for case, _ in line.no_catcher:
            if case in common:
                raise DataError(f"lines.{line.name}.no_catcher: '{case}' already has a "
                                "reason in expect.no_catcher")
    unrun = _reasons("coverage_unrun", raw.get("coverage_unrun", {}), re.compile(r"^\w+: \S"),
                     '"FUNCTION: code" = "reason"')
    return Data(default_line=raw["default_line"], lines=lines, kinds=kinds,
                topologies=topologies, archs=archs, baseline_fails=exp["baseline_fails"],
                no_catcher=tuple(common.items()), root=root, coverage_unrun=unrun,
                prose=tuple(raw.get("prose", [])), prose_watch=watch["files"])


def file_sha256(path: pathlib.Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
