# SPDX-License-Identifier: GPL-2.0
"""Build the guest's initramfs: busybox-static, the project's init and the
programs the guest runs in order.

A gzip'd newc initramfs holds /bin/busybox (Debian busybox-static), /init
(scripts/guest/init) and, in /tests, the test programs the guest runs in
the order of /tests/order:
  guest_preconditions  scripts/guest/preconditions.sh (always)
  kselftest            TREE's sched kselftests, installed as
                       'make -C tools/testing/selftests TARGETS=sched install'
                       does (static, into /kselftest) and run by the kernel's
                       run_kselftest.sh, when TREE has the series' tests;
                       coreutils' timeout goes along, so that the runner
                       enforces the tests' 'settings' timeout
  guest_killed         scripts/guest/killed.sh, after the kselftests: each
                       sched kselftest program, killed with SIGKILL while
                       its first test has something changed, leaves nothing
                       changed (its undo log's guard puts it back)
  guest_state          scripts/guest/state.sh, after guest_killed: the
                       knobs the tests change are as before them (else put
                       back, and a failure), no cgroup of theirs is left
  -x PROGRAM           any extra static program or script (run as its name
                       without .sh)
Other contents: --bin FILE for /bin (not run by itself); --dynamic BINARY, a host
program dynamically linked, with the libraries it links at their host
paths; --perf, the host's /usr/bin/perf (Debian linux-perf) likewise.

OBJDIR is the kernel build directory: the initramfs records that build's
exact /proc/version, which the guest's preconditions compare with its own.
Every input is checked before anything is built; the initramfs replaces
OUT only once it is whole.
"""
from __future__ import annotations

import dataclasses
import gzip
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Callable

from harness import sfp_env
from harness.sfp_data import ROOT
from harness import sfp_errors

BUSYBOX = pathlib.Path("/bin/busybox")
PERF = pathlib.Path("/usr/bin/perf")
TIMEOUT = pathlib.Path("/usr/bin/timeout")
GUEST = ROOT / "scripts" / "guest"
SETUP = "(or run 'make setup' as root)"


class GuestError(sfp_errors.Failed):
    """The initramfs cannot be made; the message is one line."""


@dataclasses.dataclass(frozen=True)
class Guest:
    """What goes into one initramfs."""
    obj: pathlib.Path                       # the kernel's build directory
    out: pathlib.Path                       # the initramfs to write
    tree: pathlib.Path | None = None        # the kernel tree, for its kselftests
    extras: tuple[pathlib.Path, ...] = ()   # -x: run after the tests, in order
    bins: tuple[pathlib.Path, ...] = ()     # -b: files for /bin
    dynamics: tuple[pathlib.Path, ...] = ()  # -d: host programs and their libraries
    perf: bool = False                      # --perf

    def kselftests(self) -> pathlib.Path | None:
        """TREE's selftests directory, when TREE carries the series' tests."""
        if self.tree is None:
            return None
        kst = self.tree / "tools" / "testing" / "selftests"
        return kst if any((kst / "sched").glob("sched_fastpath_*.c")) else None


def from_flags(obj: pathlib.Path, out: pathlib.Path, tree: pathlib.Path | None,
               flags: tuple[str, ...] | list[str]) -> Guest:
    """A Guest from sfp run's guest flags, in order, as -x P, -b F, -d B and -p."""
    lists: dict[str, list[pathlib.Path]] = {"-x": [], "-b": [], "-d": []}
    perf = False
    words = iter(flags)
    for f in words:
        if f == "-p":
            perf = True
        elif f in lists and (value := next(words, None)) is not None:
            lists[f].append(pathlib.Path(value))
        else:
            raise GuestError(f"bad guest flag '{f}'")
    return Guest(obj, out, tree, tuple(lists["-x"]), tuple(lists["-b"]), tuple(lists["-d"]), perf)


def is_static(path: pathlib.Path) -> bool:
    """PATH is an ELF executable without a program interpreter."""
    out = subprocess.run(["readelf", "-l", str(path)], capture_output=True, text=True, check=False)
    return out.returncode == 0 and "INTERP" not in out.stdout


