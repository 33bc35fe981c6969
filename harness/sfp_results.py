# SPDX-License-Identifier: GPL-2.0
"""A boot's Result, read from the files sfp run leaves in its log
directory: results.tsv (source, suite, test, PASS|FAIL|SKIP|ERROR, note),
stage-times.tsv, qemu.cmd, boot.info, console.log and guest.log. Every
table, verdict and count is computed from Results; `sfp result LOGDIR`
prints one as JSON."""
from __future__ import annotations

import dataclasses
import itertools
import json
import pathlib
import re

# What counts as a splat on a guest console, for every boot (sfp boot,
# and the shell scripts through 'sfp get splat-re'): a panic, an oops, a
# WARN (lockdep's reports start with WARNING: too), a BUG (KASAN, soft
# lockup), UBSAN, a general protection fault, a call trace, an RCU stall,
# a hung task.
SPLAT_RE = re.compile(r"Kernel panic|Oops|WARNING:|BUG:|UBSAN:|general protection fault|"
                      r"Call Trace:|detected stalls|blocked for more than")


@dataclasses.dataclass(frozen=True)
class Case:
    source: str
    suite: str
    test: str
    status: str
    note: str = ""

    @property
    def name(self) -> str:
        return f"{self.suite}.{self.test}"

    @property
    def failed(self) -> bool:
        """Neither passed nor skipped (a FAIL, an ERROR, anything else)."""
        return self.status not in ("PASS", "SKIP")

    @property
    def precondition_skip(self) -> bool:
        """Skipped because its precondition could not be set up: no verdict."""
        return self.status == "SKIP" and self.note.startswith("precondition")


@dataclasses.dataclass
class Result:
    logdir: str
    cases: list[Case]
    stage_times: dict[str, int] = dataclasses.field(default_factory=dict)
    splats: list[str] = dataclasses.field(default_factory=list)
    qemu_cmd: str = ""
    boot: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        """The failed cases' names, each once (kunit.py's '(unfinished)' may repeat)."""
        return list(dict.fromkeys(c.name for c in self.cases if c.failed))

    @property
    def precondition_skips(self) -> list[str]:
        return [c.name for c in self.cases if c.precondition_skip]

    def counts(self) -> dict[str, int]:
        """PASS, FAIL and SKIP: anything neither passed nor skipped failed."""
        n = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for c in self.cases:
            n[c.status if c.status in ("PASS", "SKIP") else "FAIL"] += 1
        return n

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self) | {"counts": self.counts()}, indent=1)


def tsv_row(c: Case) -> str:
    """C as a row of a results TSV (read_tsv)."""
    return "\t".join((c.source, c.suite, c.test, c.status, c.note)) + "\n"


def read_tsv(path: pathlib.Path) -> list[Case]:
    """The rows of a results TSV; a missing file has none."""
    rows = [line.split("\t", 4) for line in _lines(path)]
    return [Case(r[0], r[1], r[2], r[3], r[4] if len(r) > 4 else "") for r in rows if len(r) >= 4]


def first_splats(console: pathlib.Path, limit: int = 5) -> list[str]:
    """The first LIMIT splat lines of CONSOLE, without their timestamps."""
    found = (ln for ln in _lines(console) if SPLAT_RE.search(ln))
    return [re.sub(r"^\[[ 0-9.]*\] ", "", ln.replace("\r", ""))
            for ln in itertools.islice(found, limit)]


def splat_context(console: pathlib.Path, after: int = 25) -> str:
    """The first splat line of CONSOLE and the AFTER lines after it, or ''."""
    lines = _lines(console)
    i = next((i for i, ln in enumerate(lines) if SPLAT_RE.search(ln)), None)
    return "" if i is None else "".join(ln + "\n" for ln in lines[i:i + after + 1])


def read(logdir: pathlib.Path) -> Result:
    """The Result of the boot whose logs are in LOGDIR."""
    res = Result(logdir=str(logdir), cases=read_tsv(logdir / "results.tsv"))
    for line in _lines(logdir / "stage-times.tsv"):
        name, _, secs = line.rpartition("\t")
        if name and secs.isdigit():
            res.stage_times[name] = int(secs)
    res.splats = first_splats(logdir / "console.log")
    res.qemu_cmd = "\n".join(_lines(logdir / "qemu.cmd"))
    for word in text(logdir / "boot.info").split():
        key, eq, val = word.partition("=")
        if eq:
            res.boot[key] = val
    return res


def compare(a: Result, b: Result) -> list[str]:
    """What differs between two boots' cases; a precondition skip is no
    verdict, so it matches a pass."""
    def verdicts(r: Result) -> dict[str, str]:
        return {c.name: ("PASS" if c.precondition_skip else c.status) for c in r.cases}
    va, vb = verdicts(a), verdicts(b)
    out = [f"no cases in {a.logdir if not va else b.logdir}"] if not va or not vb else []
    out += [f"{name}: only in {a.logdir}" for name in sorted(va.keys() - vb.keys())]
    out += [f"{name}: only in {b.logdir}" for name in sorted(vb.keys() - va.keys())]
    return out + [f"{name}: {va[name]} in {a.logdir}, {vb[name]} in {b.logdir}"
                  for name in sorted(va.keys() & vb.keys()) if va[name] != vb[name]]


def text(path: pathlib.Path) -> str:
    """A log's text ('' when the file is missing: a boot that stopped early)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _lines(path: pathlib.Path) -> list[str]:
    return text(path).splitlines()
