# SPDX-License-Identifier: GPL-2.0
"""sfp boot: a request refused before anything is written, the QEMU
machine of a topology, and each way a boot can end, judged, with a
stand-in for QEMU that writes the two serial files as a guest would."""
import os
import pathlib
import stat
import tempfile
import time
import unittest

from harness import sfp_boot
from harness import sfp_data

# A stand-in for qemu-system-x86_64: FAKE_GUEST says what the guest does.
FAKE_QEMU = """#!/usr/bin/python3
import os, sys, time
files = [a[5:] for a in sys.argv if a.startswith("file:")]
con, guest = open(files[0], "a"), open(files[1], "a")
what = os.environ["FAKE_GUEST"]
if what == "qemu-error":
    print("qemu-system-x86_64: -smp 4: bad", file=sys.stderr)
    sys.exit(1)
con.write("[    0.000000] Linux version 6.12.0\\nsfp: guest 6.12.0 up, 4 CPUs\\n")
if what == "panic":
    con.write("[    1.000000] Kernel panic - not syncing: Attempted to kill init!\\n")
    sys.exit(0)
guest.write("sfp-begin: t\\nok 1 a\\nsfp-end: t rc=0\\n")
if what == "hang":
    con.flush(); guest.flush()
    time.sleep(60)
if what != "early-stop":
    guest.write("sfp-done\\n")
"""


class Boot(unittest.TestCase):
    def setUp(self):
        self.d = sfp_data.load()
        self.tmp = tempfile.TemporaryDirectory()
        self.t = pathlib.Path(self.tmp.name)
        for f in ("bzImage", "initrd"):
            (self.t / f).write_bytes(b"x")
        self.qemu = self.t / "qemu"
        self.qemu.write_text(FAKE_QEMU)
        self.qemu.chmod(self.qemu.stat().st_mode | stat.S_IXUSR)
        self.said = []

    def tearDown(self):
        os.environ.pop("FAKE_GUEST", None)
        self.tmp.cleanup()

    def req(self, **kw):
        args = dict(kernel=self.t / "bzImage", initrd=self.t / "initrd", logdir=self.t / "log",
                    qemu=str(self.qemu))
        args.update(kw)
        return sfp_boot.BootRequest(**args)

    def boot(self, guest, **kw):
        os.environ["FAKE_GUEST"] = guest
        return sfp_boot.boot(self.req(**kw), self.d, self.said.append)

    def refused(self, msg, **kw):
        with self.assertRaisesRegex(sfp_boot.BootRefused, msg):
            sfp_boot.check(self.req(**kw), self.d)
        self.assertFalse((self.t / "log").exists(), "a refused boot wrote its log directory")

    def test_refusals(self):
        self.refused("kernel image '.*nope' not found", kernel=self.t / "nope")
        self.refused("initramfs '.*nope' not found", initrd=self.t / "nope")
        self.refused("-B wants qemu, lava or lava-server, not 'vm'", backend="vm")
        self.refused("-a wants tcg, kvm or auto, not 'hvf'", accel="hvf")
        self.refused("ACCEL=auto probes KVM", accel="auto", backend="lava")
        self.refused("unknown topology 'mesh'", topology="mesh")
        self.refused("do not split into", topology="sock4x2", mem=513)
        self.refused("-s wants a number of vCPUs", smp=0)
        self.refused("-T wants seconds", timeout=0)
        self.refused("no-such-qemu not found: install the Debian package 'qemu-system-x86'",
                     qemu="no-such-qemu")

    def test_topology_machine(self):
        m = sfp_boot.check(self.req(topology="sock4x2", mem=512, qemu_opts=("-icount", "shift=1")),
                           self.d)
        topo = self.d.topology("sock4x2")
        self.assertEqual(m.vcpus, topo.vcpus)
        args = m.args(self.req(mem=512, qemu_opts=("-icount", "shift=1")), "tcg")
        self.assertEqual(args[:4], ["-accel", "tcg", "-cpu", "max"])
        self.assertEqual(args[4:4 + len(topo.qemu_args(512))], topo.qemu_args(512))
        self.assertEqual(args[-2:], ["-icount", "shift=1"])
        flat = sfp_boot.check(self.req(smp=3), self.d)
        self.assertEqual((flat.vcpus, flat.topology_args), (3, ("-smp", "3")))

    def test_clean_boot(self):
        self.assertEqual(self.boot("clean", append="sfp.x=1"), "")
        log = self.t / "log"
        info = (log / "boot.info").read_text()
        self.assertRegex(info, r"^accel=tcg smp=4 topology=flat mem=512 wall=\d+s backend=qemu$")
        cmd = (log / "qemu.cmd").read_text()
        self.assertIn(f"-append '{sfp_boot.CMDLINE} sfp.x=1'", cmd)
        self.assertIn(f"-serial file:{log}/console.log -serial file:{log}/guest.log", cmd)
        self.assertTrue(any(s.startswith("guest finished in") for s in self.said))

    def test_panic(self):
        self.assertEqual(self.boot("panic"), "kernel reported: Kernel panic - not syncing: "
                         "Attempted to kill init!")

    def test_stopped_early(self):
        self.assertEqual(self.boot("early-stop"), "guest stopped before its tests finished")

    def test_qemu_error(self):
        self.assertRegex(self.boot("qemu-error"), r"^QEMU exited with status 1 \(qemu-system")

    def test_hang(self):
        t0 = time.monotonic()
        self.assertEqual(self.boot("hang", timeout=1), "guest hung: no power-off within 1s")
        self.assertLess(time.monotonic() - t0, 10, "the hung guest was not stopped at its timeout")
        self.assertIn("sfp-begin", (self.t / "log" / "guest.log").read_text())

    def test_logs_of_the_last_boot_only(self):
        self.boot("clean")
        self.assertEqual(self.boot("early-stop"), "guest stopped before its tests finished")
        self.assertEqual((self.t / "log" / "guest.log").read_text().count("sfp-begin"), 1)


