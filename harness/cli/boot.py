# SPDX-License-Identifier: GPL-2.0
"""sfp boot."""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

from harness import sfp_boot
from harness import sfp_env
from harness import sfp_lab
from harness.cli.common import Fail, Refuse, add, data, say


def cmd_boot(args: argparse.Namespace) -> int:
    def number(flag: str, value: str, what: str) -> int:
        if not value.isdigit():
            raise Refuse(f"{flag} wants {what}, not '{value}'")
        return int(value)
    if not (args.kernel and args.initrd and args.logdir):
        raise Refuse("need --kernel, -i and -l (see --help)")
    req = sfp_boot.BootRequest(
        kernel=pathlib.Path(args.kernel), initrd=pathlib.Path(args.initrd),
        logdir=pathlib.Path(args.logdir), smp=number("-s", args.smp, "a number of vCPUs"),
        topology=args.topology, mem=number("-m", args.mem, "a memory size in MiB"),
        timeout=number("-T", args.timeout, "seconds"), accel=args.accel, append=args.append,
        qemu_opts=tuple(args.qemu_opts.split()), backend=args.backend,
        lava=sfp_lab.Target.from_env(args.env))
    problem = sfp_boot.boot(req, data(), say)
    if problem:
        print(sfp_boot.last_lines(req.logdir / "console.log"), end="", file=sys.stderr)
        raise Fail(problem)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add sfp boot to SUB."""
    env = os.environ
    bd = sfp_env.BOOT_DEFAULTS
    p = add(sub, "boot", cmd_boot, "boot a kernel and initramfs once; fail on a splat or a hang",
            "sfp_boot", """
Exit status 0 when the guest ran every test program and shut down, and the
console shows no splat; 1 otherwise, with the console's last lines. Each
option's default is the environment variable in brackets.""")
    p.add_argument("--kernel", help="the kernel image (bzImage)")
    p.add_argument("-i", "--initrd", help="the initramfs")
    p.add_argument("-l", "--logdir", help="where the boot's files go")
    p.add_argument("-s", "--vcpus", "--smp", dest="smp", default=env.get("SMP") or str(bd.smp),
                   help=f"vCPUs, one domain level [SMP, default {bd.smp}]")
    p.add_argument("-t", "--topology", default=env.get("TOPOLOGY", ""),
                   help="a CPU topology of sfp.toml instead [TOPOLOGY], e.g. smt2x2x2")
    p.add_argument("-m", "--mem", default=env.get("MEM") or str(bd.mem),
                   help=f"memory in MiB [MEM, default {bd.mem}]")
    p.add_argument("-T", "--timeout", default=env.get("BOOT_TIMEOUT") or str(bd.timeout),
                   help=f"host-side timeout, seconds [BOOT_TIMEOUT, default {bd.timeout}]")
    p.add_argument("-a", "--accel", default=env.get("ACCEL") or bd.accel,
                   help=f"tcg, kvm or auto [ACCEL, default {bd.accel}]; auto boots once under KVM "
                        "with a 30 s limit and uses it only if the guest came up")
    p.add_argument("-A", "--append", default=env.get("APPEND", ""),
                   help="extra kernel command line [APPEND], after the harness's own "
                        f"({sfp_boot.CMDLINE})")
    p.add_argument("-Q", "--qemu-opts", default=env.get("QEMU_OPTS", ""),
                   help="extra QEMU options, split at spaces [QEMU_OPTS], e.g. "
                        "'-icount shift=0,sleep=off'")
    p.add_argument("-B", "--backend", default=env.get("BOOT_BACKEND") or bd.backend,
                   help="qemu, lava (lava-run, as root) or lava-server (the lab of "
                        "'sfp lab up', or the server of LAVA_IDENTITY; a lab elsewhere also "
                        "wants LAVA_DEVICE_TYPE, LAVA_IMAGE_DIR and LAVA_IMAGE_URL: sfp lab "
                        f"--help) [BOOT_BACKEND, default {bd.backend}]")