def _is_perf_binary(path: pathlib.Path) -> bool:
    """Debian's /usr/bin/perf is a script that names the versioned binary
    when linux-perf is missing; the real one is an executable file."""
    if not (os.access(path, os.X_OK) and path.is_file() and path.stat().st_size):
        return False
    with open(path, "rb") as f:
        return f.read(2) != b"#!"


def check_inputs(g: Guest) -> None:
    """Refuse a Guest whose files or tools are missing (all but the kernel's build)."""
    sfp_env.need_tools(GuestError, ("cpio", "cpio"), ("readelf", "binutils"))
    if not (os.access(BUSYBOX, os.X_OK) and is_static(BUSYBOX)):
        raise GuestError(f"static busybox not found at {BUSYBOX}: install the Debian package "
                         f"'busybox-static' {SETUP}")
    for x in g.extras:
        if not (x.is_file() and os.access(x, os.X_OK)):
            raise GuestError(f"extra test program '{x}' is not an executable file")
    for b in g.bins:
        if not b.is_file():
            raise GuestError(f"file '{b}' for /bin not found")
    for d in g.dynamics:
        if not (d.is_file() and os.access(d, os.X_OK)):
            raise GuestError(f"program '{d}' for the guest not found")
    if g.perf and not _is_perf_binary(PERF):
        raise GuestError(f"no perf binary at {PERF}: install the Debian package 'linux-perf' "
                         f"{SETUP}")
    kst = g.kselftests()
    if g.dynamics or g.perf or kst:
        sfp_env.need_tools(GuestError, ("ldd", "libc-bin"))
    if kst:
        sfp_env.need_tools(GuestError, ("gcc", "gcc"), ("make", "make"), ("rsync", "rsync"),
                           (str(TIMEOUT), "coreutils"))


def check(g: Guest) -> None:
    """Refuse a Guest that cannot be built, before any work."""
    if not (g.obj / "include" / "generated" / "utsversion.h").is_file():
        raise GuestError(f"'{g.obj}' holds no built kernel (no include/generated/utsversion.h)")
    check_inputs(g)


def _define(path: pathlib.Path, name: str) -> str:
    pat = re.compile(rf'^#define\s*{name}\s*"(.*)"$')
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return next((m.group(1) for m in map(pat.match, lines) if m), "")


def proc_version(obj: pathlib.Path) -> str:
    """The exact /proc/version of OBJ's build: release, compiler, UTS_VERSION."""
    gen = obj / "include" / "generated"
    release = (obj / "include" / "config" / "kernel.release").read_text().strip()
    return (f"Linux version {release} (sched-fastpath@qemu) "
            f"({_define(gen / 'compile.h', 'LINUX_COMPILER')}) "
            f"{_define(gen / 'utsversion.h', 'UTS_VERSION')}\n")


def libraries(program: pathlib.Path) -> list[pathlib.Path]:
    """The libraries PROGRAM links, by ldd, at their host paths."""
    lines = subprocess.run(["ldd", str(program)], capture_output=True, text=True,
                           check=False).stdout.splitlines()
    missing = [ln.strip() for ln in lines if "not found" in ln]
    if missing:
        raise GuestError(f"{program} needs libraries this host lacks: {' '.join(missing)}")
    libs = []
    for w in map(str.split, lines):
        if len(w) >= 3 and w[1] == "=>" and w[2].startswith("/"):
            libs.append(pathlib.Path(w[2]))
        if w and w[0].startswith("/"):
            libs.append(pathlib.Path(w[0]))
    return libs


def _install(src: pathlib.Path, dst: pathlib.Path, mode: int) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    dst.chmod(mode)


def _add_dynamic(stage: pathlib.Path, program: pathlib.Path) -> None:
    libs = libraries(program)
    _install(program, stage / program.relative_to("/"), 0o755)
    for lib in libs:
        dst = stage / lib.relative_to("/")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dst)  # follows the symlink, as cp -L


