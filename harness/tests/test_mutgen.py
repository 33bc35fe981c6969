# SPDX-License-Identifier: GPL-2.0
"""sfp_mutgen: functions and struct members read from kernel-style C, each
mutation rule, and a generated set that applies."""
import pathlib
import subprocess
import tempfile
import unittest

from harness import sfp_mutgen as G

SCHED_H = """\
struct rq {
\tunsigned int\t\tnr_running;
\tunsigned int\t\tnr_numa_running;
\tu64\t\t\tclock;
\tstruct root_domain\t*rd;
};

struct root_domain {
\tint\t\t\toverloaded;
\tint\t\t\toverutilized;
};

static inline void sched_update_tick_dependency(struct rq *rq) { }

static inline void add_nr_running(struct rq *rq, unsigned count)
{
\tunsigned prev_nr = rq->nr_running;

\trq->nr_running = prev_nr + count;
\tif (prev_nr < 2 && rq->nr_running >= 2)
\t\tset_rd_overloaded(rq->rd, 1);
}
"""

STOP_C = """\
static void
enqueue_task_stop(struct rq *rq, struct task_struct *p, int flags)
{
\tadd_nr_running(rq, 1);
}
"""


class Mutgen(unittest.TestCase):
    def test_functions(self):
        fs = G.functions(SCHED_H)
        self.assertEqual(fs, [("add_nr_running", 15, 22)])
        self.assertEqual(G.functions(STOP_C), [("enqueue_task_stop", 2, 5)])

    def test_struct_neighbours_same_type(self):
        f = G.struct_fields(SCHED_H)
        self.assertEqual(f[("rq", "nr_running")], ["nr_numa_running"])
        self.assertEqual(f[("root_domain", "overloaded")], ["overutilized"])
        self.assertNotIn(("rq", "clock"), f)

    def test_rules(self):
        line = "\tif (prev_nr < 2 && rq->nr_running >= 2)"
        got = G.mutate_line(line, ["rq", "this_rq"], G.struct_fields(SCHED_H),
                            {"rq": "rq"})
        rules = {}
        for rule, new, _what in got:
            rules.setdefault(rule, []).append(new.strip())
        self.assertEqual(len(rules["ror"]), 10)
        self.assertIn("if (prev_nr <= 2 && rq->nr_running >= 2)", rules["ror"])
        self.assertEqual(rules["lcr"], ["if (prev_nr < 2 || rq->nr_running >= 2)"])
        self.assertEqual(rules["neg"], ["if (!(prev_nr < 2 && rq->nr_running >= 2))"])
        self.assertIn("if (prev_nr < 3 && rq->nr_running >= 2)", rules["const"])
        self.assertIn("if (prev_nr < 2 && rq->nr_running >= 1)", rules["const"])
        self.assertEqual(rules["field"], ["if (prev_nr < 2 && rq->nr_numa_running >= 2)"])
        self.assertEqual(rules["rq"], ["if (prev_nr < 2 && this_rq->nr_running >= 2)"])
        drop = G.mutate_line("\t\tset_rd_overloaded(rq->rd, 1);", [], {}, {})
        self.assertIn(("drop", "\t\t;", "the call dropped"), drop)
        ret = G.mutate_line("\t\treturn;", [], {}, {})
        self.assertEqual(ret, [("drop", "\t\t;", "the early return dropped")])
        # comments, preprocessor lines and a last return are left alone
        self.assertEqual(G.mutate_line("\t/* a < b */", [], {}, {}), [])
        self.assertEqual(G.mutate_line("#if NR_CPUS > 1", [], {}, {}), [])
        self.assertEqual(G.mutate_line("\treturn;", [], {}, {}), [])
        # '->' is not a relational operator
        self.assertEqual([r for r, _, _ in G.mutate_line("\tx = a->b;", [], {}, {})], [])

    def test_generated_set_applies(self):
        with tempfile.TemporaryDirectory() as tmp:
            t = pathlib.Path(tmp) / "tree"
            (t / "kernel" / "sched").mkdir(parents=True)
            h = t / "kernel" / "sched" / "sched.h"
            h.write_text(SCHED_H.replace("\tif (prev_nr < 2 && rq->nr_running >= 2)\n"
                                         "\t\tset_rd_overloaded(rq->rd, 1);\n", ""))
            (t / "kernel" / "sched" / "stop_task.c").write_text(STOP_C)

            def git(*a: str) -> None:
                subprocess.run(["git", "-C", str(t), "-c", "user.name=t", "-c",
                                "user.email=t@t", *a], check=True, capture_output=True)
            git("init", "-q")
            git("add", "-A")
            git("commit", "-q", "-m", "b")
            git("tag", "baseline")
            h.write_text(SCHED_H)
            git("commit", "-q", "-am", "p")
            git("tag", "patched")
            out = pathlib.Path(tmp) / "set"
            muts = G.write_set(t, G.changed_lines(t), out)
            self.assertEqual(G.check_applies(t, out), [])
            self.assertEqual({m.func for m in muts}, {"add_nr_running", "enqueue_task_stop"})
            # the call site: the count and the call itself
            site = sorted(m.after.strip() for m in muts if m.func == "enqueue_task_stop")
            self.assertEqual(site, [";", "add_nr_running(rq, 0);", "add_nr_running(rq, 2);"])
            first = sorted(out.glob("*.patch"))[0].read_text().splitlines()
            self.assertTrue(first[0].startswith("mutant: "))
            self.assertEqual(first[1], "expect: any")
            self.assertEqual(len((out / "index.tsv").read_text().splitlines()), len(muts) + 1)

    def test_triage(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "6.12.toml"
            self.assertEqual(G.load_triage(f), G.Triage({}, {}))
            f.write_text('[equivalent]\n"a" = "same on x86-64"\n[open]\n"b" = "no test"\n')
            tri = G.load_triage(f)
            text, n = G.survivors([("a", "MISSED in 1/1 boots"), ("b", "MISSED in 1/1 boots"),
                                   ("c", "caught 1/1"), ("d", "MISSED in 1/1 boots"),
                                   ("e", "NO RESULT in boot 1 (build or boot failed)")], tri)
            self.assertEqual(n, 1)
            self.assertIn("Generated mutants: 5, caught 1, do not build 1, equivalent 1, open 1, "
                          "not triaged 1.", text)
            self.assertIn("| a | MISSED in 1/1 boots | equivalent: same on x86-64 |", text)
            self.assertIn("| d | MISSED in 1/1 boots | NOT TRIAGED", text)
            # A mutant argued equivalent that a run catches is shown, not hidden.
            text, n = G.survivors([("a", "caught 1/1"), ("c", "caught 1/1")], tri)
            self.assertEqual(n, 0)
            self.assertIn("caught though argued equivalent 1.", text)
            self.assertIn("| a | caught 1/1 | argued equivalent, yet caught", text)
            f.write_text('[equivalent]\n"a" = "x"\n[open]\n"a" = "y"\n')
            with self.assertRaisesRegex(G.MutgenError, "both equivalent and open: a"):
                G.load_triage(f)
            f.write_text('[maybe]\n"a" = "x"\n')
            with self.assertRaisesRegex(G.MutgenError, "unknown table"):
                G.load_triage(f)


if __name__ == "__main__":
    unittest.main()
