# SPDX-License-Identifier: GPL-2.0
"""A boot as a LAVA job: its definition, its device, and its records.

`sfp boot` boots through LAVA when BOOT_BACKEND=lava: the same
kernel, initramfs, command line and QEMU options as a direct boot go into
a job definition (deploy to tmpfs, boot qemu, test monitors) and the
rendered device configuration a dispatcher without a server needs, and
`lava-run` runs it. LAVA labs (KernelCI's among them) accept the same
job definition; a server takes it with `lavacli jobs submit`.

The job has two namespaces. 'vm' boots QEMU and watches the console for
KUnit's KTAP; 'guest' opens the guest's own port (QEMU writes it to a
file, read with tail -F) and watches its TAP. QEMU also logs the whole
console to a file, so the harness parses the same console.log and
guest.log as after a direct boot, and its Result is made the same way;
LAVA's own records are a second count of the same cases, checked
against the logs (lava_check). LAVA's 'pass' for the job means only that
the job completed.

Traps met here: the console reaches LAVA with '\\r\\r\\n' line ends, and a
pattern is tried as text arrives, so a case name is matched only up to
the white space that ends it, never up to a newline; a monitor reads the
connection of its own namespace.
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re

KUNIT_START = "KTAP version 1"
# scripts/guest/init prints this to the console after the built-in KUnit
# suites ran, and the guest's port gets sfp-begin:/sfp-done around the tests.
KUNIT_END = "sfp: guest .* up"
GUEST_START = "sfp-begin:"
GUEST_END = "sfp-done"
RESULT_LINE = r"\b(?P<result>not ok|ok) \d+ "
# The device type of the local lab's devices (sfp_lab, harness/lava/).
LAB_DEVICE_TYPE = "sfp-qemu"


def _timeout(seconds: int) -> dict:
    return {"seconds": int(seconds)}


def device(qemu: str, options: list[str], guest_log: str) -> dict:
    """The rendered device configuration of one local QEMU device."""
    return {
        "device_type": "qemu",
        "available_architectures": ["x86_64"],
        "constants": {
            "failure_retry": 1,
            "boot_retry": 0,
            "kernel-start-message": "Linux version [0-9]",
            "shutdown-message": "reboot: Restarting system",
            "default-shell-prompt": "sfp-no-shell # ",
            "spawn_maxread": 4092,
        },
        "commands": {"connections": {"guest": {"connect": f"tail -n +1 -F {guest_log}"}}},
        "actions": {
            "deploy": {"connections": {"serial": None}, "methods": {"image": None}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": {"command": qemu, "options": options}},
                                 "new_connection": None}},
        },
        "timeouts": {"actions": {}, "connections": {}},
    }


def qemu_options(base: list[str], console_log: str, guest_log: str) -> list[str]:
    """QEMU's options for the device: the console on stdio for LAVA and
    logged whole to CONSOLE_LOG by QEMU, the guest's port to GUEST_LOG."""
    return base + ["-monitor", "none",
                   "-chardev", f"stdio,id=con,signal=off,logfile={console_log}",
                   "-serial", "chardev:con", "-serial", f"file:{guest_log}"]


def job(name: str, kernel: str, initrd: str, append: str, timeout_s: int) -> dict:
    """The job definition: one boot, KUnit on the console, the guest's TAP."""
    if '"' in append:
        raise ValueError("the kernel command line may not contain '\"'")
    return {
        "job_name": name,
        "device_type": "qemu",
        "visibility": "public",
        "priority": "medium",
        "context": {"arch": "x86_64"},
        "timeouts": {"job": _timeout(timeout_s + 120), "action": _timeout(timeout_s),
                     "connection": _timeout(60)},
        "actions": [
            {"deploy": {"namespace": "vm", "to": "tmpfs", "timeout": _timeout(120),
                        "images": {
                            "kernel": {"image_arg": f'-kernel {{kernel}} -append "{append}"',
                                       "url": f"file://{kernel}"},
                            "initrd": {"image_arg": "-initrd {initrd}",
                                       "url": f"file://{initrd}"}}}},
            {"boot": {"namespace": "vm", "method": "qemu", "media": "tmpfs",
                      "timeout": _timeout(120)}},
            _monitor("vm", "kunit", KUNIT_START, KUNIT_END, r"\w+", timeout_s),
            {"boot": {"namespace": "guest", "method": "new_connection", "connection": "guest",
                      "timeout": _timeout(60)}},
            _monitor("guest", "guest", GUEST_START, GUEST_END, r"[\w.:-]+", timeout_s),
        ],
    }