def _install_kselftests(g: Guest, kst: pathlib.Path, stage: pathlib.Path,
                        say: Callable[[str], None]) -> None:
    """Built and installed by the selftests' own Makefile, out of tree (O=),
    static. TEST_PROGS= : 6.12's sched/Makefile lists its generated
    cs_prctl_test under TEST_PROGS as well, which an O= install looks for
    in the source directory and fails on; the override leaves it out of
    the run list."""
    work = g.obj / "kselftest"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    say(f"installing the sched kselftests (static) from {kst}")
    log = work / "install.log"
    with open(log, "wb") as f:
        rc = subprocess.run(["make", "-C", str(kst), "TARGETS=sched", f"O={work / 'build'}",
                             f"INSTALL_PATH={stage / 'kselftest'}", "LDFLAGS=-static",
                             "TEST_PROGS=", "install"], stdout=f, stderr=subprocess.STDOUT,
                            check=False).returncode
    if rc:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        print("\n".join(tail), file=sys.stderr, flush=True)
        raise GuestError(f"kselftest build or install failed (log: {log})")
    _add_dynamic(stage, TIMEOUT)


def newc(stage: pathlib.Path, out: pathlib.Path) -> None:
    """STAGE as a gzip'd newc archive, paths in byte order, owned by root,
    the same bytes for the same files: every mtime set to 0, no inode or
    device numbers (cpio --reproducible), no time or name in the gzip
    header. A guest booted under sfp bench --icount runs the same
    instructions only from the same bytes."""
    names = ["."]
    for top, dirs, files in os.walk(stage):
        rel = os.path.relpath(top, stage)
        names += ["./" + n if rel == "." else f"./{rel}/{n}" for n in dirs + files]
    for n in names:
        os.utime(stage / n, (0, 0), follow_symlinks=False)
    listing = "".join(n + "\n" for n in sorted(names, key=os.fsencode))
    cpio = subprocess.run(["cpio", "--quiet", "--reproducible", "-o", "-H", "newc", "-R", "0:0"],
                          cwd=stage, input=listing.encode(), capture_output=True, check=False)
    if cpio.returncode:
        raise GuestError(f"cpio failed: {cpio.stderr.decode(errors='replace').strip()}")
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=1,
                                               fileobj=raw, mtime=0) as f:
        f.write(cpio.stdout)


def build(g: Guest, say: Callable[[str], None]) -> list[str]:
    """Check G, make its initramfs; the programs the guest runs, in order."""
    check(g)
    kst = g.kselftests()
    with tempfile.TemporaryDirectory(prefix="sfp-guest.") as tmp:
        stage = pathlib.Path(tmp)
        for d in ("bin", "dev", "proc", "sys", "tmp", "tests", "etc"):
            (stage / d).mkdir()
        shutil.copy2(BUSYBOX, stage / "bin" / "busybox")
        (stage / "bin" / "sh").symlink_to("busybox")
        (stage / "tests" / "expected-version").write_text(proc_version(g.obj))
        for src, dst, mode in (("init", "init", 0o755), ("cmdline.sh", "etc/sfp-cmdline.sh", 0o644),
                               ("cases.awk", "etc/sfp-cases.awk", 0o644),
                               ("suites.awk", "etc/sfp-suites.awk", 0o644),
                               ("preconditions.sh", "tests/guest_preconditions", 0o755)):
            _install(GUEST / src, stage / dst, mode)
        order = ["guest_preconditions"]
        if kst:
            _install_kselftests(g, kst, stage, say)
            # After the kselftests, guest_killed: a kselftest killed
            # mid-test undoes its changes; then guest_state: the knobs they
            # change, compared with guest_preconditions' snapshot and put back.
            for script, name in (("kselftest.sh", "kselftest"), ("killed.sh", "guest_killed"),
                                 ("state.sh", "guest_state")):
                _install(GUEST / script, stage / "tests" / name, 0o755)
                order.append(name)
        for x in g.extras:
            name = x.name.removesuffix(".sh")
            _install(x, stage / "tests" / name, 0o755)
            order.append(name)
        (stage / "tests" / "order").write_text("".join(f"{o}\n" for o in order))
        for b in g.bins:
            _install(b, stage / "bin" / b.name, 0o755)
        for program in g.dynamics + ((PERF,) if g.perf else ()):
            _add_dynamic(stage, program)
        g.out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = g.out.with_name(g.out.name + ".tmp")
        newc(stage, tmp_out)
        tmp_out.replace(g.out)
    say(f"initramfs {g.out}: {' '.join(order)} ({-(-g.out.stat().st_size // 1024)} KiB)")
    return order
