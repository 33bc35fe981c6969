# SPDX-License-Identifier: GPL-2.0
"""The run's inputs from the environment, each read once and refused in
one line before any work when it cannot work: a KSRC that is not a
kernel, a LINE without a series, a kind or topology sfp.toml lacks (or a
NUMA topology for a kernel without NUMA), a number that is not one."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess

from harness import sfp_distro
from harness import sfp_lab
from harness.sfp_data import MAX_VCPUS, ROOT, Data, DataError
from harness import sfp_errors

# variable: (what it is, the check), for the numbers the scripts take.
NUMBERS = {
    "SMP": ("a number of vCPUs", 1, MAX_VCPUS),
    "MEM": ("a memory size in MiB", 64, 1 << 20),
    "BOOT_TIMEOUT": ("a timeout in seconds", 1, 1 << 20),
    "JOBS": ("a number of build jobs", 1, 4096),
}
ACCELS = ("tcg", "kvm", "auto")
BACKENDS = ("qemu", "lava", "lava-server")
LOADED_MEM = 1024  # MiB: the default of a guest under load (sfp stress, sfp bench)


@dataclasses.dataclass(frozen=True)
class BootSettings:
    """How a guest boots: sfp boot's variables; the fields' defaults are theirs."""
    smp: int = 4  # SMP
    topology: str = ""  # TOPOLOGY: a record of sfp.toml [topologies], or one level
    mem: int = 512  # MEM, MiB
    timeout: int = 600  # BOOT_TIMEOUT, seconds
    accel: str = "tcg"  # ACCEL
    append: str = ""  # APPEND
    qemu_opts: tuple[str, ...] = ()  # QEMU_OPTS
    backend: str = "qemu"  # BOOT_BACKEND


BOOT_DEFAULTS = BootSettings()

# A guest that runs the same, instruction for instruction, when booted
# again from the same bytes with the same -seed, whatever the host does:
# guest time is the instruction count, and the random numbers (-seed), the
# RTC and the kernel's placement (nokaslr) are fixed. hpet=disable: under
# -icount with the HPET as the global clock, jiffies advanced 50 in 25
# LAPIC periods, the kernel's LAPIC timer check failed and it ran without
# one-shot timers or NOHZ; with the PIT the check passes
# (docs/bench/README.md). sfp bench --icount and sfp mutate --icount.
ICOUNT = "-icount shift=1,sleep=off -rtc base=2026-01-01T00:00:00,clock=vm"
ICOUNT_APPEND = "hpet=disable nokaslr"


def icount_qemu_opts(qemu_opts: str, seed: int) -> str:
    """QEMU_OPTS with --icount's machine and random seed SEED."""
    return f"{qemu_opts} {ICOUNT} -seed {seed}".strip()


def icount_refused(data: Data, line: str, env: dict[str, str], qemu_opts: str) -> str:
    """Why --icount cannot boot LINE's guests with QEMU_OPTS ('' if it can)."""
    clash = [o for o in ("-icount", "-seed", "-rtc") if o in qemu_opts.split()]
    if accel(env) != "tcg":
        return f"--icount needs QEMU's TCG, not ACCEL={accel(env)}"
    if data.lines[line].no_icount:
        return (f"--icount: not on {line} (sfp.toml lines.\"{line}\".no_icount): "
                f"{data.lines[line].no_icount}")
    if clash:
        return (f"--icount sets {', '.join(clash)} itself: leave "
                f"{'it' if len(clash) == 1 else 'them'} out of -Q/QEMU_OPTS")
    return ""


def accel(env: dict[str, str]) -> str:
    """ENV's ACCEL, or the default (nothing else read: a caller that boots
    no guest itself needs no numbers checked)."""
    return env.get("ACCEL") or BOOT_DEFAULTS.accel


def boot_settings(env: dict[str, str]) -> BootSettings:
    """ENV's boot variables, an empty one taken as unset: call it after
    check_numbers (validate), which refuses a bad number before any work."""
    d = BOOT_DEFAULTS
    return BootSettings(
        smp=int(env.get("SMP") or d.smp), topology=env.get("TOPOLOGY") or d.topology,
        mem=int(env.get("MEM") or d.mem), timeout=int(env.get("BOOT_TIMEOUT") or d.timeout),
        accel=env.get("ACCEL") or d.accel, append=env.get("APPEND") or d.append,
        qemu_opts=tuple((env.get("QEMU_OPTS") or "").split()),
        backend=env.get("BOOT_BACKEND") or d.backend)


class InputError(sfp_errors.Refused):
    """A bad input; the message is the one line the user sees."""


@dataclasses.dataclass(frozen=True)
class LineChoice:
    line: str
    source_from: str  # LINE, KSRC or default
    build: pathlib.Path  # the line's build directory, BUILD/LINE
    patches: pathlib.Path  # the line's series: PATCHES, else patches/LINE


class OnLine:
    """A record made for one line's choice: its line and build directory."""
    choice: LineChoice

    @property
    def line(self) -> str:
        return self.choice.line

    @property
    def build(self) -> pathlib.Path:
        return self.choice.build


def makefile_version(text: str) -> str:
    """The version a kernel's top Makefile says, or ''."""
    v: dict[str, str] = {}
    for ln in text.splitlines():
        m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION) = ?(.*)$", ln)
        if m:
            v.setdefault(m.group(1), m.group(2).strip())
    return (f"{v['VERSION']}.{v.get('PATCHLEVEL', '')}.{v.get('SUBLEVEL', '')}"
            f"{v.get('EXTRAVERSION', '')}") if v.get("VERSION") else ""


