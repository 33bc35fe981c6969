# SPDX-License-Identifier: GPL-2.0
"""A boot's report: its test streams parsed by the tree's kunit.py, merged.

A boot leaves LOGDIR/console.log (the guest console: KUnit's KTAP from
the built-in suites) and LOGDIR/guest.log (the second serial port: each
guest program's TAP between 'sfp-begin: NAME' and 'sfp-end: NAME rc=N').
Every stream is parsed with TREE's tools/testing/kunit/kunit.py parse
--json, the kernel's own parser; the kselftest program's stream (from
run_kselftest.sh) gives one result per test program, and the per-case
streams nested in it under '# ' are parsed too. The cases are merged by
`sfp summarize` (harness/sfp_summary.py) into one table ending in
'N skipped' and 'N passed, N failed', and written to RESULTS.tsv.

Besides the test streams:
  - a KUnit case that ran for a second or more without being marked slow
    (KUnit's 'Test should be marked slow' line) is a failure;
  - a kernel configured with KUnit suites whose console has no KTAP is an
    error;
  - a guest program that exited non-zero with no failed case is a
    failure;
  - a boot run as a LAVA job (LOGDIR/lava/lava-results.tsv) whose
    records disagree with the cases the guest listed, case by case and
    after the skip rule below, is a failure: a 'lava records' row for
    each disagreement;
  - the project's guest meets every prerequisite, so a skip is a failure,
    unless the test's skip reason starts 'precondition:' (it could not set
    a precondition up in time): that stays a skip, neither a pass nor a
    failure of the mechanism.

Files written to LOGDIR, beside RESULTS.tsv: kunit.ktap (the console
that is parsed: ktap_headers_clean), kunit.json, guest-NAME.tap,
guest-NAME.json, guest-rc.tsv, kselftest-TEST.tap and .json,
kselftest-list, each stream's kunit.py output (NAME.parsed), extra.tsv
(the rows above that have no TAP) and precondition-skips.
"""
from __future__ import annotations

import pathlib
import re
import subprocess
from typing import NamedTuple

from harness import sfp_lava
from harness import sfp_results
from harness import sfp_summary
from harness import sfp_errors

_KUNIT_CONFIG = re.compile(r"^CONFIG_[A-Z0-9_]*KUNIT_TEST=y", re.M)
# The guest's end of its list of the KUnit cases (scripts/guest/init).
_KUNIT_LISTED = "sfp-cases-end: kunit"
# ok N NAME # SKIP precondition: ...  (NAME absent in 6.1's harness)
_PRECOND = re.compile(r"^[\s#]*ok [0-9]+ (?:- )?(?:(.*?) )?# SKIP precondition:")
_KSFT_TEST = re.compile(r"^# selftests: [^:]*: ")
_KSFT_DONE = re.compile(r"^(not )?ok [0-9]+ selftests: ")
_KSFT_RUN = re.compile(r"^#  RUN  +([^ ]+) \.\.\.$")
_KSFT_SKIP = re.compile(r"^ok [0-9]+ # SKIP")


class ReportError(sfp_errors.Failed):
    """A log directory or tree that cannot be reported on."""


class GuestProgram(NamedTuple):
    """A guest program that finished, and its exit status."""
    name: str
    rc: str


def _text(lines: list[str]) -> str:
    return "".join(ln + "\n" for ln in lines)


def split_guest(text: str) -> tuple[list[GuestProgram], dict[str, str]]:
    """The guest programs that finished (name, exit status), in order, and
    the TAP of every program that began (one that never ended has TAP but
    no status)."""
    done: list[GuestProgram] = []
    taps: dict[str, list[str]] = {}
    name = ""
    for line in lines_of(text.replace("\r", "")):
        f = line.split() + ["", ""]
        if line.startswith("sfp-begin: "):
            name = f[1]
            taps[name] = []
        elif line.startswith("sfp-end: "):
            done.append(GuestProgram(f[1], f[2][3:]))
            name = ""
        elif name:
            taps[name].append(line)
    return done, {n: _text(ls) for n, ls in taps.items()}


def split_kselftest(tap: str) -> list[tuple[str, str]]:
    """run_kselftest.sh's stream nests each test program's own KTAP under
    '# ', which kunit.py parse reads as comments: the nested streams,
    unprefixed, one per test program. The 6.1 harness prints a skipped
    case as 'ok N # SKIP reason', without its name (the parser takes it
    for a missing case): the name is put back from the '#  RUN  NAME ...'
    line before it."""
    out: list[tuple[str, list[str]]] = []
    name, case = "", ""
    for line in lines_of(tap):
        if _KSFT_TEST.match(line):
            name = line.split()[-1]
            out.append((name, []))
        elif name and _KSFT_DONE.match(line):
            name = ""
        elif name and line.startswith("# "):
            nested = line[2:]
            if m := _KSFT_RUN.match(nested):
                case = m[1]
            if _KSFT_SKIP.match(nested) and case:
                nested = nested.replace(" # SKIP", f" {case} # SKIP", 1)
            out[-1][1].append(nested)
    return [(n, _text(ls)) for n, ls in out]