def _monitor(namespace: str, name: str, start: str, end: str, case: str, timeout_s: int) -> dict:
    """A test action that records every TAP result line between START and
    END; CASE is what a case name may hold, matched up to the white space
    after it."""
    return {"test": {"namespace": namespace, "timeout": _timeout(timeout_s),
                     "monitors": [{"name": name, "start": start, "end": end,
                                   "pattern": RESULT_LINE + f"(?P<test_case_id>{case})\\s",
                                   "fixupdict": {"ok": "pass", "not ok": "fail"}}]}}


def write_job(out: pathlib.Path, name: str, kernel: pathlib.Path, initrd: pathlib.Path,
              append: str, timeout_s: int, console: pathlib.Path, guest: pathlib.Path,
              machine: list[str], server: bool = False, qemu: str = "qemu-system-x86_64") -> None:
    """OUT/job.yaml (and, for lava-run, OUT/device.yaml) for one boot:
    MACHINE's QEMU options, the console logged to CONSOLE and the guest's
    port to GUEST. SERVER: a job for the lab's device type (sfp_lab),
    which takes the options and the log directory from the job's context
    and has no device file. ValueError for what cannot be a job."""
    if timeout_s < 1:
        raise ValueError("the timeout wants seconds, 1 or more")
    out.mkdir(parents=True, exist_ok=True)
    console, guest = console.resolve(), guest.resolve()
    definition = job(name, str(kernel.resolve()), str(initrd.resolve()), append, timeout_s)
    if server:
        if console.parent != guest.parent or (console.name, guest.name) != ("console.log",
                                                                            "guest.log"):
            raise ValueError("a lab job wants DIR/console.log and DIR/guest.log")
        definition["device_type"] = LAB_DEVICE_TYPE
        definition["context"].update({"extra_options": machine, "sfp_dir": str(console.parent)})
        write_yaml(out / "job.yaml", definition)
        return
    write_yaml(out / "job.yaml", definition)
    write_yaml(out / "device.yaml", device(qemu, qemu_options(machine, str(console), str(guest)),
                                           str(guest)))


def write_yaml(path: pathlib.Path, obj: dict) -> None:
    """YAML is a superset of JSON: the standard library writes it."""
    path.write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")


@dataclasses.dataclass
class LavaRecord:
    """What lava-run logged: the job's result, its cases, its errors."""
    job_result: str = "incomplete"
    job_error: str = ""
    error_type: str = ""
    cases: dict[str, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)
    actions: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)

    def count(self, definition: str) -> int:
        return len(self.cases.get(definition, []))

    def add(self, definition: str, case: str, result: str, meta: dict) -> None:
        """One result as LAVA records it: the job's own, an action's, or
        a test case's (named by the monitor's test_case_id)."""
        if definition == "lava":
            if case == "job":
                self.job_result = result
                self.job_error = str(meta.get("error_msg", ""))
                self.error_type = str(meta.get("error_type", ""))
            else:
                self.actions.append((case, result, json.dumps(meta.get("extra", {}))))
            return
        extra = meta.get("extra") or {}
        if isinstance(extra, list):  # a server's results list it
            extra = extra[0] if extra else {}
        self.cases.setdefault(definition, []).append((extra.get("test_case_id", case), result))

    @property
    def timed_out(self) -> bool:
        return "timed out" in self.job_error.lower() or self.error_type == "LAVATimeout" or any(
            "timed out" in e.lower() for e in self.errors)


