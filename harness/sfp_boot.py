# SPDX-License-Identifier: GPL-2.0
"""Boot a kernel and initramfs once, through one of the boot backends.

A BootRequest (kernel, initramfs, log directory, vCPUs or a topology of
sfp.toml, memory, timeout, accelerator, command line, QEMU options,
backend) is checked whole before anything is written: files, numbers,
the topology record, the accelerator, the backend and the programs it
needs. boot() then runs the guest until it powers off and judges it
from the files it left in the log directory:

  console.log  ttyS0: the kernel log and KUnit's KTAP
  guest.log    ttyS1: the TAP of the test programs in the initramfs
  qemu.cmd     the QEMU command line, to boot the same guest by hand
  qemu.log     QEMU's own output (direct boots)
  boot.info    accel, vCPUs, topology, memory, wall time, backend (and
               retried=tcg-int3 when the boot was made twice, below)
  lava/        the job, device and LAVA's records (LAVA backends)

Backends (BACKENDS): 'qemu' runs QEMU here; 'lava' runs the same boot
as a LAVA job with lava-run (Debian's lava-dispatcher, as root) and
checks LAVA's records of the cases against the logs; 'lava-server'
submits the job with lavacli to the lab 'sfp lab up' started, or to
another server (LAVA_IDENTITY, LAVA_DEVICE_TYPE, LAVA_IMAGE_DIR,
LAVA_IMAGE_URL: sfp_lab.Target), and waits for it. Every backend ends a
boot in one of three ways (Ended): the guest powered off, it hung past
the timeout, or the backend failed.

The boot fails when the guest hung, the backend failed, the console
shows a splat (sfp_results.SPLAT_RE: panic, oops, WARNING:, BUG:,
UBSAN:, a general protection fault, a call trace, an RCU stall, a hung
task) or the guest stopped before its tests finished (no sfp-done on
its port). One boot is made once more: a kernel int3 oops under TCG
with several vCPUs, the breakpoint of a finished jump-label or ftrace
patch that multi-threaded TCG can still execute (tcg_breakpoint_artefact);
the first boot's console and guest logs are kept as *.artefact.log. A
kernel whose own code patching is broken oopses again and fails.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import time
from typing import Callable, Protocol

from harness import sfp_env
from harness import sfp_lab
from harness import sfp_lava
from harness import sfp_results
from harness.sfp_data import Data, DataError
from harness.sfp_env import ACCELS, BACKENDS
from harness import sfp_errors

# oops=panic: an oops ends the run at once (panic=-1 reboots, QEMU exits)
# instead of leaving a dead guest to the timeout; it is a failure either way.
# initramfs_async=0: unpack the initramfs before the built-in KUnit suites
# run, so that its "Freeing initrd memory" line cannot land inside their
# KTAP on the console (between a suite's "KTAP version 1" and its
# "# Subtest:" it made kunit.py parse misnumber a suite).
# tsc=reliable: no clocksource watchdog. Under TCG on a loaded host it
# once found the TSC "skewed" against the HPET and switched the guest to
# the HPET clocksource, where every clock read is an emulated MMIO access:
# the newly-idle kselftest, which reads the clock in its spin loops, then
# made no progress until the boot timeout.
# schedstats=enable: schedstats on from boot, so that the newly-idle
# kselftest's write of kernel.sched_schedstats=1 (and its undo) finds the
# key on and rewrites none of its jump-label sites. Each switch rewrites
# them through int3 while the other vCPUs run, and multi-threaded TCG can
# still run such an int3 (tcg_breakpoint_artefact): on 6.1's distro
# kernel, 3 runs of 10 stopped at a schedstats site, none of 31 with
# schedstats on from boot (docs/records/stability.md).
CMDLINE = ("console=ttyS0 panic=-1 oops=panic noautogroup initramfs_async=0 tsc=reliable "
           "schedstats=enable")
QEMU = "qemu-system-x86_64"
KILL_AFTER = 10  # seconds between SIGTERM and SIGKILL, as timeout(1) -k 10
KVM_PROBE_SECONDS = 30


class BootRefused(sfp_errors.Refused):
    """A request that cannot work; the message is the one line the user sees."""


class BootNoResult(sfp_errors.Failed):
    """The boot gave no result, through no fault of the kernel (a LAVA
    job lost to its infrastructure); the message says why."""


@dataclasses.dataclass(frozen=True)
class BootRequest:
    """One boot: what the module's doc lists, checked by check()."""
    kernel: pathlib.Path
    initrd: pathlib.Path
    logdir: pathlib.Path
    smp: int = 4
    topology: str = ""
    mem: int = 512
    timeout: int = 600
    accel: str = "tcg"
    append: str = ""
    qemu_opts: tuple[str, ...] = ()
    backend: str = "qemu"
    qemu: str = QEMU
    lava: sfp_lab.Target = sfp_lab.Target()
    # What was booted, for a LAVA job's metadata: (key, value) pairs.
    metadata: tuple[tuple[str, str], ...] = ()
    # The KUnit suites the kernel runs, for a LAVA job's monitors
    # (sfp_lava.kunit_suites); none: one monitor for every KUnit case.
    kunit_suites: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Machine:
    """A checked request's QEMU machine: what every backend boots."""
    vcpus: int
    topology_args: tuple[str, ...]

    def args(self, req: BootRequest, accel: str) -> list[str]:
        return ["-accel", accel, "-cpu", "max", *self.topology_args, "-m", str(req.mem),
                "-nodefaults", "-display", "none", "-no-reboot", *req.qemu_opts]


