# SPDX-License-Identifier: GPL-2.0
"""Configure and build a kernel: merge_config.sh onto allnoconfig, every
requested option checked, bzImage out of tree with ccache.

The config fragments (default: sfp_run.default_fragments) are merged
with TREE's scripts/kconfig/merge_config.sh -n into OBJDIR. Every option
a fragment asks for must then be in the final .config as asked
(config_unmet: merge_config.sh only warns when Kconfig drops an option
for a missing dependency), except the options sfp.toml lists as absent
for the line (config_absent: the fragments serve every line, and options
come and go between them), which are named and left out. Then bzImage is
built out of tree (O=OBJDIR) with ccache, incrementally: after an edit
only what changed is rebuilt. The build's output is in OBJDIR/build.log,
with a progress line every 200 build steps.

TREE is only read: it must not carry an in-tree build (.config).
Environment: JOBS (default nproc+1), CCACHE_DIR (ccache's default),
CCACHE_BASEDIR (default $BUILD: compile paths under it are hashed
relative to the build directory, so that builds of two checkouts laid
out alike share cache entries).
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import time
from typing import Callable

from harness import sfp_env
from harness import sfp_errors

TOOLS = ("gcc", "make", "flex", "bison", "bc", "ccache", "perl")  # each its Debian package
_SET = re.compile(r"^CONFIG_[A-Za-z0-9_]+=")
_OFF = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set")
_SYM = re.compile(r"^(?:# )?CONFIG_([A-Za-z0-9_]+)[= ]")


class BuildError(sfp_errors.Failed):
    """The build cannot be made or failed; the message is one line."""


def _lines(path: pathlib.Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def config_unmet(config: pathlib.Path, fragments: list[pathlib.Path],
                 strict: bool = False) -> list[str]:
    """The options FRAGMENTS ask for that CONFIG does not have as asked, in
    the order first asked: 'CONFIG_X=V (what Kconfig gave)'. Where
    fragments disagree the later one's request counts, as in
    merge_config.sh. An option asked off is met when CONFIG lists it off
    or, without STRICT, does not have it at all (no such option here);
    with STRICT it must be listed off."""
    have = set(_lines(config))
    val = {ln.split("=", 1)[0]: ln for ln in have if ln.startswith("CONFIG_")}
    req: dict[str, str] = {}
    for frag in fragments:
        for ln in _lines(frag):
            off = _OFF.match(ln)
            name = ln.split("=", 1)[0] if _SET.match(ln) else off.group(1) if off else ""
            if name:
                req[name] = ln  # dicts keep the order of first insertion
    out = []
    for name, want in req.items():
        got = f"Kconfig gives {val[name]}" if name in val else "Kconfig leaves it off" \
            if f"# {name} is not set" in have else "no such option"
        if want.startswith("CONFIG_"):
            if want not in have:
                out.append(f"{want} ({got})")
        elif want not in have and (strict or name in val):
            out.append(f"{name}=n ({got})")
    return out


def check_tools() -> None:
    sfp_env.need_tools(BuildError, *((cmd, cmd) for cmd in TOOLS))
    if not pathlib.Path("/usr/include/libelf.h").is_file():
        raise BuildError("libelf.h not found: install the Debian package 'libelf-dev' "
                         "(or run 'make setup' as root)")


# uname -v's user and host, in every build
IDENTITY = ["KBUILD_BUILD_USER=sched-fastpath", "KBUILD_BUILD_HOST=qemu"]


def fixed_identity(tree: pathlib.Path) -> list[str]:
    """The make variables that make a rebuild of the same source and config
    byte-identical: uname -v's user, host, number and time fixed, the time
    the source's last commit's (a constant outside git). Only for sfp bench
    --icount, whose guests run the same instructions only from the same
    bytes: elsewhere each build keeps its own number and time, so that the
    guest's /proc/version check also tells two builds of one commit apart."""
    date = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%cd",
                           "--date=format-local:%a %b %d %H:%M:%S UTC %Y"], capture_output=True,
                          text=True, env={**os.environ, "TZ": "UTC"}, check=False)
    stamp = date.stdout.strip() if date.returncode == 0 and date.stdout.strip() \
        else "Thu Jan  1 00:00:00 UTC 1970"
    return [*IDENTITY, "KBUILD_BUILD_VERSION=1", f"KBUILD_BUILD_TIMESTAMP={stamp}"]