def parse_log(path: pathlib.Path) -> LavaRecord:
    """lava-run's log: one JSON object per line ({dt, lvl, msg})."""
    rec = LavaRecord()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        rec.errors.append(f"no LAVA log {path}")
        return rec
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        lvl, msg = entry.get("lvl"), entry.get("msg")
        if lvl == "error":
            rec.errors.append(str(msg))
        if lvl != "results" or not isinstance(msg, dict):
            continue
        rec.add(msg.get("definition", ""), msg.get("case", ""), msg.get("result", ""), msg)
    return rec


KTAP_RESULT = re.compile(r"^\s*(?:\[[ 0-9.]*\]\s*)?(not ok|ok) \d+ (\w+)")
GUEST_RESULT = re.compile(r"\b(not ok|ok) \d+ ([\w.:-]+)\s")


def count_in_logs(console: pathlib.Path, guest: pathlib.Path) -> dict[str, int]:
    """The result lines LAVA's monitors should have seen, read from the
    files QEMU wrote: KTAP lines on the console between the first 'KTAP
    version 1' and the guest's first line, and the guest's TAP lines
    between sfp-begin: and sfp-done."""
    n = {"kunit": 0, "guest": 0}
    text = console.read_text(encoding="utf-8", errors="replace") if console.exists() else ""
    on = False
    for line in text.replace("\r", "").split("\n"):
        if not on and KUNIT_START in line:
            on = True
        elif on and re.search(KUNIT_END, line):
            break
        elif on and KTAP_RESULT.match(line):
            n["kunit"] += 1
    text = guest.read_text(encoding="utf-8", errors="replace") if guest.exists() else ""
    start, end = text.find(GUEST_START), text.find(GUEST_END)
    if start >= 0:
        body = text[start:end if end >= 0 else len(text)].replace("\r", "") + "\n"
        n["guest"] = len(GUEST_RESULT.findall(body))
    return n


def lava_check(rec: LavaRecord, console: pathlib.Path, guest: pathlib.Path) -> list[str]:
    """Where LAVA's records and the logs disagree (nothing: they agree)."""
    want = count_in_logs(console, guest)
    out = []
    for definition, n in want.items():
        if rec.count(definition) != n:
            out.append(f"LAVA recorded {rec.count(definition)} {definition} results, the logs "
                       f"hold {n}")
    return out


def boot_command(log: pathlib.Path) -> str:
    """The QEMU command line lava-run logged ('' when none): to boot the
    same guest by hand."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    for line in text.splitlines():
        if '"Boot command: ' in line:
            return line.split('"Boot command: ', 1)[1].rsplit('"', 1)[0].replace('\\"', '"')
    return ""


def report(rec: LavaRecord, console: pathlib.Path, guest: pathlib.Path,
           out: pathlib.Path) -> tuple[int, list[str]]:
    """LAVA's records into OUT/lava-results.tsv (rows of a results TSV),
    checked against the logs: the status (0; 2 for a timed-out job; 1,
    the cause in OUT/problem) and the summary's lines."""
    status = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}
    with open(out / "lava-results.tsv", "w", encoding="utf-8") as f:
        for definition, cases in rec.cases.items():
            for case, result in cases:
                f.write(f"lava\t{definition}\t{case}\t{status.get(result, 'ERROR')}\t\n")
    counts = ", ".join(f"{d} {rec.count(d)}" for d in ("kunit", "guest"))
    lines = [f"LAVA job: {rec.job_result}; results recorded: {counts}"]
    if rec.job_result != "pass":
        why = rec.job_error or (rec.errors[-1] if rec.errors else "no job result in the log")
        (out / "problem").write_text(why + "\n", encoding="utf-8")
        return (2 if rec.timed_out else 1), lines + [f"LAVA job failed: {why}"]
    disagree = lava_check(rec, console, guest)
    if disagree:
        (out / "problem").write_text("; ".join(disagree) + "\n", encoding="utf-8")
        return 1, lines + ["; ".join(disagree)]
    return 0, lines + [f"LAVA's records agree with the logs ({counts})"]
