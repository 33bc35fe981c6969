# SPDX-License-Identifier: GPL-2.0
"""The cost mode's host side: the plugin's symbol file and the figures."""
import pathlib
import shutil
import struct
import subprocess
import tempfile
import unittest

from harness import sfp_cost

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "cost-run"
TEXT = 0xffffffff81000000


def make_elf(text: bytes, addr: int = TEXT) -> bytes:
    """A little-endian ELF64 with a null section, .text and .shstrtab."""
    names = b"\0.text\0.shstrtab\0"
    text_off = 64
    names_off = text_off + len(text)
    shoff = names_off + len(names)
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x28, shoff)
    struct.pack_into("<HHH", head, 0x3a, 64, 3, 2)
    sh = [bytes(64),
          struct.pack("<IIQQQQIIQQ", 1, 1, 6, addr, text_off, len(text), 0, 0, 16, 0),
          struct.pack("<IIQQQQIIQQ", 7, 3, 0, 0, names_off, len(names), 0, 0, 1, 0)]
    return bytes(head) + text + names + b"".join(sh)


def call(at: int, target: int) -> bytes:
    return b"\xe8" + struct.pack("<i", target - (at + 5))


class Symbols(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def obj(self, text: bytes, smap: str) -> pathlib.Path:
        (self.tmp / "vmlinux").write_bytes(make_elf(text))
        (self.tmp / "System.map").write_text(smap)
        return self.tmp

    def test_entry_return_sites_and_interrupts(self):
        target = TEXT + 0x100
        # a call to the target at 0x10 and at 0x40; a call elsewhere at 0x20;
        # an 0xe8 inside another instruction's bytes at 0x30
        text = bytearray(b"\x90" * 0x200)
        text[0x10:0x15] = call(TEXT + 0x10, target)
        text[0x20:0x25] = call(TEXT + 0x20, TEXT + 0x180)
        text[0x30:0x33] = b"\x48\xc7\xe8"
        text[0x40:0x45] = call(TEXT + 0x40, target)
        text[0x110:0x115] = call(TEXT + 0x110, TEXT + 0x1c0)  # the entry calls the balance
        smap = (f"{target:x} t sched_balance_newidle\n"
                f"{TEXT + 0x180:x} t other\n"
                f"{TEXT + 0x1c0:x} t sched_balance_rq\n"
                "ffffffff81400000 T __entry_text_start\n"
                "ffffffff81400100 T asm_exc_page_fault\n"
                "ffffffff81400200 T asm_sysvec_apic_timer_interrupt\n"
                "ffffffff81400280 T asm_load_gs_index\n"
                "ffffffff81400300 T __entry_text_end\n"
                "ffffffff81500000 T asm_outside_entry_text\n")
        s = sfp_cost.symbols(self.obj(bytes(text), smap))
        self.assertEqual(s.name, "sched_balance_newidle")
        self.assertEqual(s.entry, target)
        self.assertEqual(s.rets, (TEXT + 0x15, TEXT + 0x45))
        self.assertEqual(s.irqs, (0xffffffff81400100, 0xffffffff81400200))
        self.assertEqual(s.balance, TEXT + 0x1c0)
        self.assertEqual(s.text().splitlines()[:4], [f"entry {target:x}", f"balance {TEXT + 0x1c0:x}",
                                                     f"ret {TEXT + 0x15:x}", f"ret {TEXT + 0x45:x}"])

    def test_old_name(self):
        target = TEXT + 0x80
        text = bytearray(b"\x90" * 0x100)
        text[0:5] = call(TEXT, target)
        text[0x84:0x89] = call(TEXT + 0x84, TEXT + 0x90)
        smap = (f"{target:x} t newidle_balance\n{TEXT + 0x90:x} t load_balance\n"
                "ffffffff81400000 T __entry_text_start\n"
                "ffffffff81400010 T asm_common_interrupt\nffffffff81400300 T __entry_text_end\n")
        self.assertEqual(sfp_cost.symbols(self.obj(bytes(text), smap)).name, "newidle_balance")

    def test_refusals(self):
        with self.assertRaisesRegex(sfp_cost.CostError, "build the kernel first"):
            sfp_cost.symbols(self.tmp)
        entry = "ffffffff81400000 T __entry_text_start\nffffffff81400300 T __entry_text_end\n"
        with self.assertRaisesRegex(sfp_cost.CostError, "has neither of sched_balance_newidle"):
            sfp_cost.symbols(self.obj(b"\x90" * 16, "ffffffff81000000 t other\n" + entry))
        with self.assertRaisesRegex(sfp_cost.CostError, "has neither of sched_balance_rq"):
            sfp_cost.symbols(self.obj(b"\x90" * 16, f"{TEXT:x} t sched_balance_newidle\n" + entry))
        funcs = f"{TEXT:x} t sched_balance_newidle\n{TEXT + 8:x} t sched_balance_rq\n"
        with self.assertRaisesRegex(sfp_cost.CostError, "no interrupt entries"):
            sfp_cost.symbols(self.obj(b"\x90" * 16, funcs + entry))
        irq = "ffffffff81400010 T asm_common_interrupt\n"
        with self.assertRaisesRegex(sfp_cost.CostError, "no direct call of sched_balance_newidle"):
            sfp_cost.symbols(self.obj(b"\x90" * 16, funcs + entry + irq))
        # the entry is called, but calls no sched_balance_rq (a clone of it does)
        text = bytearray(b"\x90" * 0x40)
        text[0x20:0x25] = call(TEXT + 0x20, TEXT)
        text[0x30:0x35] = call(TEXT + 0x30, TEXT + 8)
        with self.assertRaisesRegex(sfp_cost.CostError, "makes no direct call of sched_balance_rq"):
            sfp_cost.symbols(self.obj(bytes(text), funcs + f"{TEXT + 0x10:x} t other\n" + entry +
                                      irq))
        (self.tmp / "vmlinux").write_bytes(b"not an elf file")
        with self.assertRaisesRegex(sfp_cost.CostError, "not a little-endian 64-bit ELF"):
            sfp_cost.elf_text(self.tmp / "vmlinux")


class Noinline(unittest.TestCase):
    FAIR = ("static int sched_balance_newidle(struct rq *this_rq, struct rq_flags *rf);\n"
            "\nint a;\nint b;\nint c;\n\n/* the balance */\n"
            "static int sched_balance_newidle(struct rq *this_rq, struct rq_flags *rf)\n"
            "{LOCK}\n\treturn 0;\n}\n\nint d;\n")

    def apply(self, fair: str) -> str:
        """The patch applied by git apply to a repository holding fair."""
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "kernel" / "sched").mkdir(parents=True)
        (tmp / "kernel" / "sched" / "fair.c").write_text(fair)
        (tmp / "p").write_text(sfp_cost.noinline_patch(fair))
        subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
        subprocess.run(["git", "apply", "p"], cwd=tmp, check=True)
        return (tmp / "kernel" / "sched" / "fair.c").read_text()

    def test_definition_only(self):
        for lock in ("", "\t__must_hold(__rq_lockp(this_rq))\n"):  # 7.1's annotation
            fair = self.FAIR.replace("{LOCK}", lock + "{")
            got = self.apply(fair)
            # the declaration stays; only the definition's line changes
            self.assertEqual(got, fair.replace(
                "static int sched_balance_newidle(struct rq *this_rq, struct rq_flags *rf)\n" + lock + "{",
                "static noinline int sched_balance_newidle(struct rq *this_rq, "
                "struct rq_flags *rf)\n" + lock + "{"))
        old = self.FAIR.replace("sched_balance_newidle", "newidle_balance").replace("{LOCK}", "{")
        self.assertIn("static noinline int newidle_balance(", self.apply(old))

    def test_refusal(self):
        with self.assertRaisesRegex(sfp_cost.CostError, "0 definitions"):
            sfp_cost.noinline_patch("int sched_balance_newidle;\n")
        twice = self.FAIR.replace("{LOCK}", "{") * 2
        with self.assertRaisesRegex(sfp_cost.CostError, "2 definitions"):
            sfp_cost.noinline_patch(twice)