@dataclasses.dataclass(frozen=True)
class Ended:
    """How a backend's boot ended: 'off' (the guest powered off), 'hung'
    (no power-off within the timeout) or 'failed' (NOTE says why; after
    'off', what the backend has to say)."""
    how: str
    note: str = ""


def check(req: BootRequest, data: Data) -> Machine:
    """The request's machine, or BootRefused: nothing is written first."""
    for what, path in (("kernel image", req.kernel), ("initramfs", req.initrd)):
        if not path.is_file():
            raise BootRefused(f"{what} '{path}' not found")
    for bad, msg in (
            (req.smp < 1, f"-s wants a number of vCPUs, not '{req.smp}'"),
            (req.timeout < 1, f"-T wants seconds, not '{req.timeout}'"),
            (req.mem < 64, f"-m wants a memory size in MiB (64 or more), not '{req.mem}'"),
            (req.accel not in ACCELS, f"-a wants tcg, kvm or auto, not '{req.accel}'"),
            (req.backend not in BACKENDS,
             f"-B wants qemu, lava or lava-server, not '{req.backend}'"),
            (req.accel == "auto" and req.backend != "qemu",
             "ACCEL=auto probes KVM with a direct boot: with the lava backend choose tcg or kvm")):
        if bad:
            raise BootRefused(msg)
    if req.topology:
        with sfp_errors.raised_as(BootRefused, DataError):
            topo = data.topology(req.topology)
            machine = Machine(topo.vcpus, tuple(topo.qemu_args(req.mem)))
    else:
        machine = Machine(req.smp, ("-smp", str(req.smp)))
    sfp_env.need_tools(BootRefused, (req.qemu, "qemu-system-x86"))
    if req.backend == "lava":
        sfp_env.need_tools(BootRefused, ("lava-run", "lava-dispatcher"))
        if os.geteuid() != 0:
            raise BootRefused("the lava backend runs lava-run, which must run as root")
    elif req.backend == "lava-server":
        sfp_env.need_tools(BootRefused, ("lavacli", "lavacli"))
        with sfp_errors.raised_as(BootRefused, sfp_lab.LabError):
            req.lava.check()
    return machine


def _run_until(cmd: list[str], seconds: float, stdout: pathlib.Path,
               stderr: pathlib.Path | None = None) -> int | None:
    """Run CMD in a process group of its own; its exit status, or None
    when SECONDS passed first (the group then gets SIGTERM and, after
    KILL_AFTER seconds, SIGKILL, as timeout(1) does)."""
    with open(stdout, "wb") as out, open(stderr or stdout, "ab") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err if stderr else subprocess.STDOUT,
                                start_new_session=True)
        try:
            return proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            _kill(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=KILL_AFTER)
            except subprocess.TimeoutExpired:
                _kill(proc, signal.SIGKILL)
                proc.wait()
            return None
        except BaseException:
            _kill(proc, signal.SIGKILL)
            proc.wait()
            raise