def precondition_skips(texts: list[str]) -> list[str]:
    """The tests that skipped because a precondition could not be set up
    in time (their reason starts 'precondition:'), sorted."""
    return sorted({m[1] or "(unnamed)" for text in texts
                   for m in map(_PRECOND.match, lines_of(text.replace("\r", ""))) if m})


def slow_rows(console: str) -> list[str]:
    """KUnit's complaint about a case not marked slow, as failure rows."""
    return ["kunit\tkunit\t(speed)\tFAIL\t" + ln.strip(" \t") + "\n" for ln in lines_of(console)
            if "Test should be marked slow" in ln]


_KTAP_VERSION = re.compile(r"^\s*K?TAP version [0-9]+")
_KTAP_HEADER = re.compile(r"^\s*(# |[0-9]+\.\.[0-9]+)")
_KTAP_PLAN = re.compile(r"^\s*[0-9]+\.\.[0-9]+")
_KTAP_RESULT = re.compile(r"^\s*(not )?ok [0-9]+")


def kunit_part(console: str) -> str:
    """The console up to the guest's first line of its own ('sfp-cases:',
    'sfp-begin:'): a guest with no port of its own (a portable LAVA job)
    writes its TAP there, after KUnit's, and kunit.py parse would read it
    as more of KUnit's."""
    cut = re.search(r"^sfp-(begin|cases): ", console, re.M)
    return console[:cut.start()] if cut else console


def ktap_headers_clean(console: str) -> str:
    """The console with every line that is not KTAP left out of each
    test's header (from its 'KTAP version' line to its plan): a kernel
    message printed there (the initramfs's "Freeing initrd memory", the
    TSC's refined calibration on a slow debug kernel) makes kunit.py
    parse misnumber the suite and every one after it. Lines are judged
    after the prefix the first 'KTAP version' line has, as kunit.py
    strips it; elsewhere kunit.py keeps such lines as a test's log."""
    out, prefix, header = [], None, False
    for ln in console.split("\n"):
        body = ln.replace("\r", "")
        if prefix is None and "KTAP version" in body:
            prefix = len(body.split("KTAP version")[0])
        if prefix is not None:
            body = body[prefix:]
        if _KTAP_VERSION.match(body):
            header = True
        elif header and _KTAP_HEADER.match(body):
            header = not _KTAP_PLAN.match(body)
        elif header and _KTAP_RESULT.match(body):
            header = False  # a stream without a plan
        elif header:
            continue
        out.append(ln)
    return "\n".join(out)


