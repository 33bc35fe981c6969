# SPDX-License-Identifier: GPL-2.0
"""One error hierarchy: every module's error class is a Refused (exit
status 2) or a Failed (1), and ./sfp ends with that status and one
'sfp: error:' line."""
import ast
import importlib
import inspect
import os
import pathlib
import subprocess
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent

from harness import sfp_errors

# The base itself, and exceptions that are not errors of a subcommand: a
# test case's verdict in make check, and the SIGTERM taken as Ctrl-C.
NOT_ERRORS = {"CaseFailed", "Terminated", "SfpError"}


class Hierarchy(unittest.TestCase):
    def test_every_error_class_has_a_kind(self):
        for src in sorted([*(ROOT / "harness").glob("sfp_*.py"),
                           *(ROOT / "harness" / "cli").glob("*.py"), ROOT / "sfp"]):
            for node in ast.parse(src.read_text()).body:
                if not isinstance(node, ast.ClassDef) or node.name in NOT_ERRORS:
                    continue
                bases = {ast.unparse(b) for b in node.bases}
                if bases & {"Exception", "BaseException", "KeyboardInterrupt"}:
                    self.fail(f"{src.name}: {node.name} derives from {bases}, not from "
                              "sfp_errors.Refused or sfp_errors.Failed")

    def test_every_module_error_is_refused_or_failed(self):
        for src in sorted((ROOT / "harness").glob("sfp_*.py")):
            mod = importlib.import_module(f"harness.{src.stem}")
            for name, cls in inspect.getmembers(mod, inspect.isclass):
                if cls.__module__ != mod.__name__ or name in NOT_ERRORS or \
                        not issubclass(cls, BaseException):
                    continue
                self.assertTrue(issubclass(cls, (sfp_errors.Refused, sfp_errors.Failed)),
                                f"{src.name}: {name} is neither Refused nor Failed")

    def test_statuses(self):
        self.assertEqual(sfp_errors.Refused("x").status, 2)
        self.assertEqual(sfp_errors.Failed("x").status, 1)


class Exits(unittest.TestCase):
    def sfp(self, *args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, BUILD=str(ROOT / "build-test-errors-unused"))
        return subprocess.run([str(ROOT / "sfp"), *args], capture_output=True, text=True,
                              env=env, check=False)

    def test_refused_is_2_with_one_line(self):
        for args, why in ((("mutate", "-k", "0"), "-k needs a number of boots"),
                          (("run", "-K", "fast"), "unknown kernel kind 'fast'"),
                          (("bench", "-t", "smp2 mesh"), "unknown topology 'mesh'"),
                          (("bench", "-d", "0"), "-d")):
            r = self.sfp(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(why, r.stderr)
            self.assertEqual(sum("error:" in ln for ln in r.stderr.splitlines()), 1, r.stderr)
            self.assertFalse((ROOT / "build-test-errors-unused").exists())

    def test_mutate_icount_refusals(self):
        # --icount's machine is its own: a line whose guests hang under it,
        # or QEMU options that would change it, are refused before any work
        for extra, why in (({"LINE": "6.1"}, "--icount: not on 6.1 (sfp.toml"),
                           ({"QEMU_OPTS": "-seed 3"}, "--icount sets -seed itself"),
                           ({"ACCEL": "kvm"}, "--icount needs QEMU's TCG, not ACCEL=kvm"),
                           ({"FROM_LOGS": "1"}, "--from-logs boots none")):
            env = dict(os.environ, BUILD=str(ROOT / "build-test-errors-unused"), **extra)
            more = ["--from-logs"] if extra.pop("FROM_LOGS", "") else []
            r = subprocess.run([str(ROOT / "sfp"), "mutate", "--icount", "-k", "1", *more],
                               capture_output=True, text=True, env=env, check=False)
            self.assertEqual(r.returncode, 2, (extra, r.stderr))
            self.assertIn(why, r.stderr)
            self.assertFalse((ROOT / "build-test-errors-unused").exists())
