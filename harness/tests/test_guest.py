# SPDX-License-Identifier: GPL-2.0
"""sfp build-guest: the guest flags read in order, every missing input
refused before work, the build's /proc/version, ldd's libraries, and a
whole initramfs from a fake build (its listing, modes and order file)."""
import gzip
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from harness import sfp_guest

P = pathlib.Path


def fake_obj(d: P) -> P:
    gen = d / "include" / "generated"
    gen.mkdir(parents=True)
    (d / "include" / "config").mkdir()
    (d / "include" / "config" / "kernel.release").write_text("6.12.118\n")
    (gen / "utsversion.h").write_text('#define UTS_VERSION "#1 SMP PREEMPT_DYNAMIC Thu"\n')
    (gen / "compile.h").write_text('#define LINUX_COMPILER "gcc (Debian 12.2.0-14) 12.2.0"\n')
    return d


class Flags(unittest.TestCase):
    def test_order_and_kinds(self):
        g = sfp_guest.from_flags(P("o"), P("i"), None,
                                 ["-x", "a.sh", "-b", "f", "-p", "-x", "b", "-d", "/bin/c"])
        self.assertEqual(g.extras, (P("a.sh"), P("b")))
        self.assertEqual(g.bins, (P("f"),))
        self.assertEqual(g.dynamics, (P("/bin/c"),))
        self.assertTrue(g.perf)

    def test_bad_flag(self):
        for flags in (["-q"], ["-x"]):
            with self.assertRaisesRegex(sfp_guest.GuestError, "bad guest flag"):
                sfp_guest.from_flags(P("o"), P("i"), None, flags)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.t = P(self.tmp.name)
        self.obj = fake_obj(self.t / "obj")
        busy = mock.patch.object(sfp_guest, "is_static", return_value=True)
        busy.start()
        self.addCleanup(busy.stop)
        for cmd in ("cpio", "readelf"):
            if not shutil.which(cmd):
                self.skipTest(f"{cmd} not installed")

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, pattern, **kw):
        g = sfp_guest.Guest(self.obj, self.t / "out.gz", **kw)
        with self.assertRaisesRegex(sfp_guest.GuestError, pattern):
            sfp_guest.check(g)
        self.assertFalse((self.t / "out.gz").exists())

    def test_no_build(self):
        with self.assertRaisesRegex(sfp_guest.GuestError, "holds no built kernel"):
            sfp_guest.check(sfp_guest.Guest(self.t, self.t / "out.gz"))

    def test_inputs(self):
        (self.t / "plain").write_text("x")
        self.refused("extra test program .* is not an executable file",
                     extras=(self.t / "plain",))
        self.refused("file .* for /bin not found", bins=(self.t / "nope",))
        self.refused("program .* for the guest not found", dynamics=(self.t / "plain",))

    def test_perf_script_is_not_perf(self):
        script = self.t / "perf"
        script.write_text("#!/bin/sh\necho install linux-perf-6.1\n")
        script.chmod(0o755)
        with mock.patch.object(sfp_guest, "PERF", script):
            self.refused("no perf binary at .*linux-perf", perf=True)

    def test_busybox_not_static(self):
        with mock.patch.object(sfp_guest, "is_static", return_value=False):
            self.refused("static busybox not found at .*busybox-static")