def lines_of(text: str) -> list[str]:
    """Lines as awk, sed and grep see them: split at newlines only."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


# The logs are copied and matched byte for byte (a serial port can carry
# any byte): latin-1 maps each byte to one character and back.
def _read(path: pathlib.Path) -> str:
    return path.read_text(encoding="latin-1")


def _write(path: pathlib.Path, text: str) -> None:
    path.write_text(text, encoding="latin-1")


def lava_rows(lava: pathlib.Path, inputs: list[tuple[str, str, str]],
              done: list[GuestProgram], timing: set[str]) -> list[str]:
    """LAVA's records of a boot (LAVA's lava-results.tsv), compared case by
    case with what kunit.py read from the streams whose cases the guest
    listed (INPUTS; a record of a source none of them is from is left out),
    the skip rule applied as in the Result (TIMING: the precondition
    skips), and the guest programs' exit statuses (DONE): a failed row for
    each disagreement. A row named '(...)' is the harness's own (kunit.py's
    '(unfinished)' for a test the log ended before, '(no tests)',
    '(parse)'): the guest prints no case line for it, so LAVA has no
    record of it to compare."""
    cases = [c for source, suite, path in inputs
             for c in sfp_summary.from_json(source, suite, pathlib.Path(path))
             if not c.test.startswith("(")]
    logs = [(c.source, c.name, c.status) for c in sfp_summary.apply_no_skips(cases, timing)]
    # The guest adds a failed PROGRAM.exit_status for a non-zero exit.
    logs += [("guest", f"{p.name}.exit_status", "FAIL") for p in done if p.rc not in ("0", "")]
    sources = {source for source, _, _ in inputs} | ({"guest"} if done else set())
    # A record of any other definition than 'guest' is a KUnit suite's.
    recorded = [(c.suite, c.test, c.status) for c in sfp_results.read_tsv(lava)
                if (c.suite if c.suite == "guest" else "kunit") in sources]
    return [f"lava\trecords\t{i + 1}\tFAIL\t{d}\n"
            for i, d in enumerate(sfp_lava.disagreements(recorded, logs))]


def report(logdir: pathlib.Path, tree: pathlib.Path, obj: pathlib.Path,
           out: pathlib.Path | None = None) -> int:
    """Parse a boot's streams, write its files and RESULTS.tsv, print the
    table; the exit status of `sfp summarize` (1 if anything failed)."""
    logdir = logdir.resolve()  # kunit.py runs in the tree's top directory
    console_log = logdir / "console.log"
    if not console_log.is_file():
        raise ReportError(f"no console.log in '{logdir}'")
    kunit_py = tree / "tools" / "testing" / "kunit" / "kunit.py"
    if not kunit_py.is_file():
        raise ReportError(f"'{tree}' has no tools/testing/kunit/kunit.py")
    extra: list[str] = []
    inputs: list[tuple[str, str, str]] = []
    # The streams whose cases the guest printed as case lines, which LAVA
    # records: not the KUnit cases of a guest that never listed them, nor
    # a program's that did not end (that failure has its own row).
    listed: list[tuple[str, str, str]] = []

    def parse(name: str, source: str, suite: str, ext: str = "tap", lists: bool = True) -> None:
        with open(logdir / f"{name}.parsed", "wb") as log:
            subprocess.run(["python3", str(kunit_py), "parse", f"--json={logdir / name}.json",
                            str(logdir / f"{name}.{ext}")], stdout=log, stderr=subprocess.STDOUT,
                           check=False)
        inputs.append((source, suite, str(logdir / f"{name}.json")))
        if lists:
            listed.append(inputs[-1])

    console = _read(console_log)
    if "KTAP version" in console:
        _write(logdir / "kunit.ktap", ktap_headers_clean(kunit_part(console)))
        parse("kunit", "kunit", "kunit", "ktap", _KUNIT_LISTED in console)
        extra += slow_rows(console)
    elif (obj / ".config").is_file() and _KUNIT_CONFIG.search(_read(obj / ".config")):
        extra.append("kunit\tkunit\t(boot)\tERROR\tKUnit tests are configured but the "
                     "console has no KTAP\n")

    guest_log = logdir / "guest.log"
    done: list[GuestProgram] = []
    if guest_log.is_file():
        done, taps = split_guest(_read(guest_log))
        for name, tap in taps.items():
            _write(logdir / f"guest-{name}.tap", tap)
        if not done and not taps:
            extra.append("guest\tguest\t(programs)\tERROR\tno guest program began "
                         f"(no 'sfp-begin:' line in {guest_log})\n")
        _write(logdir / "guest-rc.tsv", "".join(f"{p.name}\t{p.rc}\n" for p in done))
        ended = {p.name: p.rc for p in done}
        # A program that never ended (the guest hung or was stopped in it):
        # the cases it printed before are results all the same, and a row
        # says it did not end.
        for name in [p.name for p in done] + [n for n in taps if n not in ended]:
            parse(f"guest-{name}", "guest", name, lists=name in ended)
            if name == "kselftest":
                tests = split_kselftest(_read(logdir / "guest-kselftest.tap"))
                _write(logdir / "kselftest-list", "".join(f"{t}\n" for t, _ in tests))
                for t, tap in tests:
                    _write(logdir / f"kselftest-{t}.tap", tap)
                    parse(f"kselftest-{t}", "guest", t, lists=name in ended)
            if name not in ended:
                extra.append(f"guest\t{name}\t(unfinished)\tERROR\tthe program did not end "
                             f"(no 'sfp-end: {name}' line in {guest_log})\n")
                continue
            js = logdir / f"guest-{name}.json"
            failed = js.is_file() and ('"FAIL"' in _read(js) or '"ERROR"' in _read(js))
            if ended[name] != "0" and not failed:
                extra.append(f"guest\t{name}\t(exit status)\tFAIL\texited with {ended[name]}\n")
    texts = [console] + [_read(p) for p in sorted(logdir.glob("kselftest-*.tap"))] + \
        [_read(p) for p in sorted(logdir.glob("guest-*.tap"))]
    timing = precondition_skips(texts)
    skips = logdir / "precondition-skips"
    _write(skips, "".join(f"{n}\n" for n in timing))
    lava = logdir / "lava" / "lava-results.tsv"
    if lava.is_file():
        extra += lava_rows(lava, listed, done, set(timing))
    _write(logdir / "extra.tsv", "".join(extra))

    info = logdir / "boot.info"
    title = "In-guest results: " + (_read(info).rstrip("\n") if info.is_file()
                                    else "boot info missing")
    return sfp_summary.summarize(title, inputs, [str(logdir / "extra.tsv")],
                                 str(out or logdir / "results.tsv"), True, str(skips))