class TcgArtefact(unittest.TestCase):
    """A kernel int3 oops under multi-threaded TCG is booted once more."""

    def test_signature(self):
        from harness import sfp_boot
        with tempfile.TemporaryDirectory() as t:
            c = pathlib.Path(t) / "console.log"
            c.write_text("rd 0-3: CPUs do not have asymmetric capacities\n"
                         "int3: 0000 [#1] PREEMPT SMP\n"
                         "RIP: 0010:try_to_wake_up+0x271/0x500\n")
            self.assertTrue(sfp_boot.tcg_breakpoint_artefact(c, "tcg", 4))
            self.assertFalse(sfp_boot.tcg_breakpoint_artefact(c, "tcg", 1))
            self.assertFalse(sfp_boot.tcg_breakpoint_artefact(c, "kvm", 4))
            c.write_text("invalid opcode: 0000 [#1] PREEMPT SMP\n"
                         "kernel BUG at kernel/sched/fair.c:100!\n")
            self.assertFalse(sfp_boot.tcg_breakpoint_artefact(c, "tcg", 4))

    def boot_with(self, consoles):
        """boot() with a backend whose Nth boot prints CONSOLES[N]."""
        from harness import sfp_boot
        from harness import sfp_data
        calls = []

        class Fake:
            def run(self, req, machine, cmdline, seconds, console, guest):
                console.write_text(consoles[len(calls)])
                guest.write_text("sfp-done\n")
                calls.append(1)
                return sfp_boot.Ended("off")
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            for f in ("k", "i"):
                (d / f).write_bytes(b"x")
            req = sfp_boot.BootRequest(kernel=d / "k", initrd=d / "i", logdir=d / "logs")
            saved, sfp_boot.backend = sfp_boot.backend, lambda name: Fake()
            try:
                problem = sfp_boot.boot(req, sfp_data.load(), lambda m: None)
            finally:
                sfp_boot.backend = saved
            return (problem, len(calls), (d / "logs" / "boot.info").read_text(),
                    (d / "logs" / "console.artefact.log").exists())

    def test_booted_once_more(self):
        oops = ("int3: 0000 [#1] PREEMPT SMP\nRIP: 0010:try_to_wake_up+0x271/0x500\n"
                "Call Trace:\n")
        problem, n, info, kept = self.boot_with([oops, "sfp: guest up\n"])
        self.assertEqual((problem, n, kept), ("", 2, True))
        self.assertIn("retried=tcg-int3", info)
        # Twice in a row: the second boot's oops is the verdict.
        problem, n, info, _ = self.boot_with([oops, oops])
        self.assertEqual(n, 2)
        self.assertIn("kernel reported", problem)


if __name__ == "__main__":
    unittest.main()