def configure(tree: pathlib.Path, obj: pathlib.Path, frags: list[pathlib.Path],
              env: dict[str, str]) -> pathlib.Path:
    """OBJ/.config from FRAGS merged onto allnoconfig by TREE's merge_config.sh; its path."""
    obj.mkdir(parents=True, exist_ok=True)
    with open(obj / "merge_config.log", "wb") as log:
        rc = subprocess.run(["scripts/kconfig/merge_config.sh", "-n", "-O", str(obj),
                             *map(str, frags)], cwd=tree, stdout=log, stderr=subprocess.STDOUT,
                            env=env, check=False).returncode
    if rc:
        print("\n".join(_lines(obj / "merge_config.log")[-20:]), file=sys.stderr, flush=True)
        raise BuildError(f"merge_config.sh failed (log: {obj}/merge_config.log)")
    return obj / ".config"


def build(tree: pathlib.Path, obj: pathlib.Path, fragments: list[pathlib.Path], line: str,
          config_absent: tuple[str, ...], build_dir: pathlib.Path,
          say: Callable[[str], None], env: dict[str, str], reproducible: bool = False) -> str:
    """Configure and build; the kernel release (REPRODUCIBLE: fixed_identity)."""
    for f in fragments:
        if not f.is_file():
            raise BuildError(f"config fragment '{f}' not found")
    if (tree / ".config").is_file():
        raise BuildError(f"'{tree}' has an in-tree .config; out-of-tree builds need a clean "
                         "source (make mrproper there)")
    check_tools()
    tree = tree.resolve()
    frags = [f.resolve() for f in fragments]
    obj.mkdir(parents=True, exist_ok=True)
    obj = obj.resolve()
    jobs = env.get("JOBS") or str((os.cpu_count() or 1) + 1)
    env = dict(env, CCACHE_BASEDIR=env.get("CCACHE_BASEDIR") or str(build_dir.resolve()))

    say(f"config: {''.join(f.name + ' ' for f in frags)}-> {obj}/.config")
    configure(tree, obj, frags, env)

    missing = []
    for m in config_unmet(obj / ".config", frags):
        sym = _SYM.match(m)
        if sym and sym.group(1) in config_absent:
            say(f"CONFIG_{sym.group(1)}: not an option of the {line} line (sfp.toml "
                "config_absent): left out")
        else:
            missing.append(m)
    for m in missing:
        print(f"  not in final .config: {m}", file=sys.stderr, flush=True)
    if missing:
        raise BuildError(f"requested config options are missing from {obj}/.config "
                         "(unmet dependencies?)")

    say(f"building bzImage with ccache, {jobs} jobs (log: {obj}/build.log)")
    t0 = time.monotonic()
    make = ["make", "-C", str(tree), f"O={obj}"]
    ident = fixed_identity(tree) if reproducible else IDENTITY
    with open(obj / "build.log", "w", encoding="utf-8", errors="replace") as log:
        proc = subprocess.Popen(make + ["CC=ccache gcc", "HOSTCC=ccache gcc", *ident,
                                        f"-j{jobs}", "bzImage"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                text=True, errors="replace")
        steps = 0
        assert proc.stdout
        for ln in proc.stdout:
            log.write(ln)
            if re.match(r"^  [A-Z]", ln):
                steps += 1
                if steps % 200 == 0:
                    print(f"  {steps:5d} build steps, {int(time.monotonic() - t0):4d}s: "
                          f"{ln.rstrip().split(' ')[-1]}", flush=True)
        rc = proc.wait()
    if rc:
        errors = [ln for ln in _lines(obj / "build.log") if "error" in ln or "Error" in ln]
        print("\n".join(errors[:20]), file=sys.stderr, flush=True)
        raise BuildError(f"kernel build failed (log: {obj}/build.log)")
    rel = subprocess.run(make + ["-s", "kernelrelease"], capture_output=True, text=True,
                         env=env, check=False).stdout.strip()
    say(f"built {obj}/arch/x86/boot/bzImage ({rel}) in {int(time.monotonic() - t0)}s")
    return rel