class Figures(unittest.TestCase):
    def test_one_boot(self):
        f = sfp_cost.figures(FIXTURE / "raw" / "baseline-smp2-r1")
        self.assertEqual(sorted(f), ["cgpool", "mix", "pool", "rr"])
        rr = f["rr"]
        # marks 0 and 1 of the plugin's log; idle entries and lb_count of
        # the lb line, transactions of the count line
        self.assertEqual((rr["skips"], rr["skip_insns"]), (280 - 195, 109367 - 102256))
        self.assertEqual((rr["balances"], rr["balance_insns"]), (370 - 253, 746708 - 553654))
        self.assertEqual(rr["insns"], (109367 - 102256) + (746708 - 553654))
        self.assertAlmostEqual(rr["insns_per_skip"], (109367 - 102256) / (280 - 195))
        self.assertAlmostEqual(rr["insns_per_balance"], (746708 - 553654) / (370 - 253))
        self.assertAlmostEqual(rr["insns_per_idle"], rr["insns"] / 201)
        self.assertAlmostEqual(rr["balances_per_idle"], (370 - 253) / 201)
        # schedstat's attempts, read next to the marks: the same calls
        self.assertEqual(rr["balances_vs_schedstat"], 1.0)
        self.assertAlmostEqual(rr["share_permille"],
                               1000 * rr["insns"] / (1235581179 - 1221786699))
        self.assertAlmostEqual(rr["request_insns"],
                               ((1235581179 - 1221786699) + (2888307877 - 288096534)) / 52)
        self.assertNotIn("insns_per_request", f["pool"])  # no requests in the pool
        # patched's cgpool balanced in no call: no figure per balance
        self.assertNotIn("insns_per_balance",
                         sfp_cost.figures(FIXTURE / "raw" / "patched-smp2-r1")["cgpool"])

    def test_missing_mark_leaves_the_workload_out(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(FIXTURE / "raw" / "patched-smp2-r1", tmp / "b")
        cost = (FIXTURE / "raw" / "patched-smp2-r1.cost").read_text().splitlines()
        (tmp / "b.cost").write_text("\n".join(ln for ln in cost if "mark=3 " not in ln))
        self.assertEqual(sorted(sfp_cost.figures(tmp / "b")), ["cgpool", "pool", "rr"])

    def test_report(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(FIXTURE, tmp / "run")
        self.assertEqual(sfp_cost.write_report(tmp / "run", "./sfp bench --cost"), 0)
        report = (tmp / "run" / "report.md").read_text()
        self.assertIn("| rr | instructions per call that skipped | 84 (84-84; 0.0%) "
                      "| 83 (83-83; 0.0%) |", report)
        self.assertIn("| cgpool | instructions per call that balanced | 2156 (2156-2156; 0.0%) "
                      "| - |", report)
        self.assertIn("differ from schedstat's attempts: 0 of 8.", report)
        rows = (tmp / "run" / "cost.tsv").read_text().splitlines()
        self.assertEqual(len(rows), 1 + 2 * 4)
        head = rows[0].split("\t")
        self.assertEqual(len(head), len(set(head)))  # one column per name
        rr = dict(zip(head, next(r for r in rows if r.startswith("baseline\tsmp2\t1\trr\t"))
                      .split("\t")))
        self.assertEqual((rr["kernel"], rr["kernel_insns"]), ("baseline", str(1235581179 - 1221786699)))
        # a boot without its plugin log has no figures: status 1
        (tmp / "run" / "raw" / "patched-smp2-r1.cost").unlink()
        self.assertEqual(sfp_cost.write_report(tmp / "run", "./sfp bench --cost"), 1)

    def test_window_median(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(FIXTURE / "raw" / "baseline-smp2-r1", tmp / "b")
        cost = (FIXTURE / "raw" / "baseline-smp2-r1.cost").read_text()
        # rr's window is marks 0 and 1: skips 5 calls of 80, 1 of 82 before
        # it, then 3 of 80 and 2 of 90 in it; balances 1 of 1200 before it,
        # then 1200, 1500, 1800 and 5000 in it; the cut-short line of mark 1
        # is left out, not read as a histogram
        (tmp / "b.cost").write_text(
            cost + "sfp-cost hist=0 kind=skip 80:5 82:1 end\n"
            "sfp-cost hist=0 kind=balance 1200:1 end\n"
            "sfp-cost hist=1 kind=skip 80:8 82:1 90:2 end\n"
            "sfp-cost hist=1 kind=balance 1200:2 1500:1 1800:1 5000:1 end\n"
            "sfp-cost hist=1 kind=balance 1200:2 1500:1\n"
            "sfp-cost hist=0 kind=skip 80:99 end\n")  # a mark runs once: the first line wins
        h = sfp_cost.read_log(tmp / "b.cost")[1]
        self.assertEqual(h[(1, "balance")], {1200: 2, 1500: 1, 1800: 1, 5000: 1})
        f = sfp_cost.figures(tmp / "b")
        self.assertEqual(f["rr"]["median_skip"], 80.0)        # 80 80 80 90 90
        self.assertEqual(f["rr"]["median_balance"], 1650.0)  # 1200 1500 | 1800 5000
        self.assertNotIn("median_skip", f["mix"])  # no histograms at its marks
        self.assertEqual(sfp_cost.window_median({7: 2}, {7: 2}), None)
        self.assertEqual(sfp_cost.window_median({}, {3: 1, 4: 1, 9: 1}), 4.0)

    def test_across(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(FIXTURE, tmp / "run")
        sfp_cost.write_report(tmp / "run", "./sfp bench --cost")
        (tmp / "run" / "meta.tsv").write_text("command\tCMD\nversion\t6.12.118\n"
                                              "newidle_features\tmeasure\nbusy_loops\t2\n")
        t = sfp_cost.across([tmp / "run"])
        self.assertIn("| run | 6.12.118 | measure | 2 | smp2 | rr | calls that balanced per idle "
                      "entry | 0.582 (0.582-0.582; 0.0%) |", t)
        # one repetition per cell: none is counted for the 1% line
        self.assertIn("newly-idle instructions per idle entry: 0 of 0;", t)
        # baseline's boot again as a second repetition: its 4 workloads' cells repeat
        raw = tmp / "run" / "raw"
        shutil.copytree(raw / "baseline-smp2-r1", raw / "baseline-smp2-r2")
        shutil.copyfile(raw / "baseline-smp2-r1.cost", raw / "baseline-smp2-r2.cost")
        sfp_cost.write_report(tmp / "run", "./sfp bench --cost")
        t = sfp_cost.across([tmp / "run"], sfp_cost.WORKLOADS)
        self.assertIn("newly-idle instructions per idle entry: 4 of 4;", t)
        self.assertIn("Made from: `CMD` (run)", t)
        self.assertIn("| run | 3 | 12 | 12 |", t)  # boots, windows, balances = attempts
        with self.assertRaisesRegex(sfp_cost.CostError, "no cost.tsv"):
            sfp_cost.across([tmp])

    def test_bench_lines_insns(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(FIXTURE, tmp / "run")
        sfp_cost.write_report(tmp / "run", "./sfp bench --cost")
        (tmp / "run" / "meta.tsv").write_text("command\tCMD\n")
        sfp = str(pathlib.Path(sfp_cost.ROOT) / "sfp")
        r = subprocess.run([sfp, "bench-lines", "--insns", str(tmp / "run")],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("| run | kernel | newly-idle features |"))
        r = subprocess.run([sfp, "bench-lines", "--insns", "--plot", str(tmp), str(tmp / "run")],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("takes neither --cost nor --plot", r.stderr)

    def test_same(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        for r in ("quiet", "busy"):
            shutil.copytree(FIXTURE, tmp / r)
            sfp_cost.write_report(tmp / r, "./sfp bench --cost")
            (tmp / r / "meta.tsv").write_text(f"command\tCMD-{r}\nbusy_loops\t"
                                              f"{2 if r == 'busy' else 0}\nseeds\t1\n")
        t = sfp_cost.same([tmp / "quiet", tmp / "busy"])
        self.assertIn("| busy | 2 | 1 | not recorded | 8 | 8 | 0.00% | 0.00% |", t)
        self.assertIn("Made from: `CMD-quiet` (quiet); `CMD-busy` (busy)", t)
        # one counter of one window changed: that window is no longer identical
        tsv = tmp / "busy" / "cost.tsv"
        rows = tsv.read_text().splitlines()
        head = rows[0].split("\t")
        i = next(n for n, r in enumerate(rows) if r.startswith("patched\tsmp2\t1\trr\t"))
        cells = rows[i].split("\t")
        col = head.index("kernel_insns")
        cells[col] = str(int(cells[col]) + 1)
        rows[i] = "\t".join(cells)
        tsv.write_text("\n".join(rows) + "\n")
        self.assertIn("| busy | 2 | 1 | not recorded | 8 | 7 |",
                      sfp_cost.same([tmp / "quiet", tmp / "busy"]))
        # a figure 10% off shows as its largest difference
        col = head.index("insns_per_idle")
        cells[col] = str(float(cells[col]) * 1.1)
        rows[i] = "\t".join(cells)
        tsv.write_text("\n".join(rows) + "\n")
        self.assertIn("| busy | 2 | 1 | not recorded | 8 | 7 | 10.00% |",
                      sfp_cost.same([tmp / "quiet", tmp / "busy"]))
        # other seeds are named; the images' hashes compared
        img = "images_baseline\tbzImage:aa\nimages_patched\tbzImage:bb\n"
        with open(tmp / "quiet" / "meta.tsv", "a") as f:
            f.write(img)
        (tmp / "busy" / "meta.tsv").write_text("seeds\t4\n" + img)
        self.assertIn("| 4 (the first run: 1) | the same |",
                      sfp_cost.same([tmp / "quiet", tmp / "busy"]))
        (tmp / "busy" / "meta.tsv").write_text("seeds\t1\n" + img.replace("bb", "cc"))
        self.assertIn("| 1 | differ |", sfp_cost.same([tmp / "quiet", tmp / "busy"]))
        with self.assertRaisesRegex(sfp_cost.CostError, "no cost.tsv"):
            sfp_cost.same([tmp / "quiet", tmp])
        sfp = str(pathlib.Path(sfp_cost.ROOT) / "sfp")
        r = subprocess.run([sfp, "bench-lines", "--same", str(tmp / "quiet"), str(tmp / "busy")],
                           capture_output=True, text=True, check=False)
        self.assertEqual((r.returncode, r.stderr.strip()),
                         (2, "sfp: error: --same compares cost-mode runs: give --insns too"))
        r = subprocess.run([sfp, "bench-lines", "--insns", "--same", str(tmp / "quiet")],
                           capture_output=True, text=True, check=False)
        self.assertIn("give two RUNs or more", r.stderr)

    def test_pulls(self):
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        run = tmp / "run"
        run.mkdir()
        rows = ["kernel\ttopology\trep\tworkload\tgained"]
        for rep, a, b in ((1, 10, 10), (2, 20, 18), (3, 10, 11)):
            rows += [f"baseline\tsmp4\t{rep}\tmix\t{a}", f"patched\tsmp4\t{rep}\tmix\t{b}",
                     f"baseline\tsmp4\t{rep}\trr\t99"]
        (run / "cost.tsv").write_text("\n".join(rows) + "\n")
        t = "\n".join(sfp_cost._pulls([run]))
        pw = sfp_cost.power([1.0, 0.9, 1.1])
        self.assertIn(f"| run | smp4 | 10 (10-20; 100.0%) | 11 (10-18; 72.7%) | "
                      f"1.00 (0.9-1.10; 20.0%) | {100 * pw.detectable_loss:.0f}% | "
                      f"{pw.reps_for_loss} | - |", t)
        # a run without the column: no table
        (run / "cost.tsv").write_text("kernel\ttopology\trep\tworkload\nbaseline\tsmp4\t1\tmix\n")
        self.assertEqual(sfp_cost._pulls([run]), [])

    def test_latency(self):
        rr = sfp_cost.figures(FIXTURE / "raw" / "baseline-smp2-r1")["rr"]
        self.assertEqual((rr["lat_p50_us"], rr["lat_p99_us"]), (37756, 56054))
        self.assertNotIn("lat_p50_us", sfp_cost.figures(FIXTURE / "raw" / "baseline-smp2-r1")
                         ["pool"])

    def test_cell(self):
        self.assertEqual(sfp_cost._cell([100.0, 110.0, 90.0]), "100 (90-110; 20.0%)")
        self.assertEqual(sfp_cost._cell([2.5, 2.0]), "2.25 (2.00-2.50; 22.2%)")
        self.assertEqual(sfp_cost._cell([]), "-")


if __name__ == "__main__":
    unittest.main()
