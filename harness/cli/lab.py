# SPDX-License-Identifier: GPL-2.0
"""sfp lava-job, sfp lab."""
from __future__ import annotations

import argparse
import pathlib

from harness import sfp_boot
from harness import sfp_errors
from harness import sfp_lab
from harness import sfp_lava
from harness.cli.common import ROOT, Fail, Refuse, add, say


def cmd_lava_job(args: argparse.Namespace) -> int:
    for what, path in (("kernel", args.kernel), ("initrd", args.initrd)):
        if not pathlib.Path(path).is_file():
            raise Refuse(f"{what} image '{path}' not found")
    with sfp_errors.raised_as(Fail, ValueError):
        sfp_lava.write_job(pathlib.Path(args.out), args.name, pathlib.Path(args.kernel),
                           pathlib.Path(args.initrd), args.append, args.timeout,
                           pathlib.Path(args.console_log), pathlib.Path(args.guest_log),
                           args.qemu_options, server=args.server, qemu=args.qemu)
    return 0


def cmd_lab(args: argparse.Namespace) -> int:
    lab = pathlib.Path(args.lab) if args.lab else pathlib.Path(
        args.env.get("BUILD") or ROOT / "build").resolve() / "lab"
    if args.purge and args.action != "down":
        raise Refuse("--purge is an option of sfp lab down")
    if args.action == "up":
        health = None
        if args.health:
            d = pathlib.Path(args.health)
            kernel = d / "arch/x86/boot/bzImage"
            health = sfp_lab.HealthCheck(kernel if kernel.is_file() else d / "bzImage",
                                         d / "initramfs.cpio.gz", sfp_boot.CMDLINE,
                                         suites=tuple(sfp_lava.kunit_suites(d / "vmlinux")))
        # At most a worker per device: -w 2 with -n 1 is one worker.
        sfp_lab.up(lab, args.devices, min(args.workers, max(args.devices, 1)), health, say=say)
    elif args.action == "down" and args.purge:
        sfp_lab.purge(lab, say=say)
    elif args.action == "down":
        sfp_lab.down(lab, say=say)
    elif args.action == "run":
        if not args.job or not args.out:
            raise Refuse("sfp lab run needs --job and --out")
        rc, lines = sfp_lab.run_job(pathlib.Path(args.job), args.timeout, pathlib.Path(args.out))
        print("\n".join(lines))
        return rc
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp lava-job, sfp lab to SUB."""
    p = add(sub, "lava-job", cmd_lava_job, "a boot as a LAVA job definition and device", "sfp_lava")
    p.add_argument("--name", required=True, help="the job's name")
    p.add_argument("--kernel", required=True)
    p.add_argument("--initrd", required=True)
    p.add_argument("--append", required=True, help="the kernel command line")
    p.add_argument("--timeout", type=int, required=True, help="seconds for the tests")
    p.add_argument("--console-log", required=True, help="where QEMU logs the console")
    p.add_argument("--guest-log", required=True, help="the file of the guest's own port")
    p.add_argument("--qemu", default="qemu-system-x86_64")
    p.add_argument("--server", action="store_true",
                   help="a job for the lab's device type (sfp lab): no device file; the QEMU "
                        "options and the log directory go into the job's context")
    p.add_argument("--out", required=True, help="writes job.yaml and device.yaml here")
    p.add_argument("qemu_options", nargs="*", metavar="QEMU-OPTION",
                   help="after --: the QEMU options of the boot (accel, CPUs, memory)")
    p = add(sub, "lab", cmd_lab, "a local LAVA server and worker; jobs run through it", "sfp_lab")
    p.add_argument("action", choices=["up", "down", "run"],
                   help="up: start the lab; down: stop it; run: submit --job, wait, and "
                        "check its records against OUT/../console.log and guest.log")
    p.add_argument("--devices", type=int, default=2, help="QEMU devices, 1 to 16 (default 2)")
    p.add_argument("-w", "--workers", type=int, default=2,
                   help="lava-workers, each its own process and name; the devices are dealt "
                        "to them in turn (default 2, at most one per device)")
    p.add_argument("--health", metavar="DIR", help="up: the device type's health check boots "
                   "DIR's kernel and initramfs (a build directory, or a job set's NAME/images); "
                   "LAVA runs it before a device's first job and after an infrastructure error")
    p.add_argument("--purge", action="store_true", help="down: also put back what the lab's first "
                   "up found: /etc/lava-server, lavacli's configuration, /var/lib/sfp-lab, and "
                   "the database if up made it")
    p.add_argument("--lab", help="the lab's state directory (default $BUILD/lab)")
    p.add_argument("--job", help="run: the job definition (sfp lava-job --server)")
    p.add_argument("--timeout", type=int, default=600, help="run: the boot's timeout, seconds")
    p.add_argument("--out", help="run: where the records go (LOGDIR/lava)")