def source_version(src: pathlib.Path) -> str:
    """The version of a kernel source directory, git checkout or tarball."""
    if src.is_dir():
        mk = src / "Makefile"
        return makefile_version(mk.read_text(errors="replace")) if mk.is_file() else ""
    if not src.is_file():
        return ""
    try:
        top = tar_top(src)
        return makefile_version(subprocess.run(
            ["tar", "-xOf", str(src), "--occurrence=1", f"{top}/Makefile"],
            capture_output=True, text=True, check=False).stdout) if top else ""
    except OSError:
        return ""


def tar_top(tarball: pathlib.Path) -> str:
    """The top directory a tarball's first member names, read no further (a
    listing of a whole kernel tarball takes seconds)."""
    with subprocess.Popen(["tar", "-tf", str(tarball)], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as tar:
        top = (tar.stdout.readline() if tar.stdout else "").split("/", 1)[0].strip()
        tar.kill()
    return top


def select_line(data: Data, env: dict[str, str]) -> LineChoice:
    """LINE from the environment, else KSRC's version, else the default."""
    top = pathlib.Path(env.get("BUILD") or ROOT / "build")
    line = env.get("LINE", "")
    how = "LINE" if line else "default"
    ksrc = env.get("KSRC", "")
    if not line and ksrc and pathlib.Path(ksrc).exists():
        v = source_version(pathlib.Path(ksrc))
        if v:
            line, how = ".".join(v.split(".")[:2]), "KSRC"
            if line not in data.lines:
                key = tuple(int(p) for p in re.findall(r"\d+", v)[:3])
                names = data.line_names()
                near = ([n for n in names if data.lines[n].version_key <= key] or names[:1])[-1]
                raise InputError(
                    f"Linux {v} ({ksrc}) is on the {line} line, which has no series: lines are "
                    f"{' '.join(data.line_names())} (patches/LINE/); the nearest is {near}, "
                    f"LINE={near} forces it (see docs/series.md, 'Adding a kernel line')")
    line = line or data.default_line
    if line not in data.lines:
        raise InputError(f"LINE={line}: no series patches/{line}/series; lines are "
                         f"{' '.join(data.line_names())}")
    return LineChoice(line, how, top / line,
                      pathlib.Path(env.get("PATCHES") or ROOT / "patches" / line))


def need_tools(error: type[sfp_errors.SfpError], *tools: tuple[str, str]) -> None:
    """ERROR naming the Debian package of the first (command, package) of TOOLS
    whose command (on PATH, or a path) does not run."""
    for cmd, package in tools:
        if not (os.access(cmd, os.X_OK) if "/" in cmd else shutil.which(cmd)):
            raise error(f"{cmd} not found: install the Debian package '{package}' "
                        "(or run 'make setup' as root)")


def cache_dir(env: dict[str, str]) -> pathlib.Path:
    """The project's cache, kept across work trees and runs: $SFP_CACHE,
    else $XDG_CACHE_HOME/sched-fastpath, else ~/.cache/sched-fastpath."""
    return pathlib.Path(env.get("SFP_CACHE") or pathlib.Path(
        env.get("XDG_CACHE_HOME") or pathlib.Path(env.get("HOME", "/root")) / ".cache") /
        "sched-fastpath")


def check_ksrc(ksrc: str) -> None:
    if not ksrc:
        return
    p = pathlib.Path(ksrc)
    if not p.exists():
        raise InputError(f"KSRC={ksrc} does not exist (give a kernel tree, git checkout "
                         "or tarball such as /usr/src/linux-source-6.12.tar.xz)")
    if p.is_dir():
        if not ((p / "Makefile").is_file() and (p / "kernel/sched/fair.c").is_file()):
            raise InputError(f"KSRC={ksrc} is not a kernel source tree (no Makefile and "
                             "kernel/sched/fair.c)")
    elif not re.search(r"\.tar(\.(xz|gz|bz2|zst))?$|\.tgz$", p.name):
        raise InputError(f"KSRC={ksrc}: neither a directory nor a tarball (.tar, .tar.xz, "
                         ".tar.gz, .tar.bz2, .tar.zst)")


def check_numbers(env: dict[str, str]) -> None:
    for var, (what, lo, hi) in NUMBERS.items():
        val = env.get(var, "")
        if val and (not val.isdigit() or not lo <= int(val) <= hi):
            raise InputError(f"{var}={val}: {what} from {lo} to {hi} is wanted")
    for var, values in (("ACCEL", ACCELS), ("BOOT_BACKEND", BACKENDS)):
        if env.get(var) and env[var] not in values:
            raise InputError(f"{var}={env[var]}: one of {', '.join(values)} is wanted")
    if env.get("BOOT_BACKEND") == "lava-server":
        with sfp_errors.raised_as(InputError, sfp_lab.LabError):
            sfp_lab.Target.from_env(env).check()


def validate(data: Data, env: dict[str, str], kind: str | None = None,
             topology: str | None = None, choice: LineChoice | None = None) -> LineChoice:
    """Every check, in the order a user would fix them; the line chosen (or
    CHOICE, a caller's, already checked)."""
    if choice is None:
        check_ksrc(env.get("KSRC", ""))
        choice = select_line(data, env)
    check_numbers(env)
    topology = topology if topology is not None else env.get("TOPOLOGY") or None
    with sfp_errors.raised_as(InputError, DataError):
        t = data.topology(topology) if topology else None
        if kind and data.kind(kind).distro:
            with sfp_errors.raised_as(InputError, sfp_distro.DistroError):
                sfp_distro.read_source(sfp_distro.source(data, choice.line, env))
        if t and (kind or t.nodes):
            data.check_run(kind or "main", t.name)
        if t and env.get("MEM"):
            t.qemu_args(int(env["MEM"]))
    return choice

