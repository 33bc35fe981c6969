# SPDX-License-Identifier: GPL-2.0
"""sfp_coverage: the counts read back from a guest log, the mechanisms'
functions found from the series' diff, their call sites and coverage."""
import base64
import gzip
import io
import pathlib
import subprocess
import tarfile
import tempfile
import unittest

from harness import sfp_coverage as C

BASE = """\
static void helper(int x)
{
\tfoo(x);
}

static void update(struct rq *rq)
{
\tbar(rq);
}

void caller_a(struct rq *rq)
{
\tupdate(rq);
}

void caller_b(struct rq *rq)
{
\tif (0)
\t\tupdate(rq);
}
"""


def archive(files: dict[str, bytes]) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    b64 = base64.encodebytes(gzip.compress(buf.getvalue())).decode()
    return "".join(f"# {ln}\n" for ln in b64.splitlines())


class Coverage(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_archive_from_guest_log_and_unpack(self):
        log = ("sfp-begin: gcov_dump.sh\nTAP version 13\n1..1\n# gcov-begin\n" +
               archive({"./fair.gcda": b"counts"}) + "# gcov-end\nok 1 gcov_dump\n")
        obj = self.d / "obj"
        (obj / "kernel" / "sched").mkdir(parents=True)
        (obj / "kernel" / "sched" / "fair.gcno").write_bytes(b"notes")
        got = C.unpack(C.gcda_archive(log.replace("\n", "\r\n")), obj, self.d / "out")
        self.assertEqual([p.name for p in got], ["fair.gcda"])
        self.assertEqual((self.d / "out" / "fair.gcno").read_bytes(), b"notes")
        with self.assertRaisesRegex(C.CoverageError, "no gcov counts"):
            C.gcda_archive("sfp-begin: x\nok 1 x\n")
        with self.assertRaisesRegex(C.CoverageError, "damaged"):
            C.gcda_archive("# gcov-begin\n# !!!!\n# gcov-end\n")
        (obj / "kernel" / "sched" / "fair.gcno").unlink()
        with self.assertRaisesRegex(C.CoverageError, "not of this build"):
            C.unpack(C.gcda_archive(log), obj, self.d / "out")

    def git_tree(self) -> pathlib.Path:
        t = self.d / "tree"
        (t / "kernel" / "sched" / "tests").mkdir(parents=True)
        f = t / "kernel" / "sched" / "fair.c"
        f.write_text(BASE)
        (t / "kernel" / "sched" / "sched.h").write_text("struct rq {\n};\n")

        def git(*a: str) -> None:
            subprocess.run(["git", "-C", str(t), "-c", "user.name=t", "-c", "user.email=t@t",
                            *a], check=True, capture_output=True)
        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "base")
        git("tag", "baseline")
        f.write_text(BASE.replace("\tbar(rq);\n", "\tif (!rq)\n\t\treturn;\n\tbar(rq);\n"))
        (t / "kernel" / "sched" / "tests" / "t.c").write_text("update(0);\n")
        git("add", "-A")
        git("commit", "-q", "-m", "series")
        git("tag", "patched")
        return t

    def test_functions_and_call_sites_by_rule(self):
        t = self.git_tree()
        changed = C.sfp_mutgen.changed_lines(t)
        self.assertEqual(changed, {"kernel/sched/fair.c": {8, 9}})
        mech, sites = C.mechanism(t)
        self.assertEqual([(f.name, f.start, f.end) for f in mech], [("update", 6, 11)])
        counts = {("kernel/sched/fair.c", n): C.LineCount(c, b) for n, c, b in (
            (8, 5, [5, 0]), (9, 0, []), (10, 5, []), (15, 5, []))}
        sites = C.counted(sites, counts)
        self.assertEqual([(s.caller, s.line, s.count) for s in sites],
                         [("caller_a", 15, 5), ("caller_b", 21, None)])
        fc = C.function_coverage(mech, counts)[0]
        self.assertEqual((fc.lines, fc.lines_run, fc.branches, fc.branches_taken),
                         (3, 2, 2, 1))
        self.assertEqual((fc.never_run, fc.branch_lines), ((9,), (8,)))
        md, bad = C.render("6.12", "coverage", t, [fc], sites)
        self.assertEqual(bad, 2)
        self.assertIn("| `update()` | kernel/sched/fair.c:6 | 2/3 | 1/2 |", md)
        self.assertIn("| `update()` | `caller_b()` | kernel/sched/fair.c:21 | compiled out | "
                      "**not explained** |", md)
        self.assertIn("- kernel/sched/fair.c:9 (`update`): `return;`: **not explained**", md)
        md, bad = C.render("6.12", "coverage", t, [fc], sites,
                           {"update: return;": "never NULL here",
                            "caller_b: update(rq);": "if (0)"})
        self.assertEqual(bad, 0)
        self.assertIn("`return;`: never NULL here", md)
        self.assertIn("Never run and not explained: 0.", md)

if __name__ == "__main__":
    unittest.main()
