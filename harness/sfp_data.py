# SPDX-License-Identifier: GPL-2.0
"""The project's facts (sfp.toml) as typed records, checked when loaded.

Every kernel line, kind of kernel, guest topology and architecture is one
record here, and so is what each run must fail. A record that names a
file that is not there, a topology whose shape does not add up, a key
nobody reads: load() refuses the file with one line naming the record.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import tomllib
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
        if env.get(self.env_var):
            return env[self.env_var]
        return f"/usr/src/{self.debian_package}.tar.xz" if self.debian_package else ""


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
        if not self.nodes:
            return args
        if mem_mib % len(self.nodes):
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

    def check_run(self, kind: str | None, topology: str | None) -> None:
        """Refuse a combination of kind and topology that cannot work."""
        k = self.kind(kind) if kind else None
        t = self.topology(topology) if topology else None
        if t and t.nodes and not (k and k.numa):
            raise DataError(
                f"topology {t.name} has {len(t.nodes)} NUMA nodes, but kernel kind "
                f"'{k.name if k else 'main'}' is built without kernel-config/numa.config: "
                f"choose a kind that has it ({', '.join(n for n, v in self.kinds.items() if v.numa)})")


_CPUS = re.compile(r"^(\d+)(?:-(\d+))?$")
_SMP = re.compile(r"^(\d+)(?:,sockets=(\d+),cores=(\d+),threads=(\d+))?$")
_CASE = re.compile(r"^[A-Za-z0-9_]+\.[A-Za-z0-9_.]+$")
_CONFIG = re.compile(r"^[A-Z0-9_]+$")


def _table(where: str, value: object, required: dict[str, type], optional: dict[str, type]) -> dict:
    if not isinstance(value, dict):
        raise DataError(f"{where}: a table is wanted, not {value!r}")
    for key in value:
        if key not in required and key not in optional:
            raise DataError(f"{where}: unknown key '{key}' (known: "
                            f"{', '.join(list(required) + list(optional))})")
    for key, typ in required.items():
        if key not in value:
            raise DataError(f"{where}: '{key}' is missing")
    for key, typ in (required | optional).items():
        if key in value and not isinstance(value[key], typ):
            raise DataError(f"{where}.{key}: {typ.__name__} wanted, not {value[key]!r}")
    return value


def _strings(where: str, value: list) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: a list of strings is wanted")
    return tuple(value)


def _reasons(where: str, value: dict) -> tuple[tuple[str, str], ...]:
    for case, why in value.items():
        if not _CASE.match(case) or not isinstance(why, str) or not why:
            raise DataError(f"{where}: '{case}' must be suite.case = \"reason\"")
    return tuple(value.items())


def _unrun(value: dict) -> dict[str, str]:
    for key, why in value.items():
        if not re.match(r"^\w+: \S", key) or not isinstance(why, str) or not why:
            raise DataError(f"coverage_unrun: '{key}' must be \"FUNCTION: code\" = \"reason\"")
    return dict(value)


def _option_reasons(where: str, value: dict) -> dict[str, str]:
    for sym, why in value.items():
        if not _CONFIG.match(sym) or sym.startswith("CONFIG_") or not isinstance(why, str) \
                or not why:
            raise DataError(f"{where}: '{sym}' must be OPTION = \"reason\" (without CONFIG_)")
    return dict(value)


def _check_topology(t: Topology) -> None:
    where = f"topologies.{t.name}"
    m = _SMP.match(t.smp)
    if not m:
        raise DataError(f"{where}.smp: '{t.smp}' is not N or N,sockets=S,cores=C,threads=T")
    n = int(m.group(1))
    if not 1 <= n <= MAX_VCPUS:
        raise DataError(f"{where}: {n} vCPUs, outside 1..{MAX_VCPUS} (CONFIG_NR_CPUS)")
    if m.group(2) and int(m.group(2)) * int(m.group(3)) * int(m.group(4)) != n:
        raise DataError(f"{where}: sockets x cores x threads is not {n}")
    seen: list[int] = []
    for cpus in t.nodes:
        r = _CPUS.match(cpus)
        if not r:
            raise DataError(f"{where}.nodes: '{cpus}' is not a CPU or a range A-B")
        lo, hi = int(r.group(1)), int(r.group(2) or r.group(1))
        seen += range(lo, hi + 1)
    if t.nodes and sorted(seen) != list(range(n)):
        raise DataError(f"{where}.nodes: the nodes must hold each of CPUs 0-{n - 1} once")


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
        if not (root / cl["file"]).is_file():
            raise DataError(f"prose[{i}].file: {cl['file']} does not exist")
    if "prose_watch" in raw:
        _table("prose_watch", raw["prose_watch"], {"files": list}, {})
        for f in _strings("prose_watch.files", raw["prose_watch"]["files"]):
            if not (root / f).is_file():
                raise DataError(f"prose_watch.files: {f} does not exist")

    lines = {}
    for name, v in raw["lines"].items():
        where = f"lines.{name}"
        if not re.match(r"^\d+\.\d+$", name):
            raise DataError(f"{where}: a line is named X.Y")
        _table(where, v, {"known_good": str, "config_absent": list, "kunit_header": str,
                          "mutation_table": str},
               {"debian_package": str, "no_catcher": dict, "no_icount": str,
                "distro_config": str, "distro_differs": dict})
        line = Line(name=name, known_good=v["known_good"],
                    config_absent=_strings(f"{where}.config_absent", v["config_absent"]),
                    kunit_header=v["kunit_header"], mutation_table=v["mutation_table"],
                    debian_package=v.get("debian_package", ""),
                    no_catcher=_reasons(f"{where}.no_catcher", v.get("no_catcher", {})),
                    no_icount=v.get("no_icount", ""),
                    distro_config=v.get("distro_config", ""),
                    distro_differs=_option_reasons(f"{where}.distro_differs",
                                                   v.get("distro_differs", {})))
        if line.distro_config and not re.match(r"^[a-z0-9.+-]+:[^/]+$", line.distro_config):
            raise DataError(f"{where}.distro_config: '{line.distro_config}' is not "
                            "PACKAGE:FILE (a file of /usr/src/PACKAGE/)")
        for sym in line.config_absent:
            if not _CONFIG.match(sym) or sym.startswith("CONFIG_"):
                raise DataError(f"{where}.config_absent: '{sym}' is not an option name "
                                "(without CONFIG_)")
        for what, rel in (("series", f"patches/{name}/series"),
                          ("kunit_header", f"kunit/fair_kunit-{line.kunit_header}.h"),
                          ("mutation_table", line.mutation_table),
                          ("mutants", f"tests/mutants/{name}")):
            if not (root / rel).exists():
                raise DataError(f"{where}.{what}: {rel} does not exist")
        lines[name] = line
    if raw["default_line"] not in lines:
        raise DataError(f"default_line: '{raw['default_line']}' is not one of the lines")

    kinds = {}
    for name, v in raw["kinds"].items():
        where = f"kinds.{name}"
        _table(where, v, {"default_fragments": bool, "fragments": list, "patches": list,
                          "append": str}, {"distro": bool})
        kind = Kind(name=name, default_fragments=v["default_fragments"],
                    fragments=_strings(f"{where}.fragments", v["fragments"]),
                    patches=_strings(f"{where}.patches", v["patches"]), append=v["append"],
                    distro=v.get("distro", False))
        if not kind.default_fragments and not kind.fragments:
            raise DataError(f"{where}: no config at all (default_fragments false, no fragments)")
        for frag in kind.fragments:
            if not (root / "kernel-config" / frag).is_file():
                raise DataError(f"{where}.fragments: kernel-config/{frag} does not exist")
        for p in kind.patches:
            if not (root / p).is_file():
                raise DataError(f"{where}.patches: {p} does not exist")
        kinds[name] = kind
    if "main" not in kinds:
        raise DataError("kinds: there must be a kind 'main' (the main job's kernel)")

    topologies = {}
    for name, v in raw["topologies"].items():
        _table(f"topologies.{name}", v, {"smp": str, "nodes": list, "levels": str}, {})
        t = Topology(name=name, smp=v["smp"], nodes=_strings(f"topologies.{name}.nodes",
                                                               v["nodes"]), levels=v["levels"])
        _check_topology(t)
        topologies[name] = t

    archs = {}
    for name, v in raw["archs"].items():
        _table(f"archs.{name}", v, {"qemu": str, "image": str, "cross": str, "boots": bool}, {})
        archs[name] = Arch(name=name, **v)
    if not any(a.boots for a in archs.values()):
        raise DataError("archs: no architecture boots the main job")

    exp = _table("expect", raw["expect"], {"baseline_fails": list, "no_catcher": dict}, {})
    baseline = _strings("expect.baseline_fails", exp["baseline_fails"])
    for case in baseline:
        if not _CASE.match(case):
            raise DataError(f"expect.baseline_fails: '{case}' is not suite.case")
    common = _reasons("expect.no_catcher", exp["no_catcher"])
    for line in lines.values():
        for case, _ in line.no_catcher:
            if case in dict(common):
                raise DataError(f"lines.{line.name}.no_catcher: '{case}' already has a "
                                "reason in expect.no_catcher")
    return Data(default_line=raw["default_line"], lines=lines, kinds=kinds,
                topologies=topologies, archs=archs, baseline_fails=baseline,
                no_catcher=common, root=root,
                coverage_unrun=_unrun(raw.get("coverage_unrun", {})))


def file_sha256(path: pathlib.Path) -> str:
    """The SHA-256 of a file's content, read a MiB at a time."""
    import hashlib  # pylint: disable=import-outside-toplevel
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