class Version(unittest.TestCase):
    def test_proc_version(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(sfp_guest.proc_version(fake_obj(P(d))),
                             "Linux version 6.12.118 (sched-fastpath@qemu) "
                             "(gcc (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC Thu\n")


class Libraries(unittest.TestCase):
    LDD = ("\tlinux-vdso.so.1 (0x00007ffd)\n"
           "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n"
           "\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n")

    def ldd(self, out):
        done = subprocess.CompletedProcess([], 0, out, "")
        return mock.patch.object(sfp_guest.subprocess, "run", return_value=done)

    def test_paths(self):
        with self.ldd(self.LDD):
            self.assertEqual(sfp_guest.libraries(P("/usr/bin/x")),
                             [P("/lib/x86_64-linux-gnu/libc.so.6"),
                              P("/lib64/ld-linux-x86-64.so.2")])

    def test_missing(self):
        with self.ldd("\tlibperl.so.5.36 => not found\n"):
            with self.assertRaisesRegex(sfp_guest.GuestError, "lacks: libperl.so.5.36"):
                sfp_guest.libraries(P("/usr/bin/x"))


@unittest.skipUnless(shutil.which("cpio") and shutil.which("readelf"), "cpio, readelf")
class Newc(unittest.TestCase):
    def test_same_bytes(self):
        # the same files staged twice, at other times and inodes: the same
        # archive, byte for byte (sfp bench --icount boots it)
        with tempfile.TemporaryDirectory() as t:
            outs = []
            for n, when in ((1, 1_000_000), (2, 2_000_000)):
                stage = P(t) / f"stage{n}"
                (stage / "bin").mkdir(parents=True)
                (stage / "bin" / "prog").write_text("#!/bin/sh\necho hi\n")
                (stage / "init").write_text("init\n")
                for f in (stage / "bin" / "prog", stage / "init", stage / "bin"):
                    os.utime(f, (when, when))
                outs.append(P(t) / f"out{n}.cpio.gz")
                sfp_guest.newc(stage, outs[-1])
            self.assertEqual(outs[0].read_bytes(), outs[1].read_bytes())
            listing = subprocess.run(["cpio", "-t", "--quiet"], input=gzip.decompress(
                outs[0].read_bytes()), capture_output=True, check=True).stdout.decode()
            self.assertEqual(listing.split(), [".", "bin", "bin/prog", "init"])


class Build(unittest.TestCase):
    def test_initramfs(self):
        with tempfile.TemporaryDirectory() as d:
            t = P(d)
            obj = fake_obj(t / "obj")
            prog = t / "sfp_extra.sh"
            prog.write_text("#!/bin/sh\n")
            prog.chmod(0o700)
            with mock.patch.object(sfp_guest, "BUSYBOX", P("/bin/true")), \
                    mock.patch.object(sfp_guest, "is_static", return_value=True):
                order = sfp_guest.build(sfp_guest.Guest(obj, t / "i" / "initramfs.cpio.gz",
                                                        extras=(prog,), bins=(prog,)),
                                        lambda m: None)
            self.assertEqual(order, ["guest_preconditions", "sfp_extra"])
            x = t / "x"
            x.mkdir()
            data = gzip.decompress((t / "i" / "initramfs.cpio.gz").read_bytes())
            listing = subprocess.run(["cpio", "-t", "--quiet"], input=data, capture_output=True,
                                     check=True).stdout.decode().split()
            self.assertEqual(listing, sorted(listing, key=os.fsencode))
            subprocess.run(["cpio", "-id", "--quiet"], cwd=x, input=data, check=True)
            self.assertEqual((x / "tests" / "order").read_text(),
                             "guest_preconditions\nsfp_extra\n")
            self.assertEqual(os.readlink(x / "bin" / "sh"), "busybox")
            self.assertEqual((x / "tests" / "sfp_extra").stat().st_mode & 0o777, 0o755)
            self.assertEqual((x / "bin" / "sfp_extra.sh").read_text(), "#!/bin/sh\n")
            self.assertEqual((x / "etc" / "sfp-cmdline.sh").stat().st_mode & 0o777, 0o644)
            self.assertIn("Linux version 6.12.118 ",
                          (x / "tests" / "expected-version").read_text())
            self.assertEqual(sorted(p.name for p in (x / "tests").iterdir()),
                             ["expected-version", "guest_preconditions", "order", "sfp_extra"])
            self.assertFalse((t / "i" / "initramfs.cpio.gz.tmp").exists())


if __name__ == "__main__":
    unittest.main()