def _kill(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


class Backend(Protocol):
    def run(self, req: BootRequest, machine: list[str], cmdline: str, seconds: int,
            console: pathlib.Path, guest: pathlib.Path) -> Ended:
        """Boot MACHINE with CMDLINE, the console to CONSOLE and the
        guest's port to GUEST, for at most SECONDS."""


class QemuBackend:
    """QEMU on this machine."""

    def run(self, req: BootRequest, machine: list[str], cmdline: str, seconds: int,
            console: pathlib.Path, guest: pathlib.Path) -> Ended:
        cmd = [req.qemu, *machine, "-serial", f"file:{console}", "-serial", f"file:{guest}",
               "-kernel", str(req.kernel), "-initrd", str(req.initrd), "-append", cmdline]
        (req.logdir / "qemu.cmd").write_text(shlex.join(cmd) + "\n", encoding="utf-8")
        log = req.logdir / "qemu.log"
        rc = _run_until(cmd, seconds, log)
        if rc is None:
            return Ended("hung")
        if rc:
            head = sfp_results.text(log)[:300].replace("\n", " ")
            return Ended("failed", f"QEMU exited with status {rc} ({head})")
        return Ended("off")


@dataclasses.dataclass(frozen=True)
class LavaBackend:
    """The boot as a LAVA job: run by lava-run here, or (SERVER) submitted
    to the local lab's server with lavacli."""
    server: bool

    def run(self, req: BootRequest, machine: list[str], cmdline: str, seconds: int,
            console: pathlib.Path, guest: pathlib.Path) -> Ended:
        d = req.logdir / "lava"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        # What LAVA lists for the job: the line, and the boot's place in
        # its run (VARIANT/BOOT for a job set, the log directory otherwise).
        meta = dict(req.metadata)
        name = " ".join(w for w in ("sched-fastpath", meta.get("sfp.line", ""),
                                    f"{req.logdir.parent.name}/{req.logdir.name}") if w)
        try:
            if self.server and req.lava.portable:
                sfp_lava.write_yaml(d / "job.yaml", sfp_lava.portable_job(
                    name, req.lava.publish(req.kernel), req.lava.publish(req.initrd), cmdline,
                    seconds, machine, req.mem, req.lava.device_type, meta, req.kunit_suites))
            else:
                sfp_lava.write_job(d, name, req.kernel, req.initrd, cmdline, seconds, console,
                                   guest, machine, server=self.server, qemu=req.qemu, metadata=meta,
                                   suites=req.kunit_suites)
        except (ValueError, OSError) as e:
            return Ended("failed", str(e))
        if self.server:
            try:
                rc, lines = sfp_lab.run_job(d / "job.yaml", seconds, d, req.lava)
            except sfp_lab.InfrastructureFault as e:
                raise BootNoResult(str(e)) from e
            except sfp_lab.LabError as e:
                return Ended("failed", f"LAVA server: {e}")
        else:
            # lava-run has its own timeouts (the job's); this one is the backstop.
            job_id = f"sfp-{os.getpid()}-{int(time.time())}"
            ran = _run_until(["lava-run", "--job-id", job_id, "--output-dir", str(d / "tmp"),
                              "--device", str(d / "device.yaml"), str(d / "job.yaml")],
                             seconds + 300, d / "lava-run.out", d / "lava.log")
            shutil.rmtree(d / "tmp", ignore_errors=True)
            if ran is None:
                return Ended("hung")
            cmd = sfp_lava.boot_command(d / "lava.log")
            if cmd:
                (req.logdir / "qemu.cmd").write_text(cmd + "\n", encoding="utf-8")
            rc, lines = sfp_lava.report(sfp_lava.parse_log(d / "lava.log"), d)
        (d / "summary.txt").write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        last = lines[-1] if lines else ""
        if rc == 2:
            return Ended("hung")
        if rc:
            problem = (d / "problem").read_text(errors="replace") if (d / "problem").exists() \
                else last
            return Ended("failed", "LAVA job failed: " + " ".join(problem[:300].split()))
        return Ended("off", last)


def backend(name: str) -> Backend:
    """The backend of BACKENDS called NAME."""
    if name == "qemu":
        return QemuBackend()
    return LavaBackend(server=name == "lava-server")


def judge(req: BootRequest, ended: Ended) -> str:
    """What went wrong with the boot ('' when nothing did)."""
    problem = {"hung": f"guest hung: no power-off within {req.timeout}s",
               "failed": ended.note}.get(ended.how, "")
    splats = sfp_results.first_splats(req.logdir / "console.log", limit=1)
    if splats:
        problem = f"{problem}; " * bool(problem) + f"kernel reported: {splats[0]}"
    if not problem and not any(ln.startswith("sfp-done") for ln in
                               sfp_results.text(req.logdir / "guest.log").splitlines()):
        problem = "guest stopped before its tests finished"
    return problem


def _cmdline(req: BootRequest, extra: str = "") -> str:
    return " ".join(w for w in (CMDLINE, req.append, extra) if w)


def _kvm_works(req: BootRequest, machine: Machine) -> bool:
    """One direct boot under KVM, KVM_PROBE_SECONDS at most: did the guest come up?"""
    probe = req.logdir / "kvm-probe.log"
    QemuBackend().run(req, machine.args(req, "kvm"), _cmdline(req, "sfp.probe=1"),
                      KVM_PROBE_SECONDS, probe, req.logdir / "kvm-probe-guest.log")
    return any(ln.startswith("sfp: guest") for ln in sfp_results.text(probe).splitlines())


def boot(req: BootRequest, data: Data, say: Callable[[str], None]) -> str:
    """Boot REQ once: '' when the guest ran every test program and shut
    down cleanly, else the problem (the console's last lines said)."""
    machine = check(req, data)
    req.logdir.mkdir(parents=True, exist_ok=True)
    accel = req.accel
    if accel == "auto":
        accel = "tcg"
        if os.access("/dev/kvm", os.W_OK):
            say(f"probing KVM ({KVM_PROBE_SECONDS} s limit)")
            if _kvm_works(req, machine):
                accel = "kvm"
            else:
                say("KVM did not boot the guest; using TCG")
    topo = f" ({req.topology})" if req.topology else ""
    say(f"booting {req.kernel.name} under QEMU/{accel}, {machine.vcpus} vCPUs{topo}, "
        f"{req.mem} MiB, timeout {req.timeout}s")
    console, guest = req.logdir / "console.log", req.logdir / "guest.log"
    retried = ""
    for attempt in (1, 2):
        console.write_bytes(b"")
        guest.write_bytes(b"")
        t0 = time.monotonic()
        ended = backend(req.backend).run(req, machine.args(req, accel), _cmdline(req),
                                         req.timeout, console, guest)
        wall = int(time.monotonic() - t0)
        if attempt == 2 or not tcg_breakpoint_artefact(console, accel, machine.vcpus):
            break
        # Kept, and said in boot.info (every report's title) and here.
        shutil.copy(console, req.logdir / "console.artefact.log")
        shutil.copy(guest, req.logdir / "guest.artefact.log")
        retried = " retried=tcg-int3"
        say("the kernel stopped on a breakpoint of finished code patching, which "
            "multi-threaded TCG can leave behind (console.artefact.log): booting once more")
    (req.logdir / "boot.info").write_text(
        f"accel={accel} smp={machine.vcpus} topology={req.topology or 'flat'} mem={req.mem} "
        f"wall={wall}s backend={req.backend}{retried}\n", encoding="utf-8")
    if ended.how == "off" and ended.note:
        say(ended.note)
    problem = judge(req, ended)
    if not problem:
        say(f"guest finished in {wall}s (logs: {req.logdir})")
    return problem


# The oops of a breakpoint trap in kernel code: a jump label, static call
# or ftrace site patched while another vCPU ran it. Under multi-threaded
# TCG a vCPU can execute the int3 of a patch already finished (its
# translated block was not yet invalidated), which real CPUs never do.
_INT3_OOPS = re.compile(r"^int3: 0000 \[#1\]", re.M)


def tcg_breakpoint_artefact(console: pathlib.Path, accel: str, vcpus: int) -> bool:
    """The boot on CONSOLE stopped on that emulator artefact: a kernel
    int3 oops, under TCG with more than one vCPU. Such a boot is made
    once more; a kernel whose own patching is broken oopses again."""
    return accel == "tcg" and vcpus >= 2 and bool(_INT3_OOPS.search(sfp_results.text(console)))


def last_lines(path: pathlib.Path, n: int = 25) -> str:
    """The last N lines of a log, framed, for a failed boot's message."""
    tail = "".join(ln + "\n" for ln in sfp_results.text(path).splitlines()[-n:])
    return f"--- last lines of {path} ---\n{tail}---\n"
