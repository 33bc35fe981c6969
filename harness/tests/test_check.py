# SPDX-License-Identifier: GPL-2.0
"""sfp check's framework without a kernel: a case's verdict and row, the
one-error-line rule, a user's tree that must not move, and the state a
refused input must leave alone."""
import contextlib
import io
import os
import pathlib
import subprocess
import tempfile
import unittest
import unittest.mock

from harness import sfp_check
from harness import sfp_data

P = pathlib.Path


class Framework(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        env = {"BUILD": str(P(self.tmp.name) / "build"), "PATH": os.environ["PATH"]}
        self.c = sfp_check.Check(sfp_data.load(), env, quick=True, full=False)
        self.c.chk.mkdir(parents=True)
        self.c.results.write_text("")

    def tearDown(self):
        self.tmp.cleanup()

    def case(self, name, case):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            ok = self.c.t(name, case)
        return ok, out.getvalue()

    def rows(self):
        return [ln.split("\t") for ln in self.c.results.read_text().splitlines()]

    def test_verdicts_and_rows(self):
        self.assertEqual(self.case("cmd_ok", ["true"])[0], True)
        ok, out = self.case("cmd_fails", ["sh", "-c", "echo why; exit 3"])
        self.assertFalse(ok)
        self.assertIn("FAILED check.cmd_fails", out)
        self.assertIn("         | why", out)

        def fails(o):
            print("looked", file=o)
            raise sfp_check.CaseFailed("it did not hold")
        self.assertFalse(self.case("fn_fails", fails)[0])
        self.assertEqual((self.c.chk / "check.fn_fails.log").read_text(),
                         "looked\nit did not hold\n")
        self.assertFalse(self.case("fn_bug", lambda o: 1 / 0)[0])
        self.assertIn("ZeroDivisionError", (self.c.chk / "check.fn_bug.log").read_text())
        self.assertFalse(self.case("no_tool", ["/nonexistent/tool"])[0])
        self.assertEqual([r[:4] for r in self.rows()], [
            ["project", "check", "cmd_ok", "PASS"], ["project", "check", "cmd_fails", "FAIL"],
            ["project", "check", "fn_fails", "FAIL"], ["project", "check", "fn_bug", "FAIL"],
            ["project", "check", "no_tool", "FAIL"]])

    def test_one_error_line(self):
        def sh(script):
            return self.case("e", self.c.error_case("bad thing", ["sh", "-c", script]))[0]
        self.assertTrue(sh("echo 'x: error: a bad thing' >&2; exit 1"))
        self.assertFalse(sh("echo 'x: error: a bad thing' >&2; exit 0"))
        self.assertFalse(sh("echo 'x: error: a bad thing' >&2; echo 'error: more' >&2; exit 1"))
        self.assertFalse(sh("echo 'x: error: another' >&2; exit 1"))
        self.assertEqual((self.c.chk / "rc").read_text(), "1\n")

    def test_unchanged_user_tree(self):
        d = P(self.tmp.name) / "user"
        subprocess.run(["git", "init", "-q", str(d)], check=True)
        (d / "f").write_text("x\n")
        self.assertTrue(self.case("quiet", self.c.unchanged(d, lambda o: None))[0])
        self.assertFalse(self.case("moved", self.c.unchanged(
            d, lambda o: (d / "g").write_text("y\n")))[0])
        self.assertIn("changed", (self.c.chk / "check.moved.log").read_text())

    def test_user_state_sees_logs_not_trees(self):
        top = self.c.top
        (top / "6.12" / "tree" / "kernel").mkdir(parents=True)
        (top / "6.12" / "logs" / "patched").mkdir(parents=True)
        before = self.c.user_state()
        (top / "6.12" / "tree" / "kernel" / "new.c").write_text("")  # inside a tree: not seen
        (self.c.chk / "scratch").write_text("")                        # make check's own
        self.assertEqual(self.c.user_state(), before)
        (top / "6.12" / "logs" / "patched" / "report.txt").write_text("")
        self.assertNotEqual(self.c.user_state(), before)

    def test_ccache_counts_without_ccache(self):
        old = os.environ["PATH"]
        os.environ["PATH"] = "/nonexistent"
        try:
            self.assertEqual(sfp_check.ccache_counts(), (0, 0, 0))
        finally:
            os.environ["PATH"] = old


class Room(unittest.TestCase):
    """make check on a checkout whose disk is short builds elsewhere."""

    def run_with(self, free: dict[str, int], env: dict[str, str]) -> tuple[dict, list[str]]:
        said: list[str] = []
        dev = {str(sfp_check.ROOT / "build"): 1, "/var/tmp": 1, "/dev/shm": 2, "/t": 3}

        def free_gib(p):
            return next((v for k, v in free.items() if str(p).startswith(k)), 0)

        def device(p):
            return next((v for k, v in dev.items() if str(p).startswith(k)), 1)
        with unittest.mock.patch.object(sfp_check.sfp_prepare, "free_gib", free_gib), \
                unittest.mock.patch.object(sfp_check, "_device", device), \
                unittest.mock.patch.object(pathlib.Path, "mkdir"), \
                unittest.mock.patch.object(sfp_check, "space_needed",
                                           lambda *a: (sfp_check.SPACE_GIB, "make check")):
            # No prepared tree anywhere: what this machine's /dev/shm holds is not read.
            out = sfp_check.with_room(sfp_data.load(), env, False, False, said.append)
        return out, said

    def test_room_here_keeps_build(self):
        env = {"BUILD": str(sfp_check.ROOT / "build")}
        out, said = self.run_with({str(sfp_check.ROOT): 50}, env)
        self.assertEqual((out, said), (env, []))

    def test_short_disk_moves_to_another_disk(self):
        env = {"BUILD": str(sfp_check.ROOT / "build")}
        out, said = self.run_with({str(sfp_check.ROOT): 1, "/var/tmp": 40, "/dev/shm": 20}, env)
        # /var/tmp is on the short disk: the next place is taken.
        self.assertTrue(out["BUILD"].startswith("/dev/shm/"), out)
        self.assertRegex(said[0], r"^make check needs about \d+ GiB free; .* building in /dev/shm/")

    def test_chosen_build_is_left_alone(self):
        env = {"BUILD": "/elsewhere/build"}
        out, said = self.run_with({"/": 1, "/dev/shm": 20}, env)
        self.assertEqual((out, said), (env, []))

    def test_nowhere_with_room_keeps_build(self):
        env = {"BUILD": str(sfp_check.ROOT / "build"), "TMPDIR": "/t"}
        out, _ = self.run_with({str(sfp_check.ROOT): 1, "/t": 2, "/dev/shm": 3}, env)
        self.assertEqual(out, env)


if __name__ == "__main__":
    unittest.main()
